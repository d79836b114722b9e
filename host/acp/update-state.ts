/**
 * The state one session's ACP mapping keeps between events (updates.ts,
 * replay.ts): the calls announced, the text said inside tasks, the usage
 * figures.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { UsageLimits } from "../../sdk/protocol.ts"

export type Update = acp.SessionUpdate

/** What one session's mapping remembers between events. */
export interface UpdateState {
  /** Tool calls announced so far, by id. */
  readonly calls: Map<string, CallSeen>
  /** Text and reasoning that happened inside a task, by task id. */
  readonly taskText: Map<string, string>
  /** The item each task's text last came from (a new item starts a new paragraph). */
  readonly taskItem: Map<string, string>
  /** The last context figures, for usage_update. */
  context?: { used: number; size: number }
  /** The session's cost so far (the CLI's figure is per process). */
  cost: number
  /** Cost of the process the last run reported from (a restart begins again at 0). */
  lastProcessCost: number
  limits?: UsageLimits
  /** Usage windows already warned of near their limit, as `id@resets_at` (usage-limits.ts). */
  readonly warned: Set<string>
  /** Numbers the message ids of lines the agent writes itself (notices). */
  notes: number
  /** What the client declared it shows (its capabilities); nothing optional by default. */
  readonly client: ClientShows
}

/** The optional updates a client declared (ACP MUST NOT send them otherwise). */
export interface ClientShows {
  /** `session.notices`: `notice` updates instead of chat lines. */
  readonly notices: boolean
  /** `session.compaction`: `compaction_update` instead of a chat line. */
  readonly compaction: boolean
  /** `_meta.terminal_output`: a command call as a terminal card (Zed's display extension). */
  readonly terminalCards: boolean
}

export const NOTHING_OPTIONAL: ClientShows = { notices: false, compaction: false, terminalCards: false }

/** What a client's capabilities declare it shows. */
export const clientShows = (caps: acp.ClientCapabilities): ClientShows => ({
  notices: caps.session?.notices != null,
  compaction: caps.session?.compaction != null,
  terminalCards: (caps._meta as { terminal_output?: unknown } | null | undefined)?.terminal_output === true,
})

export interface CallSeen {
  output: string
  readonly parent: string | undefined
  /** Shown as a terminal card (terminal-cards.ts). */
  readonly card?: boolean
}

export const makeUpdateState = (client: ClientShows = NOTHING_OPTIONAL): UpdateState => ({
  client,
  calls: new Map(),
  taskText: new Map(),
  taskItem: new Map(),
  warned: new Set(),
  cost: 0,
  lastProcessCost: 0,
  notes: 0,
})

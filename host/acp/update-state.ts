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
  /** Numbers the message ids of lines the agent writes itself (notices). */
  notes: number
}

export interface CallSeen {
  output: string
  readonly parent: string | undefined
}

export const makeUpdateState = (): UpdateState => ({
  calls: new Map(),
  taskText: new Map(),
  taskItem: new Map(),
  cost: 0,
  lastProcessCost: 0,
  notes: 0,
})

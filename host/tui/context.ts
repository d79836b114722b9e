/**
 * The chat's one state record and what its parts (sessions.ts, pending.ts,
 * the commands in commands/) may use of the chat: the screen, the runs, the
 * agent's calls, and the few actions that touch the input loop. app.ts's
 * Chat implements ChatContext; the parts take it as a parameter.
 */
import type { styleText } from "node:util"
import type { AutoContinueMode } from "../core/auto-continue.ts"
import type { AgentMethod, AgentMethodParams, AgentMethodResult, Host } from "../core/host.ts"
import type {
  AgentEvent,
  AgentInfo,
  ImageInput,
  SessionInfoPayload,
  SessionSummary,
  SkillInfo,
} from "../../sdk/protocol.ts"
import type { Renderer } from "./render.ts"
import type { RunTracker } from "./runs.ts"
import type { Screen } from "./screen.ts"

export type Format = Parameters<typeof styleText>[0]

export interface ChatOptions {
  /** The host and the agent to talk to; without them the chat waits for `connect`. */
  readonly host?: Host
  readonly agentId?: string
  /** The workspace: the session's cwd. */
  readonly cwd: string
  /** The host's data folder: its installed plugins (/plugins). */
  readonly dataDir?: string
  /** How the person started this front end, for the commands it suggests ("cvg", "npm start --"). */
  readonly program?: string
  readonly input: NodeJS.ReadableStream & { isTTY?: boolean }
  readonly output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  readonly color: boolean
  /** Option values for new sessions (model, effort, approval_mode). */
  readonly sessionOptions?: Readonly<Record<string, string | boolean>>
  /** Values the person chose last time (preferences.ts): used unless a flag says otherwise and still offered. */
  readonly remembered?: Readonly<Record<string, string>>
  /** Keep a value chosen with /model or /effort for the next start. */
  readonly remember?: (optionId: string, value: string) => void
  /** Start by continuing this stored session (its id) rather than a new one. */
  readonly resume?: string
  /** Approvals answered at the prompt, or by policy (one-shot runs). Default "ask". */
  readonly approvals?: "ask" | "allow" | "deny"
  /** Questions answered at the prompt, or with each question's first option. Default "ask". */
  readonly questions?: "ask" | "first"
  /** Why approvals are answered by policy, shown beside each automatic answer. */
  readonly policyReason?: string
  /** The prompt history file (kept across restarts); none: history lasts the chat. */
  readonly historyFile?: string
  /**
   * Stop the plugin and load the enabled one again (after /account add, /plugins
   * enable or disable); undefined when none is enabled. None: applies at the next start.
   */
  readonly reload?: () => Promise<Host | undefined>
  /** The environment the CLI runs in (which approval modes it allows). Default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Send one "continue" when a blocked run's usage window reopens (host/core/auto-continue.ts). Default off. */
  readonly autoContinue?: AutoContinueMode
}

/** What the chat knows about the agent and the session it drives. */
export interface ChatState {
  /** Undefined until the host has started, and while no enabled plugin provides an agent. */
  host: Host | undefined
  agentId: string
  /** The workspace: the session's cwd. */
  cwd: string
  /** What the agent said about itself; undefined: ask again when needed. */
  info: AgentInfo | undefined
  /** The last info the agent gave, for the status line while a fresh one is not asked for. */
  knownInfo: AgentInfo | undefined
  sessionId: string | undefined
  sessionInfo: SessionInfoPayload | undefined
  /** Option values for the next session this chat opens. */
  sessionOptions: Record<string, string | boolean>
  renderer: Renderer
  /** Events of the agent held while a session opens (its id is not known yet). */
  held: AgentEvent[] | undefined
  /** The prompts of this conversation, by item id (for /rewind). */
  userItems: Array<{ id: string; text: string }>
  /** The last /sessions list (numbers name its entries). */
  lastList: ReadonlyArray<SessionSummary> | undefined
  skills: ReadonlyArray<SkillInfo> | undefined
  /** Images that go with the next prompt. */
  attachments: Array<{ image: ImageInput; path: string }>
  /** The agent said full access cannot run here (its notice's words): /approval full is refused with them. */
  fullRefused: string | undefined
}

/** One call to the agent the chat talks to. */
export type AgentCall = <M extends AgentMethod>(
  method: M,
  ...params: AgentMethodParams<M> extends undefined ? [] : [AgentMethodParams<M>]
) => Promise<AgentMethodResult<M>>

/** The approvals and questions waiting for the person (pending.ts's PendingAnswers). */
export interface Pending {
  readonly waiting: boolean
  readonly clear: () => void
  readonly resolved: (id: string) => void
  readonly onApproval: (e: Extract<AgentEvent, { type: "ApprovalRequested" }>) => void
  readonly onQuestion: (e: Extract<AgentEvent, { type: "QuestionAsked" }>) => void
  /** What the next typed line answers, if anything waits. */
  readonly prompt: () => string | undefined
  readonly answer: (line: string) => void
}

export interface ChatContext {
  readonly options: ChatOptions
  readonly state: ChatState
  readonly screen: Screen
  readonly runs: RunTracker
  readonly pending: Pending
  readonly paint: (format: Format, text: string) => string
  /** Lines the front end writes (after whatever the agent's stream still holds). */
  readonly say: (...lines: ReadonlyArray<string>) => void
  /** One line: what failed, and what to do. */
  readonly fail: (error: unknown, hint: string) => void
  /** Run one call under a spinner; a failure is one line with what to do, and undefined. */
  readonly attempt: <A>(
    label: string | undefined,
    hint: string,
    run: () => Promise<A>,
  ) => Promise<A | undefined>
  readonly call: AgentCall
  /** A renderer for this chat (`fresh`: a new session, whose cost starts at nothing). */
  readonly newRenderer: (fresh?: boolean) => Renderer
  readonly updateStatus: () => void
  readonly updatePrompt: () => void
  /** An agent event, as if it had just arrived (the ones held while a session opened). */
  readonly onEvent: (e: AgentEvent) => void
  /** Send a prompt (a steer while a run is open); `note` is said before the run's lines. */
  readonly send: (text: string, note?: string) => Promise<void>
  /** Leave the chat with this exit code. */
  readonly quit: (code: number) => void
  /** Stop the plugin and load it again (options.reload), listening to the new host. */
  readonly reloadHost: (reload: () => Promise<Host | undefined>) => Promise<void>
}

/** Said when something needs an agent and no enabled plugin provides one. */
export const NO_AGENT =
  "no enabled plugin provides an agent: /plugins lists the installed ones, /plugins enable <id> turns one on"

export const oneLine = (error: unknown): string =>
  (error instanceof Error ? error.message : String(error)).split("\n").find((l) => l.trim() !== "") ??
  "unknown error"

/** The host, for a command that runs only with an agent (runSlashLine checks before it runs). */
export const hostOf = (ctx: ChatContext): Host => {
  if (!ctx.state.host) throw new Error(NO_AGENT)
  return ctx.state.host
}

/** A chat's state before it knows anything of its agent. */
export const initialState = (options: ChatOptions, renderer: Renderer): ChatState => ({
  host: undefined,
  agentId: options.agentId ?? "claude",
  cwd: options.cwd,
  info: undefined,
  knownInfo: undefined,
  sessionId: undefined,
  sessionInfo: undefined,
  sessionOptions: { ...options.sessionOptions },
  renderer,
  held: undefined,
  userItems: [],
  lastList: undefined,
  skills: undefined,
  attachments: [],
  fullRefused: undefined,
})

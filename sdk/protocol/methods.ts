/** What the host passes to a provider's methods and what they answer. */
import type { SessionInfoPayload } from "./shapes.ts"

export interface PluginTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: Readonly<Record<string, unknown>>
}

export interface SessionParams {
  /** The workspace: the process's working directory and first --add-dir. */
  readonly cwd: string
  /** Plugin tools the host offers to this session (served over MCP). */
  readonly tools?: ReadonlyArray<PluginTool>
  /** Host instructions appended to the CLI's system prompt. */
  readonly instructions?: string
  /** Option values (option id → value) chosen in the composer. */
  readonly options?: Readonly<Record<string, string | boolean>>
  /** The session's own launch settings (a front end's session options), kept for each of its launches. */
  readonly launch?: SessionLaunch
}

/** Launch settings a front end gives one session (ACP's `_meta.claudeCode.options`, `_meta.systemPrompt`). */
export interface SessionLaunch {
  /** Replaces the agent's own system prompt. */
  readonly systemPrompt?: string
  /** Appended to the system prompt (before the host's instructions). */
  readonly appendSystemPrompt?: string
  /** Tools that run without asking (permission rules such as `Bash(git *)`). */
  readonly allowedTools?: ReadonlyArray<string>
  /** The most model turns one prompt may take. */
  readonly maxTurns?: number
  /** Absolute directories the session may work in beyond its workspace. */
  readonly additionalDirectories?: ReadonlyArray<string>
}

export interface CreateSessionParams extends SessionParams {
  /** The host's id for the new chat. The plugin makes one when absent. */
  readonly sessionId?: string
}

export interface ResumeSessionParams extends SessionParams {
  readonly sessionId: string
}

export interface ForkSessionParams extends SessionParams {
  /** The chat to fork from. */
  readonly sessionId: string
  /** The id of the new chat. The plugin makes one when absent. */
  readonly newSessionId?: string
}

export interface SessionSummary {
  readonly session_id: string
  readonly title: string
  readonly created_at?: string
  readonly modified_at: string
  readonly cwd?: string
  readonly branch?: string
  readonly size_bytes: number
}

export interface SessionPage {
  readonly sessions: ReadonlyArray<SessionSummary>
  /** Pass back to get the next page; absent on the last page. */
  readonly cursor?: string
}

export interface ListSessionsParams {
  readonly cwd?: string
  readonly cursor?: string
  readonly limit?: number
}

export interface ImageInput {
  readonly media_type: string
  /** Base64 data. */
  readonly data: string
}

export interface PromptParams {
  readonly sessionId: string
  readonly text: string
  readonly images?: ReadonlyArray<ImageInput>
  /** The host's id for this prompt (its transcript item); used by rollback. */
  readonly itemId?: string
  /** The host's delivery id; echoed on RunStarted and the run's end. */
  readonly deliveryId?: string
  /** A skill the user picked: sent as the closing `/name` block. */
  readonly skill?: string
}

export interface PromptAccepted {
  readonly run_id: string
  /** true when it joined a run already in progress (steering). */
  readonly steered: boolean
  /** The native UUID the input was written with; `input_delivery` names it. */
  readonly input_uuid?: string
}

/**
 * What the agent can prove about one written input (a prompt or a steer):
 * `picked_up` only on native evidence that the model worked on it;
 * `not_picked_up` when the agent ended its turn without working on it (the
 * input is in no run's work: the host may resend it); `unknown` when the
 * evidence cannot come (the process ended first): the host's own policy
 * decides, the agent never replays it.
 */
export type InputDeliveryState = "picked_up" | "not_picked_up" | "unknown"

/** The native evidence of a pickup: a correlated first reply, thinking tokens, a result with model work. */
export type PickupEvidence = "reply" | "thinking_tokens" | "result"

/** Why a run is blocked: a usage window, paid extra usage exhausted, or credits needed (no timed reset). */
export type UsageBlockReason = "window" | "overage" | "credits_required"

/**
 * Whose quota a session runs on, as far as the agent can prove it. Only
 * agreeing first-party evidence (the process's own account, the sign-in
 * status run in the same folder and environment) yields `identified`; the
 * `key` is equal for two sessions only when all of it matched.
 */
export type RecoveryIdentity =
  | {
      readonly identified: true
      readonly key: string
      readonly email: string
      readonly organization_id: string
      readonly config_dir: string
    }
  | { readonly identified: false; readonly reason: string }

export type ApprovalDecision = "allow" | "allow_always" | "deny"

export interface ApprovalAnswer {
  readonly sessionId: string
  readonly approvalId: string
  readonly decision: ApprovalDecision
  readonly message?: string
  /** Edited tool input, when the host lets the user change it. */
  readonly updatedInput?: Readonly<Record<string, unknown>>
}

export interface QuestionAnswer {
  readonly sessionId: string
  readonly questionId: string
  /** Question text → the chosen label(s). */
  readonly answers: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** Free text, when the user wrote their own answer. */
  readonly response?: string
}

export interface SessionOpened {
  readonly session_id: string
  readonly info: SessionInfoPayload
}

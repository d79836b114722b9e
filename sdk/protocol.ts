/**
 * The agent protocol: what a host sees of an agent provider.
 *
 * A plugin registers providers (`api.agents.provide`); the host calls the
 * methods below and listens to the events each provider emits. Every payload
 * here is plain data (JSON-safe), so a host may run the plugin in another
 * process or sandbox. Field names follow the host's own spelling: snake_case
 * for event and item payloads, camelCase for AgentInfo (as the host declares
 * it). Documented for plugin authors in docs/agent-protocol.md.
 */
import type { Effect } from "effect"

// ---------------------------------------------------------------------------
// Agent information and options

export type AgentStatus = "Ready" | "AuthRequired" | "Unavailable"

export interface OptionChoice {
  readonly value: string
  readonly label: string
  readonly description?: string
  /** The host does not carry this choice into new chats (ultracode). */
  readonly transient?: boolean
  /** An icon name the host shows next to the choice (e.g. "workflow"). */
  readonly mark?: string
}

export interface AgentOption {
  readonly id: string
  readonly label: string
  readonly kind: "select" | "toggle"
  readonly choices?: ReadonlyArray<OptionChoice>
  readonly default?: string | boolean
  /** The value applies at the next start of the session process, not live. */
  readonly appliesAtNextStart?: boolean
  /** For a model-scoped option (effort): the choices per model value. */
  readonly choicesByModel?: Readonly<Record<string, ReadonlyArray<OptionChoice>>>
}

export interface ModelEntry {
  readonly value: string
  readonly label: string
  readonly description?: string
  /** Other spellings that select this model (the CLI's picker values). */
  readonly aliases?: ReadonlyArray<string>
  readonly efforts?: ReadonlyArray<string>
  readonly contextWindow?: number
  readonly supportsFastMode?: boolean
}

export interface SkillInfo {
  readonly name: string
  readonly description?: string
  readonly source: "user" | "project" | "cli"
  /** Only the user may start it (the model may not). */
  readonly manual_only?: boolean
  /** Not offered in the picker the user drives (only the model starts it). */
  readonly hidden_from_picker?: boolean
}

export interface UsageWindow {
  /** e.g. five_hour, seven_day, seven_day_overage_included */
  readonly id: string
  readonly label: string
  /** Share of the window used, 0 to 1. */
  readonly used: number
  /** When the window resets, ISO 8601. */
  readonly resets_at?: string
  readonly status?: "allowed" | "allowed_warning" | "rejected"
}

export interface UsageLimits {
  readonly windows: ReadonlyArray<UsageWindow>
  /** Credits that reopen a window early. Claude has none: always empty. */
  readonly reset_credits: ReadonlyArray<never>
  /** The window responsible for a rejection, if any. */
  readonly blocking_window?: string
  readonly updated_at: string
}

export interface AgentInfo {
  readonly id: string
  readonly name: string
  readonly version?: string
  readonly status: AgentStatus
  readonly statusMessage?: string
  /** Signed-in address and plan, the only free text the host shows. */
  readonly description?: string
  /** Two agents with the same key can continue each other's chats. */
  readonly continuationKey?: string
  readonly usageLimits?: UsageLimits
  /** Words in a prompt that change how a turn runs (e.g. "ultracode"). */
  readonly promptKeywords?: ReadonlyArray<{ readonly word: string; readonly description: string }>
  readonly models: ReadonlyArray<ModelEntry>
  readonly options: ReadonlyArray<AgentOption>
  readonly skills?: ReadonlyArray<SkillInfo>
  readonly maintenance?: Maintenance
  readonly capabilities: {
    readonly rollback: boolean
    readonly fork: boolean
    readonly cancelTask: boolean
    readonly steering: boolean
    readonly images: boolean
  }
}

export interface Maintenance {
  readonly version?: string
  readonly manager?: "native" | "npm"
  readonly latest?: string
  readonly can_update: boolean
  readonly path?: string
}

// ---------------------------------------------------------------------------
// Method parameters and results

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

// ---------------------------------------------------------------------------
// Shared shapes: tool calls, tasks, plans, transcript items

export type ToolKind = "execute" | "edit" | "read" | "search" | "fetch" | "think" | "task" | "mcp" | "other"

export type ToolStatus = "Running" | "Completed" | "Failed" | "Cancelled"

export interface ToolCall {
  readonly id: string
  readonly name: string
  readonly kind: ToolKind
  readonly title: string
  readonly input: unknown
  /**
   * A unified diff (Edit, MultiEdit, NotebookEdit). At ToolCallStarted it is
   * built from the call's input (the edited fragment alone: its line numbers
   * count from the fragment); at ToolCallFinished, once the CLI's result is
   * in, it is the CLI's own patch of the file, with the file's true line
   * numbers and context (Write of an existing file too).
   */
  readonly diff?: string
  /** The whole new file (Write). */
  readonly new_text?: string
  readonly path?: string
  readonly status: ToolStatus
  readonly output?: unknown
  readonly output_text?: string
  readonly exit_code?: number
  readonly task_id?: string
}

export type TaskStatus = "Running" | "Waiting" | "Completed" | "Failed" | "Cancelled"

export interface WorkflowPhase {
  readonly index: number
  readonly title: string
}

export interface WorkflowInfo {
  readonly name?: string
  readonly run_id?: string
  readonly phases: ReadonlyArray<WorkflowPhase>
  readonly result?: string
  readonly log?: ReadonlyArray<string>
}

export interface TaskInfo {
  readonly id: string
  readonly parent_task_id?: string
  readonly title: string
  readonly name?: string
  readonly model?: string
  readonly prompt?: string
  readonly status: TaskStatus
  readonly summary?: string
  readonly activity?: string
  readonly usage?: {
    readonly used_tokens?: number
    readonly tool_uses?: number
    readonly duration_ms?: number
  }
  readonly background?: boolean
  readonly workflow?: WorkflowInfo
  /** A workflow agent's phase title. */
  readonly phase?: string
}

export interface PlanEntry {
  readonly content: string
  readonly status: "pending" | "in_progress" | "completed"
  readonly active_form?: string
}

export interface RunUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_tokens?: number
  readonly cache_write_tokens?: number
  readonly thinking_tokens?: number
  readonly context_window?: number
  /** Tokens in the context at the end of the run (last assistant message). */
  readonly context_used?: number
  readonly cost_usd?: number
  readonly duration_ms?: number
  readonly num_turns?: number
}

export type TranscriptItem =
  | {
      readonly type: "user"
      readonly id: string
      readonly text: string
      readonly images?: number
      readonly task_id?: string
    }
  | { readonly type: "assistant"; readonly id: string; readonly text: string; readonly task_id?: string }
  | { readonly type: "reasoning"; readonly id: string; readonly text: string; readonly task_id?: string }
  | { readonly type: "tool_call"; readonly id: string; readonly call: ToolCall; readonly task_id?: string }
  | {
      readonly type: "plan"
      readonly id: string
      readonly entries: ReadonlyArray<PlanEntry>
      readonly task_id?: string
    }
  | {
      readonly type: "task"
      readonly id: string
      readonly task: TaskInfo
      readonly items: ReadonlyArray<TranscriptItem>
    }
  | { readonly type: "compacted"; readonly id: string; readonly summary: string }
  | { readonly type: "notice"; readonly id: string; readonly level: NoticeLevel; readonly text: string }

export interface SessionTranscript {
  readonly session_id: string
  readonly title?: string
  readonly items: ReadonlyArray<TranscriptItem>
}

export type NoticeLevel = "info" | "warning" | "error"

export interface SessionInfoPayload {
  readonly title?: string
  readonly cwd?: string
  readonly model?: string
  readonly permission_mode?: string
  readonly options?: Readonly<Record<string, string | boolean>>
}

// ---------------------------------------------------------------------------
// Events

interface EventBase {
  readonly session_id: string
  /** The run the event belongs to, when one is open. */
  readonly run_id?: string
  /** The task (subagent, workflow agent) the event happened in. */
  readonly task_id?: string
}

export type RunOutcome = "Completed" | "Failed" | "Cancelled"

export type AgentEvent =
  | (EventBase & {
      readonly type: "RunStarted"
      readonly run_id: string
      readonly delivery_ids?: ReadonlyArray<string>
    })
  | (EventBase & {
      readonly type: "RunEnded"
      readonly run_id: string
      readonly outcome: RunOutcome
      readonly usage?: RunUsage
      readonly error?: string
      readonly delivery_ids?: ReadonlyArray<string>
      /**
       * Why the model stopped, when the agent knows (Claude: the result's
       * `stop_reason`, e.g. end_turn, max_tokens, refusal). Optional and
       * additive: front ends that map stop reasons (ACP) read it when present.
       */
      readonly stop_reason?: string
    })
  | (EventBase & { readonly type: "TextDelta"; readonly item_id: string; readonly text: string })
  | (EventBase & { readonly type: "ReasoningDelta"; readonly item_id: string; readonly text: string })
  | (EventBase & { readonly type: "ToolCallStarted"; readonly call: ToolCall })
  | (EventBase & { readonly type: "output_delta"; readonly tool_call_id: string; readonly text: string })
  | (EventBase & { readonly type: "ToolCallFinished"; readonly call: ToolCall })
  | (EventBase & { readonly type: "Plan"; readonly entries: ReadonlyArray<PlanEntry> })
  | (EventBase & {
      readonly type: "ApprovalRequested"
      readonly approval_id: string
      readonly tool_call_id?: string
      readonly tool_name: string
      readonly title: string
      readonly input: unknown
      readonly description?: string
      readonly can_always?: boolean
    })
  | (EventBase & {
      readonly type: "approval_resolved"
      readonly approval_id: string
      readonly reason?: string
    })
  | (EventBase & {
      readonly type: "QuestionAsked"
      readonly question_id: string
      readonly questions: ReadonlyArray<Question>
    })
  | (EventBase & {
      readonly type: "question_resolved"
      readonly question_id: string
      readonly reason?: string
    })
  | (EventBase & { readonly type: "Task"; readonly task: TaskInfo })
  | (EventBase & { readonly type: "Compacted"; readonly summary: string })
  | (EventBase & { readonly type: "Skills"; readonly skills: ReadonlyArray<SkillInfo> })
  | (EventBase & { readonly type: "UsageLimits"; readonly limits: UsageLimits })
  | (EventBase & {
      readonly type: "usage_blocked"
      readonly run_id: string
      readonly window?: string
      /** The responsible window's own deadline; absent when unknown or never timed (credits_required). */
      readonly resets_at?: string
      readonly reason?: UsageBlockReason
      /** The responsible window's unified entry, when the agent reported one. */
      readonly window_usage?: UsageWindow
      readonly message: string
    })
  | (EventBase & {
      readonly type: "input_delivery"
      /** The native UUID (PromptAccepted.input_uuid). */
      readonly input_uuid: string
      readonly delivery_id?: string
      readonly state: InputDeliveryState
      readonly evidence?: PickupEvidence
      readonly reason?: string
    })
  | (EventBase & { readonly type: "recovery_identity"; readonly identity: RecoveryIdentity })
  | (EventBase & { readonly type: "Notice"; readonly level: NoticeLevel; readonly text: string })
  | (EventBase & { readonly type: "SessionInfo"; readonly info: SessionInfoPayload })
  | (EventBase & { readonly type: "UserMessage"; readonly item_id: string; readonly text: string })

export interface Question {
  readonly question: string
  readonly header?: string
  readonly multi_select: boolean
  readonly options: ReadonlyArray<{ readonly label: string; readonly description?: string }>
}

export type AgentEventType = AgentEvent["type"]

// ---------------------------------------------------------------------------
// The provider

/** A protocol error a host shows to the user: one clear line. */
export interface AgentFailure {
  readonly _tag: string
  readonly message: string
}

type Call<A> = Effect.Effect<A, AgentFailure>

/** What a plugin registers for each agent it serves. */
export interface AgentProvider {
  readonly id: string
  initialize(): Call<AgentInfo>
  createSession(params: CreateSessionParams): Call<SessionOpened>
  resumeSession(params: ResumeSessionParams): Call<SessionOpened>
  forkSession(params: ForkSessionParams): Call<SessionOpened>
  readSession(params: { readonly sessionId: string; readonly cwd: string }): Call<SessionTranscript>
  listSessions(params: ListSessionsParams): Call<SessionPage>
  closeSession(params: { readonly sessionId: string }): Call<void>
  /** Delete a stored chat: gone from every list and refused on load; SessionNotFound for an unknown id. */
  deleteSession(params: { readonly sessionId: string }): Call<void>
  prompt(params: PromptParams): Call<PromptAccepted>
  cancel(params: { readonly sessionId: string }): Call<void>
  cancelTask(params: { readonly sessionId: string; readonly taskId: string }): Call<void>
  setOption(params: {
    readonly sessionId: string
    readonly optionId: string
    readonly value: string | boolean
  }): Call<void>
  /** Rewind the conversation to just before the given item. */
  rollback(params: { readonly sessionId: string; readonly itemId: string }): Call<void>
  answerApproval(params: ApprovalAnswer): Call<void>
  answerQuestion(params: QuestionAnswer): Call<void>
  getUsage(): Call<UsageLimits>
  signIn(): Call<{ readonly url?: string; readonly message: string }>
  signOut(): Call<void>
  update(): Call<{ readonly version?: string; readonly message: string }>
  /** Release every process and listener. */
  dispose(): Effect.Effect<void>
}

/** What the host gives a provider: its event sink. */
export interface AgentHost {
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  /** Tell the host that this agent's info changed (status, limits, skills). */
  readonly infoChanged: (agentId: string) => Effect.Effect<void>
}

/** The events a provider emits to its host, one union tagged by `type`. */
import type { SkillInfo, UsageLimits, UsageWindow } from "./info.ts"
import type { InputDeliveryState, PickupEvidence, RecoveryIdentity, UsageBlockReason } from "./methods.ts"
import type { NoticeLevel, PlanEntry, RunUsage, SessionInfoPayload, TaskInfo, ToolCall } from "./shapes.ts"

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

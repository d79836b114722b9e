/** The shapes methods and events share: tool calls, tasks, plans, usage and transcript items. */

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

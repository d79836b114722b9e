/**
 * Subagent and workflow task snapshots: the mutable state the mapper keeps
 * per task, the TaskInfo the host sees (cleaned and copied), and the rules
 * that turn CLI fields into TaskInfo fields (title, status, answer).
 */
import type { TaskInfo, TaskStatus, WorkflowInfo } from "./sdk/protocol.ts"

export type TaskKind = "agent" | "workflow" | "workflow_agent"

/** What the mapper knows about one task; `snapshot` turns it into TaskInfo. */
export interface TaskState {
  readonly id: string
  readonly kind: TaskKind
  agentId?: string
  /** The CLI's own task id (`task_*` frames): the agentId, or a workflow's id. */
  cliTaskId?: string
  parentTaskId?: string
  title?: string
  name?: string
  model?: string
  prompt?: string
  /** The status the CLI reported; `waiting` overrides it while an approval is open. */
  status: TaskStatus
  waiting: boolean
  summary?: string
  activity?: string
  usedTokens?: number
  toolUses?: number
  durationMs?: number
  background?: boolean
  workflow?: WorkflowInfo
  phase?: string
  /** Not announced (skip_transcript / ambient). */
  hidden: boolean
  finished: boolean
  /** The spawning call's answer (a foreground agent's whole report). */
  answer?: string
  lastText?: string
  error?: string
  /** The last snapshot sent to the host, to send only changes. */
  sent?: TaskInfo
  /** The `workflow` that `sent.workflow` was copied from: while it is the same object, the copy is reused. */
  sentWorkflowOf?: WorkflowInfo
}

export const newTaskState = (id: string, kind: TaskKind): TaskState => ({
  id,
  kind,
  status: "Running",
  waiting: false,
  hidden: false,
  finished: false,
})

const firstLine = (text: string): string => (text.trim().split("\n", 1)[0] ?? "").trim()

/** A task's title: the description, else the prompt's first line. */
export const taskTitle = (description?: string | null, prompt?: string | null): string | undefined => {
  const d = description?.trim()
  if (d) return d
  const p = prompt ? firstLine(prompt) : ""
  return p === "" ? undefined : p.length > 120 ? `${p.slice(0, 119)}…` : p
}

/** CLI task and workflow-run statuses (task_updated, task_notification, a run's record) → the host's. */
export const taskStatusOf = (status: string | null | undefined): TaskStatus | undefined => {
  switch (status) {
    case "pending":
    case "paused":
      return "Waiting"
    case "running":
      return "Running"
    case "completed":
      return "Completed"
    case "failed":
      return "Failed"
    case "killed":
    case "stopped":
    case "cancelled":
      return "Cancelled"
    default:
      return undefined
  }
}

export const isTerminal = (status: TaskStatus): boolean =>
  status === "Completed" || status === "Failed" || status === "Cancelled"

/** The summary by the notes' rules: progress while running; at the end the answer, else last text, else the error. */
const summaryOf = (state: TaskState): string | undefined => {
  if (!isTerminal(state.status)) return state.summary
  return (
    state.answer ??
    state.lastText ??
    (state.status === "Failed" ? (state.error ?? state.summary) : state.summary)
  )
}

/**
 * The TaskInfo of a state, without absent fields (built by assignment: this
 * runs for every task frame). `reuse` is a copy already made of this very
 * `state.workflow` object (workflow states are replaced, never changed in
 * place), taken instead of copying it again.
 */
export const snapshot = (state: TaskState, reuse?: WorkflowInfo): TaskInfo => {
  const info: Record<string, unknown> = { id: state.id }
  if (state.parentTaskId !== undefined) info.parent_task_id = state.parentTaskId
  info.title = state.title ?? state.name ?? "Agent"
  if (state.name !== undefined) info.name = state.name
  if (state.model !== undefined) info.model = state.model
  if (state.prompt !== undefined) info.prompt = state.prompt
  info.status = state.waiting && !isTerminal(state.status) ? "Waiting" : state.status
  const summary = summaryOf(state)
  if (summary !== undefined) info.summary = summary
  if (state.activity !== undefined) info.activity = state.activity
  if (state.usedTokens !== undefined || state.toolUses !== undefined || state.durationMs !== undefined) {
    const usage: Record<string, number> = {}
    if (state.usedTokens !== undefined) usage.used_tokens = state.usedTokens
    if (state.toolUses !== undefined) usage.tool_uses = state.toolUses
    if (state.durationMs !== undefined) usage.duration_ms = state.durationMs
    info.usage = usage
  }
  if (state.background !== undefined) info.background = state.background
  if (state.workflow !== undefined) info.workflow = reuse ?? copyWorkflow(state.workflow)
  if (state.phase !== undefined) info.phase = state.phase
  return info as unknown as TaskInfo
}

const copyWorkflow = (w: WorkflowInfo): WorkflowInfo => ({
  ...w,
  phases: w.phases.map((p) => ({ ...p })),
  ...(w.log === undefined ? {} : { log: [...w.log] }),
})

/** Structural equality of plain JSON data (snapshots): no strings built, no garbage. */
const same = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const ra = a as Record<string, unknown>
  const rb = b as Record<string, unknown>
  let count = 0
  for (const key in ra) {
    count++
    if (!same(ra[key], rb[key])) return false
  }
  for (const _ in rb) count--
  return count === 0
}

/** Structural equality of two snapshots (plain JSON data). */
export const sameTask = (a: TaskInfo | undefined, b: TaskInfo): boolean => a !== undefined && same(a, b)

/**
 * The snapshot to send when the state changed since the last one sent, else
 * undefined. Hidden tasks are never sent.
 */
export const changedSnapshot = (state: TaskState): TaskInfo | undefined => {
  if (state.hidden) return undefined
  // A workflow unchanged since the last snapshot shares that snapshot's copy: no copy, and `same` meets one object.
  const reuse =
    state.workflow !== undefined && state.workflow === state.sentWorkflowOf ? state.sent?.workflow : undefined
  const next = snapshot(state, reuse)
  if (sameTask(state.sent, next)) return undefined
  state.sent = next
  state.sentWorkflowOf = state.workflow
  return next
}

/**
 * A subagent's answer from its spawning Agent/Task call's result: the text
 * blocks of `tool_use_result.content` (harness notes dropped), else the
 * tool_result's own text. Background launches (`async_launched`) have none.
 */
export const spawnAnswer = (toolUseResult: unknown, resultText: string): string | undefined => {
  // A nested agent's result arrives as the bare content list, not wrapped in an object.
  const r = Array.isArray(toolUseResult)
    ? { content: toolUseResult }
    : typeof toolUseResult === "object" && toolUseResult !== null
      ? (toolUseResult as Record<string, unknown>)
      : {}
  if (r.status === "async_launched" || r.isAsync === true) return undefined
  if (Array.isArray(r.content)) {
    const texts = r.content.flatMap((block) => {
      const b = typeof block === "object" && block !== null ? (block as Record<string, unknown>) : {}
      if (b.type !== "text" || typeof b.text !== "string") return []
      const text = handBackReport(b.text)
      return text === "" ? [] : [text]
    })
    if (texts.length > 0) return texts.join("\n\n")
  }
  const text = handBackReport(resultText)
  return text === "" ? undefined : text
}

const HAND_BACK_MARK = "The report follows:\n"

/**
 * The agent's own report out of the CLI's hand-back framing: 2.1.332 wraps a
 * subagent's answer in a "[Subagent hand-back] … The report follows:" preface,
 * indents every report line by two spaces, and appends the agentId and usage
 * lines. Text without that framing is returned trimmed, tool-list note removed.
 */
export const handBackReport = (text: string): string => {
  const plain = text.replace(/<tools-used-before-summary>[\s\S]*?<\/tools-used-before-summary>\n?/g, "")
  const at = plain.indexOf(HAND_BACK_MARK)
  if (at < 0) return plain.trim()
  const report: string[] = []
  for (const line of plain.slice(at + HAND_BACK_MARK.length).split("\n")) {
    if (line.startsWith("agentId: ") || line.startsWith("<usage>")) break
    report.push(line.startsWith("  ") ? line.slice(2) : line)
  }
  return report.join("\n").trim()
}

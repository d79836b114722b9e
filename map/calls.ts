/**
 * Tool calls: started from `tool_use` blocks, finished from `tool_result`
 * blocks, their output lines (`system/informational`), and the plans the
 * todo and task tools give. Kinds, titles, diffs and results come from
 * tools.ts, the same classification the transcript reader uses.
 *
 * Rules (CLI 2.1.332):
 * - a call is started once per id; a finished call is forgotten (its output
 *   can be large), an agent call stays for late child frames;
 * - a result without its start still finishes a call (name "", kind other);
 * - the structured `tool_use_result` belongs to a frame's only tool result;
 * - a repeated output line of the same call is dropped;
 * - the task tools keep one list per task scope, changed by tools.ts's one
 *   rule (`applyTaskTool`), which the transcript reader follows too.
 */
import { excerpt } from "../bounds.ts"
import type { NoticeLevel, ToolCall } from "../sdk/protocol.ts"
import {
  applyTaskTool,
  describeToolCall,
  planFromTodoWrite,
  TaskList,
  type ToolDescription,
  type ToolResultInfo,
  toolResultOf,
} from "../tools.ts"
import { asString } from "../values.ts"
import type { ContentBlock, Informational } from "../wire.ts"
import { finishAgentCall, routeMessage } from "./agents.ts"
import { emit, type MapState, type Out, type Reducer } from "./state.ts"
import { agentTools } from "./tasks.ts"
import { launchWorkflow } from "./workflows.ts"

const taskListOf = (s: MapState, taskId: string | undefined): TaskList => {
  const key = taskId ?? ""
  let list = s.calls.taskLists.get(key)
  if (list === undefined) {
    list = new TaskList()
    s.calls.taskLists.set(key, list)
  }
  return list
}

type Building = { -readonly [K in keyof ToolCall]: ToolCall[K] }

// Both calls are built by assignment in one fixed key order, not as literals of spreads: a spread of
// the many shapes a started call takes is a megamorphic copy, and each conditional spread a small object.

/** The started call: id, name, kind, title, input, then diff, new_text, path when present, status, task_id. */
export const startedCall = (
  id: string,
  name: string,
  input: unknown,
  d: ToolDescription,
  taskId: string | undefined,
): ToolCall => {
  const call = { id, name, kind: d.kind, title: d.title, input } as Building
  if (d.diff !== undefined) call.diff = d.diff
  if (d.new_text !== undefined) call.new_text = d.new_text
  if (d.path !== undefined) call.path = d.path
  call.status = "Running"
  if (taskId !== undefined) call.task_id = taskId
  return call
}

/**
 * The finished call: the started one's keys in their order (its diff replaced
 * by the result's), then output, output_text, exit_code, and the result's diff
 * when the start had none. The same object `{ ...started, status, output, … }` made.
 */
export const finishedCall = (started: ToolCall, result: ToolResultInfo): ToolCall => {
  const call = {
    id: started.id,
    name: started.name,
    kind: started.kind,
    title: started.title,
    input: started.input,
  } as Building
  if (started.diff !== undefined) call.diff = result.diff ?? started.diff
  if (started.new_text !== undefined) call.new_text = started.new_text
  if (started.path !== undefined) call.path = started.path
  call.status = result.status
  if (started.task_id !== undefined) call.task_id = started.task_id
  call.output = result.output
  call.output_text = result.output_text
  if (result.exit_code !== undefined) call.exit_code = result.exit_code
  if (started.diff === undefined && result.diff !== undefined) call.diff = result.diff
  return call
}

/** A `tool_use` block: the call starts (and a TodoWrite plan, a SendMessage route). */
export const startToolCall = (
  s: MapState,
  out: Out,
  block: ContentBlock,
  taskId: string | undefined,
): void => {
  const id = block.id
  const name = block.name
  if (typeof id !== "string" || typeof name !== "string" || s.calls.open.has(id)) return
  const input = block.input ?? {}
  const d = describeToolCall(name, input)
  const call = startedCall(id, name, input, d, taskId)
  s.calls.open.set(id, { call, taskId })
  emit(s, out, taskId, { type: "ToolCallStarted", call })
  if (name === "TodoWrite") {
    const entries = planFromTodoWrite(input)
    if (entries !== undefined) emit(s, out, taskId, { type: "Plan", entries })
  } else if (name === "SendMessage") routeMessage(s, out, id, asString((input as Record<string, unknown>).to))
}

/** One `tool_result` block: the call finishes, and what its result means for agents, workflows and plans. */
const finishToolCall = (
  s: MapState,
  out: Out,
  block: ContentBlock,
  toolUseResult: unknown,
  taskId: string | undefined,
): void => {
  const id = block.tool_use_id
  if (typeof id !== "string") return
  const known = s.calls.open.get(id)
  const started: ToolCall = known?.call ?? {
    id,
    name: "",
    kind: "other",
    title: "Tool",
    input: {},
    status: "Running",
  }
  const callTask = known?.taskId ?? taskId
  const isError = block.is_error === true
  const result = toolResultOf(block.content, toolUseResult, isError, started.name)
  const call = finishedCall(started, result)
  const name = started.name
  if (!agentTools.has(name)) s.calls.open.delete(id)
  emit(s, out, callTask, { type: "ToolCallFinished", call })
  s.calls.outputLines.delete(id)

  if (agentTools.has(name)) finishAgentCall(s, out, id, toolUseResult, result.output_text, isError)
  else if (name === "Workflow") launchWorkflow(s, out, id, toolUseResult)
  else if (name.startsWith("Task")) {
    const list = taskListOf(s, callTask)
    if (applyTaskTool(list, name, started.input, toolUseResult, result.status))
      emit(s, out, callTask, { type: "Plan", entries: list.plan() })
  }
}

/**
 * A user message's tool results: each finishes its call. Returns false when
 * the message holds none (it is text, for the caller to read).
 */
export const finishToolResults = (
  s: MapState,
  out: Out,
  content: ReadonlyArray<ContentBlock>,
  toolUseResult: unknown,
  taskId: string | undefined,
): boolean => {
  let results = 0
  for (const block of content) if (block.type === "tool_result") results++
  if (results === 0) return false
  for (const block of content)
    if (block.type === "tool_result")
      finishToolCall(s, out, block, results === 1 ? toolUseResult : undefined, taskId)
  return true
}

const noticeLevel = (level: string | null | undefined): NoticeLevel =>
  level === "error" ? "error" : level === "warning" ? "warning" : "info"

/** `system/informational`: a line of a running call's output, or a notice. */
export const onInformational: Reducer<Informational> = (s, frame, out) => {
  const toolUseId = frame.tool_use_id
  if (!toolUseId) {
    emit(s, out, undefined, { type: "Notice", level: noticeLevel(frame.level), text: excerpt(frame.content) })
    return
  }
  let seen = s.calls.outputLines.get(toolUseId)
  if (seen === undefined) {
    seen = new Set()
    s.calls.outputLines.set(toolUseId, seen)
  }
  if (seen.has(frame.content)) return
  seen.add(frame.content)
  emit(s, out, s.calls.open.get(toolUseId)?.taskId, {
    type: "output_delta",
    tool_call_id: toolUseId,
    text: frame.content,
  })
}

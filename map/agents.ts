/**
 * Subagents as tasks: the `task_*` frames, the spawning call's result, the
 * messages the host's side of a task shows, and a SendMessage that gives a
 * finished agent more work. Workflow tasks hand their share to workflows.ts.
 *
 * Rules (product notes "Decisions", CLI 2.1.332):
 * - only `local_agent` tasks (and workflows) are published; other CLI task
 *   kinds (`local_bash`) are remembered as ignored;
 * - title once; `paused`/`pending` → Waiting, `killed`/`stopped` → Cancelled;
 *   summary: progress while running, then the spawning call's answer;
 * - `skip_transcript`/`ambient` tasks are hidden;
 * - a stopped agent's call also ends in an error result: it stays Cancelled;
 * - a task's opening prompt is its own prompt, not a message in it, and a
 *   stop inside it reads as the notice history shows ("Stopped.").
 */
import { isInterruptText, isTaskNotificationText } from "../records.ts"
import { isTerminal, spawnAnswer, taskStatusOf, taskTitle } from "../task.ts"
import { asRecord, asString } from "../values.ts"
import type { TaskNotification, TaskProgress, TaskStarted, TaskUpdated } from "../wire.ts"
import { emit, emitTask, type MapState, type Out, type Reducer } from "./state.ts"
import { declareAgent, indexAgent, taskOfAgentName, taskOfCliTask } from "./tasks.ts"
import { onWorkflowNotification, onWorkflowProgress, onWorkflowStarted } from "./workflows.ts"

export const onTaskStarted: Reducer<TaskStarted> = (s, frame, out) => {
  const type = frame.task_type ?? (frame.subagent_type ? "local_agent" : undefined)
  if (type === "local_workflow") return onWorkflowStarted(s, out, frame)
  const { tasks, byAgent, byCliTask, routes } = s.agents
  if (type !== "local_agent") {
    s.agents.ignoredCliTasks.add(frame.task_id)
    return
  }
  const existing = byAgent.get(frame.task_id)
  const callId = frame.tool_use_id ?? existing ?? frame.task_id
  // A forgotten task given more work runs again: its frames are no longer dropped.
  s.agents.retired.delete(frame.task_id)
  s.agents.retired.delete(callId)
  if (existing !== undefined && existing !== callId) routes.set(callId, existing) // re-sent after SendMessage
  const state = tasks.get(existing ?? callId) ?? declareAgent(s, out, callId, {}, false)
  indexAgent(s, state, frame.task_id)
  state.cliTaskId = frame.task_id
  byCliTask.set(frame.task_id, state.id)
  state.title ??= taskTitle(frame.description, frame.prompt)
  if (frame.subagent_type) state.name = frame.subagent_type
  if (frame.prompt && state.prompt === undefined) state.prompt = frame.prompt
  if (typeof frame.is_backgrounded === "boolean") state.background = frame.is_backgrounded
  if (state.parentTaskId === undefined && frame.parent_task_id) {
    const parent = byCliTask.get(frame.parent_task_id) ?? byAgent.get(frame.parent_task_id)
    if (parent !== undefined) state.parentTaskId = parent
  }
  state.hidden = frame.skip_transcript === true || frame.ambient === true
  state.status = "Running"
  state.finished = false
  if (existing !== undefined) state.answer = undefined
  emitTask(s, out, state)
}

export const onTaskProgress: Reducer<TaskProgress> = (s, frame, out) => {
  const state = taskOfCliTask(s, frame.task_id, frame.tool_use_id)
  if (state === undefined) return
  const usage = frame.usage
  if (typeof usage?.total_tokens === "number") state.usedTokens = usage.total_tokens
  if (typeof usage?.tool_uses === "number") state.toolUses = usage.tool_uses
  if (typeof usage?.duration_ms === "number") state.durationMs = usage.duration_ms
  if (state.kind === "workflow") return onWorkflowProgress(s, out, state, frame)
  if (frame.last_tool_name) state.activity = frame.last_tool_name
  if (frame.summary) state.summary = frame.summary
  emitTask(s, out, state)
}

export const onTaskUpdated: Reducer<TaskUpdated> = (s, frame, out) => {
  const state = taskOfCliTask(s, frame.task_id)
  if (state === undefined) return
  const patch = frame.patch
  const status = taskStatusOf(patch.status)
  if (status !== undefined) state.status = status
  if (typeof patch.is_backgrounded === "boolean") state.background = patch.is_backgrounded
  if (patch.error) state.error = patch.error
  if (isTerminal(state.status)) state.finished = true
  emitTask(s, out, state)
}

export const onTaskNotification: Reducer<TaskNotification> = (s, frame, out) => {
  const state = taskOfCliTask(s, frame.task_id, frame.tool_use_id)
  if (state === undefined) return
  const status = taskStatusOf(frame.status)
  if (status !== undefined) state.status = status
  if (frame.skip_transcript === true || frame.ambient === true) state.hidden = true
  if (frame.summary) state.summary = frame.summary
  if (state.status === "Failed" && frame.summary && state.error === undefined) state.error = frame.summary
  const usage = frame.usage
  if (typeof usage?.total_tokens === "number") state.usedTokens = usage.total_tokens
  if (typeof usage?.tool_uses === "number") state.toolUses = usage.tool_uses
  if (typeof usage?.duration_ms === "number") state.durationMs = usage.duration_ms
  state.finished = true
  if (state.kind === "workflow") return onWorkflowNotification(s, out, state, frame)
  emitTask(s, out, state)
}

/** The spawning call's result: a foreground agent's answer, or a background launch. */
export const finishAgentCall = (
  s: MapState,
  out: Out,
  callId: string,
  toolUseResult: unknown,
  text: string,
  isError: boolean,
): void => {
  const r = asRecord(toolUseResult)
  const state = s.agents.tasks.get(s.agents.routes.get(callId) ?? callId)
  if (state === undefined) return
  indexAgent(s, state, asString(r.agentId))
  if (r.status === "async_launched" || r.isAsync === true) state.background = true
  else if (isError) {
    // A stopped agent's call also ends in an error result ("[Request
    // interrupted…]"): the stop already made the task Cancelled, keep it.
    if (state.status !== "Cancelled") {
      state.status = "Failed"
      state.error = text
    }
    state.finished = true
  } else {
    const answer = spawnAnswer(toolUseResult, text)
    if (answer !== undefined) state.answer = answer
    if (!isTerminal(state.status)) state.status = "Completed"
    state.finished = true
  }
  emitTask(s, out, state)
}

/** A SendMessage call: the named agent's next frames come under this call, and a finished one runs again. */
export const routeMessage = (s: MapState, out: Out, callId: string, to: string | undefined): void => {
  const target = to === undefined ? undefined : (s.agents.byAgent.get(to) ?? taskOfAgentName(s, to))
  if (target === undefined) return
  s.agents.routes.set(callId, target)
  const state = s.agents.tasks.get(target)
  if (state !== undefined && isTerminal(state.status)) {
    state.status = "Running"
    state.finished = false
    state.answer = undefined
    emitTask(s, out, state)
  }
}

/** An assistant message inside a task: its model, once. */
export const noteTaskModel = (
  s: MapState,
  out: Out,
  taskId: string,
  model: string | null | undefined,
): void => {
  const state = s.agents.tasks.get(taskId)
  if (state !== undefined && state.model === undefined && model && state.kind !== "workflow") {
    state.model = model
    emitTask(s, out, state)
  }
}

/** A text block a task said: the last one is its summary when nothing better exists. */
export const noteTaskText = (s: MapState, taskId: string, text: string): void => {
  if (text.trim() === "") return
  const state = s.agents.tasks.get(taskId)
  if (state !== undefined) state.lastText = text
}

export interface TaskUserFrame {
  readonly uuid?: string | null
  readonly isReplay?: boolean | null
  readonly origin?: { kind?: string | null } | null
}

/** A user message (not a tool result) inside a task. */
export const onTaskUserText = (
  s: MapState,
  out: Out,
  taskId: string,
  frame: TaskUserFrame,
  text: string,
): void => {
  if (frame.isReplay === true || isTaskNotificationText(text, frame.origin)) return
  const state = s.agents.tasks.get(taskId)
  const { promptSeen } = s.agents
  // The opening prompt is the task's own prompt, not a message in it.
  if (!promptSeen.has(taskId)) {
    promptSeen.add(taskId)
    if (
      state === undefined ||
      state.prompt === undefined ||
      text.includes(state.prompt.trim()) ||
      state.kind === "workflow_agent"
    )
      return
  }
  if (text.trim() === "") return
  // A stop inside the task reads as the same notice history shows for it.
  if (isInterruptText(text)) {
    emit(s, out, taskId, { type: "Notice", level: "info", text: "Stopped." })
    return
  }
  emit(s, out, taskId, {
    type: "UserMessage",
    item_id: frame.uuid ?? `${taskId}:user:${promptSeen.size}`,
    text,
  })
}

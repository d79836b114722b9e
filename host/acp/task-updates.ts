/**
 * Subagents and workflow agents as ACP tool calls (kind `think`): announced
 * when no call carried them (workflow agents), then their status and
 * summary; text said inside a task joins that task's call content rather
 * than the main message stream.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { TaskInfo } from "../../sdk/protocol.ts"
import { textContent } from "./tool-updates.ts"
import type { Update, UpdateState } from "./update-state.ts"

const TASK_STATUS: Readonly<Record<TaskInfo["status"], acp.ToolCallStatus>> = {
  Running: "in_progress",
  Waiting: "pending",
  Completed: "completed",
  Failed: "failed",
  Cancelled: "failed",
}

/** A task's title as a call title: its kind of agent and what it does. */
const taskTitle = (task: TaskInfo): string =>
  task.workflow ? `Workflow: ${task.title}` : task.name ? `${task.name}: ${task.title}` : task.title

/** The task's status line and summary, in the meta and as the call's text. */
const taskMeta = (task: TaskInfo) => ({
  claudeCode: {
    toolName: task.workflow ? "Workflow" : "Agent",
    ...(task.parent_task_id !== undefined && { parentToolUseId: task.parent_task_id }),
    task: {
      status: task.status,
      ...(task.name !== undefined && { name: task.name }),
      ...(task.model !== undefined && { model: task.model }),
      ...(task.summary !== undefined && { summary: task.summary }),
      ...(task.activity !== undefined && { activity: task.activity }),
      ...(task.usage !== undefined && { usage: task.usage }),
      ...(task.phase !== undefined && { phase: task.phase }),
      ...(task.background !== undefined && { background: task.background }),
    },
  },
})

const taskContent = (task: TaskInfo, inner: string | undefined): acp.ToolCallContent[] => {
  const parts = [inner, task.summary ?? task.activity].filter((p): p is string => p !== undefined && p !== "")
  return parts.length > 0 ? [textContent(parts.join("\n\n"))] : []
}

/** Text said inside a task joins that task's call content. */
export const appendTaskText = (
  state: UpdateState,
  taskId: string,
  itemId: string,
  text: string,
): Update[] => {
  const before = state.taskText.get(taskId) ?? ""
  const gap = before !== "" && state.taskItem.get(taskId) !== itemId ? "\n\n" : ""
  state.taskItem.set(taskId, itemId)
  const so = before + gap + text
  state.taskText.set(taskId, so)
  if (!state.calls.has(taskId)) return []
  return [
    {
      sessionUpdate: "tool_call_update",
      toolCallId: taskId,
      content: [textContent(so)],
    },
  ]
}

/** A task as its call: announced when no call carried it (workflow agents), then its status and summary. */
export const taskUpdates = (state: UpdateState, task: TaskInfo): Update[] => {
  const out: Update[] = []
  const inner = state.taskText.get(task.id)
  if (!state.calls.has(task.id)) {
    state.calls.set(task.id, { output: "", parent: task.parent_task_id })
    out.push({
      sessionUpdate: "tool_call",
      toolCallId: task.id,
      title: taskTitle(task),
      kind: "think",
      status: TASK_STATUS[task.status],
      rawInput: task.prompt !== undefined ? { prompt: task.prompt } : {},
      _meta: taskMeta(task),
    })
    return out
  }
  const content = taskContent(task, inner)
  out.push({
    sessionUpdate: "tool_call_update",
    toolCallId: task.id,
    title: taskTitle(task),
    status: TASK_STATUS[task.status],
    ...(content.length > 0 && { content }),
    _meta: taskMeta(task),
  })
  return out
}

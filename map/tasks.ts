/**
 * Which task? The one place that answers it, for every kind of frame: a
 * forwarded frame (its `parent_tool_use_id` and `agent_id`), a `task_*` frame
 * (the CLI's task id), and a subagent declared from its spawning call.
 *
 * Rules (CLI 2.1.332):
 * - a subagent's task id is its spawning Agent/Task call's id; the CLI's
 *   agentId is a side index (`byAgent`);
 * - a forwarded frame can precede its `task_started`: it declares the task
 *   from the spawning call (or what the frame itself says);
 * - a frame under a call that is no agent call belongs to the task that call
 *   ran in.
 */
import { newTaskState, type TaskState, taskTitle } from "../task.ts"
import { asString } from "../values.ts"
import { emitTask, type MapState, type Out } from "./state.ts"

/** The tools that spawn a subagent. */
export const agentTools: ReadonlySet<string> = new Set(["Agent", "Task"])

/** Record the CLI's agentId of a task. */
export const indexAgent = (s: MapState, state: TaskState, agentId: string | null | undefined): void => {
  if (!agentId) return
  state.agentId = agentId
  s.agents.byAgent.set(agentId, state.id)
}

export interface AgentHints {
  readonly agentId?: string | null
  readonly description?: string | null
  readonly subagentType?: string | null
}

/** Declare a subagent task from its spawning call (or what a forwarded frame says). */
export const declareAgent = (
  s: MapState,
  out: Out,
  callId: string,
  hints: AgentHints,
  announce = true,
): TaskState => {
  const { tasks, routes } = s.agents
  let state = tasks.get(callId)
  if (state === undefined) {
    state = newTaskState(callId, "agent")
    const call = s.calls.open.get(callId)
    const input = (call?.call.input ?? {}) as Record<string, unknown>
    if (call?.taskId !== undefined) state.parentTaskId = call.taskId
    state.title = taskTitle(asString(input.description) ?? hints.description, asString(input.prompt))
    const name = asString(input.subagent_type) ?? hints.subagentType ?? undefined
    if (name !== undefined) state.name = name
    const prompt = asString(input.prompt)
    if (prompt !== undefined) state.prompt = prompt
    if (typeof input.run_in_background === "boolean") state.background = input.run_in_background
    tasks.set(callId, state)
    routes.set(callId, callId)
  }
  indexAgent(s, state, hints.agentId)
  if (announce) emitTask(s, out, state)
  return state
}

/** What a forwarded frame says of the task it came from. */
export interface ForwardedFrame {
  readonly parent_tool_use_id?: string | null
  readonly agent_id?: string | null
  readonly task_description?: unknown
  readonly subagent_type?: unknown
}

/** The task a forwarded frame belongs to (undefined: the main conversation), declared if new. */
export const taskOfFrame = (s: MapState, out: Out, frame: ForwardedFrame): string | undefined => {
  const parent = frame.parent_tool_use_id
  const agentId = frame.agent_id
  const { tasks, routes, byAgent } = s.agents
  if (parent) {
    const routed = routes.get(parent)
    if (routed !== undefined) {
      const state = tasks.get(routed)
      if (state !== undefined && agentId && state.agentId === undefined) indexAgent(s, state, agentId)
      return routed
    }
  }
  if (agentId) {
    const known = byAgent.get(agentId)
    if (known !== undefined) {
      if (parent) routes.set(parent, known)
      return known
    }
  }
  if (!parent) return undefined
  // A child frame before its task_started: the parent is an agent call (or unknown to us).
  const call = s.calls.open.get(parent)
  if (call !== undefined && !agentTools.has(call.call.name)) return call.taskId
  return declareAgent(s, out, parent, {
    agentId,
    description: asString(frame.task_description) ?? null,
    subagentType: asString(frame.subagent_type) ?? null,
  }).id
}

/** The task a `task_*` frame names by the CLI's task id (or, failing that, its spawning call). */
export const taskOfCliTask = (
  s: MapState,
  cliTaskId: string,
  toolUseId?: string | null,
): TaskState | undefined => {
  const { byCliTask, byAgent, tasks, ignoredCliTasks, retired } = s.agents
  const host = byCliTask.get(cliTaskId) ?? byAgent.get(cliTaskId)
  if (host !== undefined) return tasks.get(host)
  if (ignoredCliTasks.has(cliTaskId) || retired.has(cliTaskId)) return undefined
  if (toolUseId && retired.has(toolUseId)) return undefined
  return toolUseId ? tasks.get(toolUseId) : undefined
}

/** A subagent task by its agent type's name (SendMessage may name the type). */
export const taskOfAgentName = (s: MapState, name: string): string | undefined => {
  for (const state of s.agents.tasks.values())
    if (state.kind === "agent" && state.name === name) return state.id
  return undefined
}

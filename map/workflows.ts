/**
 * Dynamic workflows as tasks: the Workflow call's id is the task, its
 * snapshot's agents are child tasks `<workflow id>/<index>` with their phase.
 * The `workflow` signals tell the session what to follow (the transcript
 * folder at launch, the output file at the end); the run's record closes it.
 *
 * Rules (CLI 2.1.332, testdata/workflow, testdata/dynamic_workflow):
 * - snapshots are full: each replaces the phases and updates every agent;
 * - a workflow agent takes its workflow's hidden flag;
 * - agents still running when the run ended did not finish: Completed with a
 *   completed run, else Cancelled.
 */
import type { WorkflowPhase } from "../sdk/protocol.ts"
import { isTerminal, newTaskState, type TaskState, taskStatusOf, taskTitle } from "../task.ts"
import {
  agentTaskId,
  applyAgentEntry,
  newAgentState,
  parseWorkflowLaunch,
  parseWorkflowProgress,
  workflowLog,
  workflowResultText,
} from "../workflow.ts"
import { type TaskNotification, type TaskProgress, type TaskStarted, WorkflowRecord } from "../wire.ts"
import { emitTask, type MapState, type Out, signal } from "./state.ts"

/** The workflow task of a Workflow call, created on first sight. */
const workflowState = (s: MapState, callId: string): TaskState => {
  const { tasks } = s.agents
  let state = tasks.get(callId)
  if (state === undefined) {
    state = newTaskState(callId, "workflow")
    const call = s.calls.open.get(callId)
    if (call?.taskId !== undefined) state.parentTaskId = call.taskId
    state.title = call?.call.title
    state.workflow = { phases: [] }
    tasks.set(callId, state)
  }
  state.workflow ??= { phases: [] }
  return state
}

/** The Workflow call's result: the run launched in the background; follow its transcript folder. */
export const launchWorkflow = (s: MapState, out: Out, callId: string, toolUseResult: unknown): void => {
  const launch = parseWorkflowLaunch(toolUseResult)
  if (launch === undefined) return
  const state = workflowState(s, callId)
  if (launch.taskId) {
    state.cliTaskId = launch.taskId
    s.agents.byCliTask.set(launch.taskId, callId)
  }
  if (launch.workflowName) state.name ??= launch.workflowName
  state.workflow = {
    ...(state.workflow ?? { phases: [] }),
    ...(launch.workflowName ? { name: launch.workflowName } : {}),
    ...(launch.runId ? { run_id: launch.runId } : {}),
  }
  state.background = true
  emitTask(s, out, state)
  signal(out, {
    type: "workflow",
    taskId: callId,
    ...(launch.runId ? { runId: launch.runId } : {}),
    ...(launch.transcriptDir ? { transcriptDir: launch.transcriptDir } : {}),
    finished: false,
  })
}

/** `task_started` of a `local_workflow` task. */
export const onWorkflowStarted = (s: MapState, out: Out, frame: TaskStarted): void => {
  const callId = frame.tool_use_id ?? frame.task_id
  const state = workflowState(s, callId)
  state.cliTaskId = frame.task_id
  s.agents.byCliTask.set(frame.task_id, callId)
  state.title = taskTitle(frame.description, undefined) ?? frame.workflow_name ?? state.title ?? "Workflow"
  if (frame.workflow_name) {
    state.name = frame.workflow_name
    state.workflow = { ...(state.workflow ?? { phases: [] }), name: frame.workflow_name }
  }
  if (frame.prompt) state.prompt = frame.prompt
  state.hidden = frame.skip_transcript === true || frame.ambient === true
  state.status = "Running"
  state.finished = false
  emitTask(s, out, state)
}

const samePhases = (
  a: ReadonlyArray<WorkflowPhase> | undefined,
  b: ReadonlyArray<WorkflowPhase>,
): boolean => {
  if (a === undefined || a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as WorkflowPhase
    const y = b[i] as WorkflowPhase
    if (x.index !== y.index || x.title !== y.title) return false
  }
  return true
}

/** A full snapshot: phases, and every agent as a child task. */
const applySnapshot = (s: MapState, out: Out, state: TaskState, progress: ReadonlyArray<unknown>): void => {
  const { tasks, byAgent } = s.agents
  const snap = parseWorkflowProgress(progress)
  // Every snapshot repeats the phases: the workflow is replaced only when they changed (task.ts reuses its copy).
  if (snap.phases.length > 0 && !samePhases(state.workflow?.phases, snap.phases))
    state.workflow = { ...(state.workflow ?? { phases: [] }), phases: snap.phases }
  const children: TaskState[] = []
  for (const entry of snap.agents) {
    const id = agentTaskId(state.id, entry.index)
    let child = tasks.get(id)
    if (child === undefined) {
      child = newAgentState(state.id, entry)
      tasks.set(id, child)
    } else applyAgentEntry(child, entry)
    child.hidden = state.hidden
    if (child.agentId) byAgent.set(child.agentId, id)
    children.push(child)
  }
  emitTask(s, out, state)
  for (const child of children) emitTask(s, out, child)
}

/** `task_progress` of a workflow task (its usage is already applied). */
export const onWorkflowProgress = (s: MapState, out: Out, state: TaskState, frame: TaskProgress): void => {
  // "<phase>: <label>" of the agent that moved last; `summary` is the script's description.
  if (
    frame.description &&
    frame.workflow_progress?.some((e) => (e as { type?: unknown } | null)?.type === "workflow_agent")
  )
    state.activity = frame.description
  if (frame.workflow_progress) applySnapshot(s, out, state, frame.workflow_progress)
  else emitTask(s, out, state)
}

/** `task_notification` of a workflow task (its status is already applied): read the record next. */
export const onWorkflowNotification = (
  s: MapState,
  out: Out,
  state: TaskState,
  frame: TaskNotification,
): void => {
  emitTask(s, out, state)
  signal(out, {
    type: "workflow",
    taskId: state.id,
    ...(state.workflow?.run_id ? { runId: state.workflow.run_id } : {}),
    ...(frame.output_file ? { outputFile: frame.output_file } : {}),
    finished: true,
  })
}

/** The run's record (or null when none could be read): result, log, final snapshot. */
export const finishWorkflow = (s: MapState, out: Out, taskId: string, record: unknown | null): void => {
  const state = s.agents.tasks.get(taskId)
  if (state === undefined) return
  const parsed = record === null ? undefined : WorkflowRecord.safeParse(record)
  if (parsed?.success) {
    const r = parsed.data
    if (r.workflowProgress) applySnapshot(s, out, state, r.workflowProgress)
    const result = workflowResultText(r.result)
    const log = workflowLog(r.logs)
    state.workflow = {
      ...(state.workflow ?? { phases: [] }),
      ...(r.workflowName && !state.workflow?.name ? { name: r.workflowName } : {}),
      ...(r.runId && !state.workflow?.run_id ? { run_id: r.runId } : {}),
      ...(result === undefined ? {} : { result }),
      ...(log === undefined ? {} : { log }),
    }
    if (state.workflow.phases.length === 0 && r.phases)
      state.workflow = {
        ...state.workflow,
        phases: r.phases.map((p, i) => ({ index: i + 1, title: p.title })),
      }
    const status = taskStatusOf(r.status)
    if (status !== undefined && !isTerminal(state.status)) state.status = status
    if (typeof r.totalTokens === "number") state.usedTokens = r.totalTokens
    if (typeof r.totalToolCalls === "number") state.toolUses = r.totalToolCalls
    if (result !== undefined) state.answer = result
    if (r.error) state.error = r.error
  }
  if (!isTerminal(state.status)) state.status = "Completed"
  state.finished = true
  // Agents still marked running when the run ended did not finish.
  for (const child of s.agents.tasks.values())
    if (child.parentTaskId === taskId && child.kind === "workflow_agent" && !isTerminal(child.status)) {
      child.status = state.status === "Completed" ? "Completed" : "Cancelled"
      child.finished = true
      emitTask(s, out, child)
    }
  emitTask(s, out, state)
}

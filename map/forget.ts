/**
 * What a finished turn lets go: the state the host no longer needs, so a
 * session of any length keeps state bounded by what is still running.
 *
 * Rules (CLI 2.1.332):
 * - a turn's main-chat messages are done at its `result` (their blocks all
 *   came before it): their block counts and stream keys go, at the first
 *   result after `MESSAGE_BATCH` of them gathered;
 * - a finished task may still hear of itself (a SendMessage gives a finished
 *   agent more work, a workflow's record is read after its end, late frames
 *   of a stopped agent): the `KEEP_FINISHED` most recent finished top-level
 *   tasks stay whole, older ones go with every index entry naming them, their
 *   messages, their spawning call and the tasks inside them;
 * - a forgotten task stays finished: its ids (task, agent, CLI task) are
 *   kept, to a bound, and a late frame naming one is dropped, never a fresh
 *   Running task (the host holds the task's last snapshot); only a new
 *   `task_started` for it (more work) brings it back;
 * - the CLI's task ids of other kinds (`local_bash`) are kept to a bound,
 *   oldest first.
 */
import type { MapState } from "./state.ts"

/** Finished top-level tasks kept whole after their turn: the ones a SendMessage or a late frame may still name. */
export const KEEP_FINISHED = 32

/** CLI task ids of unpublished kinds kept (past it, the oldest half goes). */
export const MAX_IGNORED = 256

/** Ids of forgotten tasks kept (past it, the oldest half goes): only ids, a few bytes each. */
export const MAX_RETIRED = 4096

/** Finished turns' messages forgotten together once this many have gathered. */
export const MESSAGE_BATCH = 64

/** A main-chat message of this turn: forgotten at a result (with the others gathered by then). */
export const noteTurnMessage = (s: MapState, messageId: string): void => {
  s.stream.turnMessages.add(messageId)
}

/** A message said inside task `taskId`: forgotten with the task. */
export const noteTaskMessage = (s: MapState, taskId: string, messageId: string): void => {
  const messages = s.stream.taskMessages.get(taskId)
  if (messages === undefined) s.stream.taskMessages.set(taskId, new Set([messageId]))
  else messages.add(messageId)
}

const forgetMessages = (s: MapState, ids: Iterable<string>): void => {
  const { streamed, blockCounts } = s.stream
  for (const id of ids) {
    streamed.delete(id)
    blockCounts.delete(id)
  }
}

/** Every task to forget: the finished top-level tasks past the newest `KEEP_FINISHED`, with the tasks inside them. */
const retiredTasks = (s: MapState): Set<string> => {
  const retired = new Set<string>()
  const { tasks } = s.agents
  const finishedRoots: string[] = []
  for (const state of tasks.values())
    if (state.parentTaskId === undefined && state.finished) finishedRoots.push(state.id)
  if (finishedRoots.length <= KEEP_FINISHED) return retired
  for (const id of finishedRoots.slice(0, finishedRoots.length - KEEP_FINISHED)) retired.add(id)
  // Tasks come after their parents in the map's order: one pass takes every level.
  for (const state of tasks.values())
    if (state.parentTaskId !== undefined && retired.has(state.parentTaskId)) retired.add(state.id)
  return retired
}

const dropNaming = (index: Map<string, string>, retired: ReadonlySet<string>): void => {
  for (const [key, taskId] of index) if (retired.has(taskId)) index.delete(key)
}

/** The oldest entries past `max` go, half the bound at a time. */
const trimOldest = (ids: Set<string>, max: number): void => {
  if (ids.size <= max) return
  let drop = ids.size - max / 2
  for (const id of ids) {
    if (drop-- <= 0) break
    ids.delete(id)
  }
}

/** Remember a forgotten task's ids, so a late frame naming one is not taken for a new task. */
const rememberRetired = (s: MapState, id: string): void => {
  const { retired, tasks } = s.agents
  const state = tasks.get(id)
  retired.add(id)
  if (state?.agentId !== undefined) retired.add(state.agentId)
  if (state?.cliTaskId !== undefined) retired.add(state.cliTaskId)
}

/** Does a forwarded frame name a forgotten task (its spawning call, or its agent)? */
export const namesRetired = (
  s: MapState,
  frame: { readonly parent_tool_use_id?: string | null; readonly agent_id?: string | null },
): boolean => {
  const { retired } = s.agents
  if (retired.size === 0) return false
  return (
    (typeof frame.parent_tool_use_id === "string" && retired.has(frame.parent_tool_use_id)) ||
    (typeof frame.agent_id === "string" && retired.has(frame.agent_id))
  )
}

/** The turn ended (its `result`): forget its messages and the tasks past the bound. */
export const forgetAtTurnEnd = (s: MapState): void => {
  // In batches: a map grown and emptied every turn is reallocated every turn.
  if (s.stream.turnMessages.size >= MESSAGE_BATCH) {
    forgetMessages(s, s.stream.turnMessages)
    s.stream.turnMessages.clear()
  }
  trimOldest(s.agents.ignoredCliTasks, MAX_IGNORED)
  const { agents, calls, stream } = s
  // Looked for once the tasks grew by the bound since the last look: a turn end costs nothing otherwise.
  if (agents.tasks.size < agents.retireAt) return
  const retired = retiredTasks(s)
  agents.retireAt = agents.tasks.size - retired.size + KEEP_FINISHED
  if (retired.size === 0) return
  for (const id of retired) rememberRetired(s, id)
  trimOldest(agents.retired, MAX_RETIRED)
  for (const id of retired) {
    agents.tasks.delete(id)
    agents.promptSeen.delete(id)
    calls.open.delete(id)
    calls.taskLists.delete(id)
    const messages = stream.taskMessages.get(id)
    if (messages !== undefined) forgetMessages(s, messages)
    stream.taskMessages.delete(id)
    stream.streamMessage.delete(id)
  }
  // Calls inside a forgotten task whose results never came (a stopped agent's).
  for (const [id, info] of calls.open)
    if (info.taskId !== undefined && retired.has(info.taskId)) {
      calls.open.delete(id)
      calls.outputLines.delete(id)
    }
  dropNaming(agents.byAgent, retired)
  dropNaming(agents.byCliTask, retired)
  dropNaming(agents.routes, retired)
}

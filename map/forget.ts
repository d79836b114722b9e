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
 * - a frame for a task forgotten so maps as a frame of an unknown task does
 *   today (a fresh task from its call, or the main chat); the CLI's task ids
 *   of other kinds (`local_bash`) are kept to a bound, oldest first.
 */
import type { MapState } from "./state.ts"

/** Finished top-level tasks kept whole after their turn: the ones a SendMessage or a late frame may still name. */
export const KEEP_FINISHED = 32

/** CLI task ids of unpublished kinds kept (past it, the oldest half goes). */
export const MAX_IGNORED = 256

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

/** The turn ended (its `result`): forget its messages and the tasks past the bound. */
export const forgetAtTurnEnd = (s: MapState): void => {
  // In batches: a map grown and emptied every turn is reallocated every turn.
  if (s.stream.turnMessages.size >= MESSAGE_BATCH) {
    forgetMessages(s, s.stream.turnMessages)
    s.stream.turnMessages.clear()
  }
  const { ignoredCliTasks } = s.agents
  if (ignoredCliTasks.size > MAX_IGNORED) {
    let drop = ignoredCliTasks.size - MAX_IGNORED / 2
    for (const id of ignoredCliTasks) {
      if (drop-- <= 0) break
      ignoredCliTasks.delete(id)
    }
  }
  const { agents, calls, stream } = s
  // Looked for once the tasks grew by the bound since the last look: a turn end costs nothing otherwise.
  if (agents.tasks.size < agents.retireAt) return
  const retired = retiredTasks(s)
  agents.retireAt = agents.tasks.size - retired.size + KEEP_FINISHED
  if (retired.size === 0) return
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

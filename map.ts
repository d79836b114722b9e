/**
 * stream-json frames → host agent events: the entry over map/. Plain
 * functions over one state record; no I/O. The session feeds every decoded
 * frame to `map` and acts on the returned signals (run end, state, init,
 * workflows to follow, usage limits, a failed compaction).
 *
 * Where each rule lives (product notes "Decisions", checked against CLI 2.1.332):
 * - map/state.ts: the state record of slices, the output, stamping events;
 * - map/dispatch.ts: which reducer reads which frame, checked exhaustive;
 * - map/stream.ts: text and reasoning deltas, block counting per message id;
 * - map/messages.ts: whole assistant and user messages, workflow agents' records;
 * - map/calls.ts: tool calls, output lines, plans from the todo and task tools;
 * - map/tasks.ts: which task a frame belongs to (the one answer);
 * - map/agents.ts: subagent tasks (`task_*` frames, spawning calls, SendMessage);
 * - map/workflows.ts: workflow tasks, their agents, their record;
 * - map/turn.ts: init, state, result and usage, compaction, limits, retries.
 */
import type { AgentEvent } from "./sdk/protocol.ts"
import type { TaskKind } from "./task.ts"
import type { Frame } from "./wire.ts"
import { dispatch } from "./map/dispatch.ts"
import { mapAgentRecords } from "./map/messages.ts"
import { emitTask, type MapOutput, newMapState, newOut } from "./map/state.ts"
import { finishWorkflow } from "./map/workflows.ts"

export type { MapOutput, Signal } from "./map/state.ts"

export interface Mapper {
  map(frame: Frame, runId: string | undefined): MapOutput
  /** The host task id of a CLI agentId (subagents and workflow agents). */
  taskForAgent(agentId: string): string | undefined
  agentForTask(taskId: string): { agentId: string; kind: TaskKind } | undefined
  /** Waiting while an approval or question of the task is open. */
  setTaskWaiting(taskId: string, waiting: boolean, runId?: string): AgentEvent[]
  /** The session's model: its `modelUsage` entry gives the context window. */
  setModel(model: string): void
  /** A workflow agent's transcript records, mapped as frames forwarded for that task. */
  mapAgentRecords(taskId: string, records: unknown[], runId?: string): AgentEvent[]
  /** The run's record (or null when none could be read): result, log, final snapshot. */
  finishWorkflow(taskId: string, record: unknown | null, runId?: string): AgentEvent[]
}

export const makeMapper = (options: { sessionId: string; model?: string }): Mapper => {
  const s = newMapState(options.sessionId, options.model)
  return {
    map: (frame, runId) => {
      const out = newOut(runId)
      dispatch(s, frame, out)
      return out
    },
    taskForAgent: (agentId) => s.agents.byAgent.get(agentId),
    agentForTask: (taskId) => {
      const state = s.agents.tasks.get(taskId)
      if (state === undefined) return undefined
      const agentId = state.kind === "workflow" ? (state.cliTaskId ?? state.agentId) : state.agentId
      return agentId === undefined ? undefined : { agentId, kind: state.kind }
    },
    setTaskWaiting: (taskId, waiting, runId) => {
      const out = newOut(runId)
      const state = s.agents.tasks.get(taskId)
      if (state === undefined || state.waiting === waiting) return out.events
      state.waiting = waiting
      emitTask(s, out, state)
      return out.events
    },
    setModel: (value) => {
      s.model = value
    },
    mapAgentRecords: (taskId, records, runId) => mapAgentRecords(s, taskId, records, runId),
    finishWorkflow: (taskId, record, runId) => {
      const out = newOut(runId)
      finishWorkflow(s, out, taskId, record)
      return out.events
    },
  }
}

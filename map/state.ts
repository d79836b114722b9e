/**
 * The mapper's whole state as one record of slices, one per concern, and the
 * output record every reducer appends to. Reducers take both as parameters;
 * nothing here does I/O or keeps a closure.
 *
 * Rules kept here:
 * - every event is stamped with the session id, the run id (when a run is
 *   open) and the task it happened in; an event of a hidden task is dropped;
 * - a task snapshot is sent only when it changed (task.ts `changedSnapshot`);
 * - signals go straight into the frame's own output, in the order they arise:
 *   there is no side list to drain.
 */
import type { AgentEvent, RunUsage, ToolCall, UsageLimits } from "../sdk/protocol.ts"
import type { Rejection } from "./quota.ts"
import { changedSnapshot, type TaskState } from "../task.ts"
import type { TaskList } from "../tools.ts"
import type { Usage } from "../wire.ts"

export type Signal =
  | {
      readonly type: "result"
      readonly subtype: string
      readonly isError: boolean
      readonly usage: RunUsage
      readonly errors: string[]
      readonly userMessageUuids: string[]
      /** The result's text, as an excerpt (bounds.ts): the session shows it only as a failed run's error. */
      readonly text?: string
      /** Why the model stopped (end_turn, max_tokens, refusal, …): `RunEnded.stop_reason`. */
      readonly stopReason?: string
    }
  | { readonly type: "state"; readonly state: string }
  | {
      readonly type: "init"
      readonly model: string
      readonly cliSessionId: string
      readonly permissionMode?: string
      readonly tools: string[]
      readonly skills: string[]
      readonly slashCommands: string[]
    }
  | {
      readonly type: "workflow"
      readonly taskId: string
      readonly runId?: string
      readonly transcriptDir?: string
      readonly outputFile?: string
      readonly finished: boolean
    }
  | {
      readonly type: "usage_limits"
      readonly limits: UsageLimits
      readonly rejected?: Rejection
    }
  | { readonly type: "compact_failed"; readonly message: string }

export interface MapOutput {
  readonly events: AgentEvent[]
  readonly signals: Signal[]
}

/**
 * What one frame (or one call) produces: reducers append to it (`emit`,
 * `signal`) and return nothing. Most frames produce nothing: their output
 * shares one frozen empty list of each kind, and a list is made at its first
 * entry.
 */
export interface Out extends MapOutput {
  readonly runId: string | undefined
  events: AgentEvent[]
  signals: Signal[]
}

const NO_EVENTS: AgentEvent[] = Object.freeze([]) as unknown as AgentEvent[]
const NO_SIGNALS: Signal[] = Object.freeze([]) as unknown as Signal[]

export const newOut = (runId: string | undefined): Out => ({ runId, events: NO_EVENTS, signals: NO_SIGNALS })

/** Append one signal for the session. */
export const signal = (out: Out, value: Signal): void => {
  if (out.signals === NO_SIGNALS) out.signals = [value]
  else out.signals.push(value)
}

/** A frame's handler: reads the frame, updates the state, appends to the output. */
export type Reducer<F> = (s: MapState, frame: F, out: Out) => void

/** Streamed block keys and the block count per message id. */
export interface StreamSlice {
  /** Message id → the block indexes the stream delivered. */
  readonly streamed: Map<string, Set<number>>
  /** Blocks seen per message id (each block is its own `assistant` frame at position 0). */
  readonly blockCounts: Map<string, number>
  /** The message id streaming now, per scope (`parent_tool_use_id`, "" for the main chat). */
  readonly streamMessage: Map<string, string>
  /** The main chat's messages this turn, forgotten at its result (forget.ts). */
  readonly turnMessages: Set<string>
  /** Task id → the messages said in it, forgotten with the task (forget.ts). */
  readonly taskMessages: Map<string, Set<string>>
}

export interface CallInfo {
  readonly call: ToolCall
  /** The task the call ran in (undefined: the main conversation). */
  readonly taskId: string | undefined
}

/** Tool calls still open, the output lines each has shown, and the task-tool list per scope. */
export interface CallSlice {
  readonly open: Map<string, CallInfo>
  readonly outputLines: Map<string, Set<string>>
  /** Task scope ("" for the main chat) → the list its TaskCreate/TaskUpdate/TaskList calls keep. */
  readonly taskLists: Map<string, TaskList>
}

/** Every task (subagents, workflows, workflow agents) and the ways to find one. */
export interface AgentIndex {
  readonly tasks: Map<string, TaskState>
  /** CLI agentId → task id. */
  readonly byAgent: Map<string, string>
  /** CLI task id (`task_*` frames) → task id. */
  readonly byCliTask: Map<string, string>
  /** parent_tool_use_id → task (the Agent call itself, a SendMessage that gave it work). */
  readonly routes: Map<string, string>
  /** CLI task ids that are not published (local_bash and other kinds). */
  readonly ignoredCliTasks: Set<string>
  /** Ids (task, agent, CLI task) of finished tasks forget.ts let go: a late frame naming one is dropped. */
  readonly retired: Set<string>
  /** Tasks whose opening prompt was seen (it is the task's own prompt, not a message in it). */
  readonly promptSeen: Set<string>
  /** The task count at which forget.ts next looks for finished tasks to forget. */
  retireAt: number
}

/** The main chat's last usage (context used) and a compaction in flight. */
export interface TurnSlice {
  lastUsage: Usage | undefined
  lastUsageMessage: string | undefined
  /** A compaction summary that came before its boundary. */
  pendingSummary: string | undefined
  /** A boundary that came before its summary. */
  compactPending: boolean
  /** The main chat's last stop reason this turn (`message_delta`, or a whole message that has one). */
  stopReason: string | undefined
}

export interface MapState {
  readonly sessionId: string
  /** The session's model: its `modelUsage` entry gives the context window. */
  model: string | undefined
  readonly stream: StreamSlice
  readonly calls: CallSlice
  readonly agents: AgentIndex
  readonly turn: TurnSlice
}

export const newMapState = (sessionId: string, model?: string): MapState => ({
  sessionId,
  model,
  stream: {
    streamed: new Map(),
    blockCounts: new Map(),
    streamMessage: new Map(),
    turnMessages: new Set(),
    taskMessages: new Map(),
  },
  calls: { open: new Map(), outputLines: new Map(), taskLists: new Map() },
  agents: {
    tasks: new Map(),
    byAgent: new Map(),
    byCliTask: new Map(),
    routes: new Map(),
    ignoredCliTasks: new Set(),
    retired: new Set(),
    promptSeen: new Set(),
    retireAt: 0,
  },
  turn: {
    lastUsage: undefined,
    lastUsageMessage: undefined,
    pendingSummary: undefined,
    compactPending: false,
    stopReason: undefined,
  },
})

/** An event without the fields every event gets from the mapper. */
export type EventBody = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, "session_id" | "run_id" | "task_id">
    : never
  : never

/** Append one event in task `taskId` (undefined: the main chat). */
export const emit = (s: MapState, out: Out, taskId: string | undefined, body: EventBody): void => {
  if (taskId !== undefined && s.agents.tasks.get(taskId)?.hidden === true) return
  // Every body is a fresh literal from its call site: stamp it in place rather than copy it.
  const event = body as Record<string, unknown>
  event.session_id = s.sessionId
  if (out.runId !== undefined) event.run_id = out.runId
  if (taskId !== undefined) event.task_id = taskId
  if (out.events === NO_EVENTS) out.events = [event as unknown as AgentEvent]
  else out.events.push(event as unknown as AgentEvent)
}

/** Append the task's snapshot, when it changed since the last one sent. */
export const emitTask = (s: MapState, out: Out, state: TaskState): void => {
  const task = changedSnapshot(state)
  if (task !== undefined) emit(s, out, state.parentTaskId, { type: "Task", task })
}

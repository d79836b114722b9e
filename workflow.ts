/**
 * Dynamic workflows: the `task_progress` snapshots (phases and agents), the
 * run's record (`output_file`, or its copy beside the session), the agents'
 * transcript files followed as they grow (workflow/tail.ts), and stored runs rebuilt
 * for `read_session` (the run record, or journal + meta for an unfinished run).
 *
 * Layout (CLI 2.1.332, see testdata/workflow):
 *   <session dir>/subagents/workflows/<runId>/agent-<agentId>.jsonl  (+ .meta.json)
 *   <session dir>/subagents/workflows/<runId>/journal.jsonl
 *   <session dir>/workflows/<runId>.json                             (finished runs)
 * `transcriptDir` in the Workflow tool's result names the first folder.
 */
import { Effect } from "effect"
import { Fs } from "./sdk/plugin-api.ts"
import { basename, dirname, join } from "./sdk/paths.ts"
import type { TaskInfo, TaskStatus, WorkflowInfo, WorkflowPhase } from "./sdk/protocol.ts"
import { newTaskState, snapshot, type TaskState, taskStatusOf } from "./task.ts"
import { agentFile, parseLines } from "./workflow/tail.ts"
import {
  AgentMeta,
  conforms,
  JournalEntry,
  WorkflowAgentEntry,
  WorkflowLaunch,
  WorkflowPhaseEntry,
  WorkflowRecord,
} from "./wire.ts"

export { type AgentRecords, Tail, WorkflowTail } from "./workflow/tail.ts"

// ---------------------------------------------------------------------------
// Snapshots

/** The host id of a workflow agent: `<workflow task id>/<index>`. */
export const agentTaskId = (workflowTaskId: string, index: number): string => `${workflowTaskId}/${index}`

export interface WorkflowSnapshot {
  readonly phases: ReadonlyArray<WorkflowPhase>
  readonly agents: ReadonlyArray<WorkflowAgentEntry>
}

/** A `workflow_progress` array (a full snapshot) → its phases and agents, entries that fail their schema dropped. */
export const parseWorkflowProgress = (progress: ReadonlyArray<unknown>): WorkflowSnapshot => {
  const phases: WorkflowPhase[] = []
  const agents: WorkflowAgentEntry[] = []
  for (const entry of progress) {
    const type = (entry as { type?: unknown } | null)?.type
    if (type === "workflow_phase") {
      if (conforms(WorkflowPhaseEntry, entry)) phases.push({ index: entry.index, title: entry.title })
    } else if (type === "workflow_agent") {
      if (conforms(WorkflowAgentEntry, entry)) agents.push(entry)
    }
  }
  return { phases, agents }
}

/** An agent's state → status: `start` without `startedAt` waits for a slot. */
export const agentStatus = (entry: WorkflowAgentEntry): TaskStatus => {
  switch (entry.state) {
    case "start":
      return typeof entry.startedAt === "number" ? "Running" : "Waiting"
    case "done":
      return "Completed"
    case "error":
      return "Failed"
    default:
      return "Running"
  }
}

/** Copy a snapshot entry into a workflow agent's task state. */
export const applyAgentEntry = (state: TaskState, entry: WorkflowAgentEntry): void => {
  if (entry.agentId) state.agentId = entry.agentId
  state.title = entry.label ?? state.title ?? `Agent ${entry.index}`
  state.name = entry.agentType ?? state.name ?? "workflow-subagent"
  if (entry.model) state.model = entry.model
  if (entry.promptPreview) state.prompt = entry.promptPreview
  if (entry.phaseTitle) state.phase = entry.phaseTitle
  state.status = agentStatus(entry)
  state.finished = state.status === "Completed" || state.status === "Failed"
  if (entry.lastToolName)
    state.activity = entry.lastToolSummary
      ? `${entry.lastToolName}: ${entry.lastToolSummary}`
      : entry.lastToolName
  if (typeof entry.tokens === "number") state.usedTokens = entry.tokens
  if (typeof entry.toolCalls === "number") state.toolUses = entry.toolCalls
  if (typeof entry.durationMs === "number") state.durationMs = entry.durationMs
  if (entry.resultPreview) state.answer = entry.resultPreview
  if (entry.error) state.error = entry.error
}

/** A new workflow agent's task state under its workflow. */
export const newAgentState = (workflowTaskId: string, entry: WorkflowAgentEntry): TaskState => {
  const state = newTaskState(agentTaskId(workflowTaskId, entry.index), "workflow_agent")
  state.parentTaskId = workflowTaskId
  applyAgentEntry(state, entry)
  return state
}

/**
 * The Workflow tool's result (`async_launched`), when it is one. Checked by
 * the schema's compiled check, not parsed: the result is read as it came (a
 * Zod parse per result was a copy and its contexts, cold on every call).
 */
export const parseWorkflowLaunch = (toolUseResult: unknown): WorkflowLaunch | undefined => {
  if (!conforms(WorkflowLaunch, toolUseResult)) return undefined
  const launch = toolUseResult
  return launch.taskType === "local_workflow" || typeof launch.runId === "string" ? launch : undefined
}

// ---------------------------------------------------------------------------
// The run record

/** The `output_file` record or `workflows/<runId>.json`, from its text. */
export const parseWorkflowRecord = (text: string | null | undefined): WorkflowRecord | undefined => {
  if (typeof text !== "string" || text.trim() === "") return undefined
  try {
    const parsed = WorkflowRecord.safeParse(JSON.parse(text))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/** The script's return value as text. */
export const workflowResultText = (result: unknown): string | undefined => {
  if (result === undefined || result === null) return undefined
  return typeof result === "string" ? result : JSON.stringify(result, null, 2)
}

/** The `logs` of a record as lines. */
export const workflowLog = (logs: ReadonlyArray<unknown> | null | undefined): string[] | undefined =>
  logs === null || logs === undefined
    ? undefined
    : logs.map((line) => (typeof line === "string" ? line : JSON.stringify(line)))

/** `<session dir>` of a run's `transcriptDir` (`<session dir>/subagents/workflows/<runId>`). */
export const sessionDirOf = (transcriptDir: string): string | undefined => {
  const runs = dirname(transcriptDir)
  const subagents = dirname(runs)
  return basename(runs) === "workflows" && basename(subagents) === "subagents"
    ? dirname(subagents)
    : undefined
}

/** Where the CLI keeps a copy of the run's record beside the session. */
export const storedRecordPath = (transcriptDir: string, runId?: string): string | undefined => {
  const sessionDir = sessionDirOf(transcriptDir)
  const id = runId ?? basename(transcriptDir)
  return sessionDir === undefined ? undefined : join(sessionDir, "workflows", `${id}.json`)
}

export interface RecordSource {
  readonly outputFile?: string
  readonly transcriptDir?: string
  readonly runId?: string
}

/**
 * Read the run's record: `output_file`, else the copy beside the session.
 * The CLI writes it without waiting, so it is retried (`attempts` times,
 * `delayMs` apart). null when neither appears.
 */
export const readWorkflowRecord = (
  source: RecordSource,
  options: { readonly attempts?: number; readonly delayMs?: number } = {},
): Effect.Effect<WorkflowRecord | null, never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const attempts = Math.max(1, options.attempts ?? 5)
    const stored = source.transcriptDir ? storedRecordPath(source.transcriptDir, source.runId) : undefined
    const paths = [source.outputFile, stored].filter((p): p is string => typeof p === "string" && p !== "")
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) yield* Effect.sleep(options.delayMs ?? 200)
      for (const path of paths) {
        const record = parseWorkflowRecord(yield* fs.read(path))
        if (record !== undefined) return record
      }
    }
    return null
  })

// ---------------------------------------------------------------------------
// Stored runs

export interface StoredAgent {
  readonly agentId?: string
  readonly task: TaskInfo
}

export interface StoredWorkflow {
  readonly workflow: TaskInfo
  readonly agents: ReadonlyArray<StoredAgent>
}

export interface StoredRunInput {
  /** The Workflow call's id in the main transcript (the live task id). */
  readonly taskId: string
  readonly parentTaskId?: string
  /** The Workflow call's launch result (`toolUseResult`), for name and summary. */
  readonly launch?: WorkflowLaunch
  /** `workflows/<runId>.json`, when the run finished. */
  readonly record?: WorkflowRecord | null
  /** `journal.jsonl` lines, for a run the process left unfinished. */
  readonly journal?: ReadonlyArray<unknown>
  /** agentId → its `.meta.json`. */
  readonly metas?: ReadonlyMap<string, AgentMeta>
}

const workflowInfo = (
  name: string | undefined,
  runId: string | undefined,
  phases: ReadonlyArray<WorkflowPhase>,
  record?: WorkflowRecord | null,
): WorkflowInfo => {
  const result = workflowResultText(record?.result)
  const log = workflowLog(record?.logs)
  return {
    ...(name === undefined ? {} : { name }),
    ...(runId === undefined ? {} : { run_id: runId }),
    phases,
    ...(result === undefined ? {} : { result }),
    ...(log === undefined ? {} : { log }),
  }
}

/**
 * A stored run → the workflow task and its agents' tasks, as the live run
 * showed them: from the run record's final snapshot, or (unfinished run) from
 * the journal's started/result/failed lines and the agents' meta files. An
 * agent the journal started but never finished, and the run itself, read back
 * Cancelled: the process ended under them.
 */
export const storedWorkflowTasks = (input: StoredRunInput): StoredWorkflow => {
  const { taskId, record, launch } = input
  const name = record?.workflowName ?? launch?.workflowName ?? undefined
  const runId = record?.runId ?? launch?.runId ?? undefined
  const title = record?.summary ?? launch?.summary ?? name ?? "Workflow"
  const base = newTaskState(taskId, "workflow")
  base.title = title
  // Live, the launch result (`async_launched`) made the run a background task: so does its stored copy.
  if (launch !== undefined) base.background = true
  if (name) base.name = name
  if (input.parentTaskId) base.parentTaskId = input.parentTaskId

  if (record) {
    const snap = parseWorkflowProgress(record.workflowProgress ?? [])
    const phases =
      snap.phases.length > 0
        ? snap.phases
        : (record.phases ?? []).map((p, i) => ({ index: i + 1, title: p.title }))
    const agents = snap.agents.map((entry) => {
      const state = newAgentState(taskId, entry)
      if (state.status === "Running" || state.status === "Waiting") state.status = "Cancelled"
      return { ...(entry.agentId ? { agentId: entry.agentId } : {}), task: snapshot(state) }
    })
    base.status = taskStatusOf(record.status) ?? "Completed"
    base.workflow = workflowInfo(name, runId, phases, record)
    if (typeof record.totalTokens === "number") base.usedTokens = record.totalTokens
    if (typeof record.totalToolCalls === "number") base.toolUses = record.totalToolCalls
    if (typeof record.durationMs === "number") base.durationMs = record.durationMs
    if (record.error) base.error = record.error
    base.answer = workflowResultText(record.result)
    return { workflow: snapshot(base), agents }
  }

  // Unfinished: the journal says who started and who finished.
  const phases: WorkflowPhase[] = []
  const phaseIndex = (title: string | undefined): void => {
    if (title && !phases.some((p) => p.title === title)) phases.push({ index: phases.length + 1, title })
  }
  const order: string[] = []
  const states = new Map<string, TaskState>()
  for (const line of input.journal ?? []) {
    const parsed = JournalEntry.safeParse(line)
    if (!parsed.success || !parsed.data.agentId) continue
    const entry = parsed.data
    const agentId = entry.agentId as string
    let state = states.get(agentId)
    if (state === undefined) {
      const meta = input.metas?.get(agentId)
      state = newTaskState(agentTaskId(taskId, order.length + 1), "workflow_agent")
      state.parentTaskId = taskId
      state.agentId = agentId
      state.name = meta?.agentType ?? "workflow-subagent"
      state.title = entry.label ?? meta?.description ?? `Agent ${order.length + 1}`
      const phase = entry.phase ?? meta?.workflowPhase ?? undefined
      if (phase) state.phase = phase
      if (meta?.model) state.model = meta.model
      phaseIndex(phase)
      order.push(agentId)
      states.set(agentId, state)
    }
    if (entry.type === "result") {
      state.status = "Completed"
      const answer = workflowResultText(entry.result)
      if (answer !== undefined) state.answer = answer
    } else if (entry.type === "failed") {
      state.status = "Failed"
      state.error = entry.error ?? workflowResultText(entry.result)
    }
  }
  const agents = order.map((agentId) => {
    const state = states.get(agentId) as TaskState
    if (state.status === "Running") state.status = "Cancelled"
    return { agentId, task: snapshot(state) }
  })
  base.status = "Cancelled"
  base.summary = "The run did not finish."
  base.workflow = workflowInfo(name, runId, phases)
  return { workflow: snapshot(base), agents }
}

export interface StoredRunFiles {
  readonly input: StoredRunInput
  /** agentId → the agent's transcript records (for the history's record mapper). */
  readonly records: ReadonlyMap<string, unknown[]>
}

/**
 * Read a stored run through the broker: `<session dir>/workflows/<runId>.json`
 * if it exists, else `journal.jsonl`; the meta and transcript file of every
 * agent in `<session dir>/subagents/workflows/<runId>/`.
 */
export const readStoredRun = (
  sessionDir: string,
  runId: string,
  taskId: string,
  launch?: WorkflowLaunch,
): Effect.Effect<StoredRunFiles, never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const dir = join(sessionDir, "subagents", "workflows", runId)
    const record = parseWorkflowRecord(yield* fs.read(join(sessionDir, "workflows", `${runId}.json`)))
    const metas = new Map<string, AgentMeta>()
    const records = new Map<string, unknown[]>()
    for (const entry of (yield* fs.list(dir)) ?? []) {
      const meta = /^agent-(.+)\.meta\.json$/.exec(entry.name)
      if (meta?.[1]) {
        const text = yield* fs.read(join(dir, entry.name))
        try {
          const parsed = AgentMeta.safeParse(JSON.parse(text ?? ""))
          if (parsed.success) metas.set(meta[1], parsed.data)
        } catch {
          // an unreadable meta leaves the journal's label
        }
        continue
      }
      const file = agentFile.exec(entry.name)
      if (file?.[1]) records.set(file[1], parseLines((yield* fs.read(join(dir, entry.name))) ?? ""))
    }
    const journal =
      record === undefined ? parseLines((yield* fs.read(join(dir, "journal.jsonl"))) ?? "") : undefined
    return {
      input: {
        taskId,
        ...(launch === undefined ? {} : { launch }),
        ...(record === undefined ? {} : { record }),
        ...(journal === undefined ? {} : { journal }),
        metas,
      },
      records,
    }
  })

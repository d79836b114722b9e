/**
 * stream-json frames → host agent events. Plain functions over a little
 * per-session state; no I/O. The session feeds every decoded frame to `map`
 * and acts on the returned signals (run end, state, init, workflows to follow,
 * usage limits, a failed compaction).
 *
 * The rules (product notes, "Decisions", checked against CLI 2.1.332):
 * - Text and reasoning stream from `stream_event` deltas keyed
 *   `<message id>:<block index>`; the `assistant` frame that follows is used
 *   only for blocks the stream never delivered. Every content block arrives as
 *   its own `assistant` frame sharing the message id, with the block at array
 *   position 0 (subagents have no stream at all), so blocks are counted per
 *   message id to find their real index.
 * - Subagents are tasks under the spawning Agent/Task call's id; the CLI's
 *   agentId is a side index. A forwarded frame can precede `task_started`, so
 *   it declares the task from the call. Finished tasks are kept: late frames
 *   still land in them.
 * - Workflows are tasks under the Workflow call's id with their snapshot's
 *   agents as child tasks `<workflow id>/<index>`.
 */
import type { AgentEvent, NoticeLevel, RunUsage, ToolCall, UsageLimits } from "./sdk/protocol.ts"
import {
  changedSnapshot,
  isTerminal,
  newTaskState,
  spawnAnswer,
  type TaskKind,
  type TaskState,
  taskStatusOf,
  taskTitle,
} from "./task.ts"
import { describeToolCall, planFromTodoWrite, TaskList, toolResultOf } from "./tools.ts"
import { limitsFromRateLimitEvent, rejectionOf } from "./limits.ts"
import {
  applyAgentEntry,
  agentTaskId,
  newAgentState,
  parseWorkflowLaunch,
  parseWorkflowProgress,
  runStatus,
  workflowLog,
  workflowResultText,
} from "./workflow.ts"
import {
  AssistantRecord,
  type AssistantFrame,
  type ContentBlock,
  type Frame,
  isKnownFrame,
  type ResultFrame,
  type StreamEvent,
  type TaskNotification,
  type TaskProgress,
  type TaskStarted,
  type TaskUpdated,
  type Usage,
  type UserFrame,
  UserRecord,
  WorkflowRecord,
} from "./wire.ts"

// ---------------------------------------------------------------------------
// Output

export type Signal =
  | {
      readonly type: "result"
      readonly subtype: string
      readonly isError: boolean
      readonly usage: RunUsage
      readonly errors: string[]
      readonly userMessageUuids: string[]
      readonly text?: string
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
      readonly rejected?: { readonly window?: string; readonly resetsAt?: string; readonly message: string }
    }
  | { readonly type: "compact_failed"; readonly message: string }

export interface MapOutput {
  readonly events: AgentEvent[]
  readonly signals: Signal[]
}

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

/** An event without the fields every event gets from the mapper. */
type EventBody = AgentEvent extends infer E
  ? E extends AgentEvent
    ? Omit<E, "session_id" | "run_id" | "task_id">
    : never
  : never

interface CallInfo {
  readonly call: ToolCall
  /** The task the call ran in (undefined: the main conversation). */
  readonly taskId: string | undefined
}

const agentTools = new Set(["Agent", "Task"])
const MAX_MESSAGES = 4096

const noticeLevel = (level: string | null | undefined): NoticeLevel =>
  level === "error" ? "error" : level === "warning" ? "warning" : "info"

const textOfContent = (content: string | ReadonlyArray<ContentBlock>): string | undefined => {
  if (typeof content === "string") return content
  let text: string | undefined
  for (const block of content)
    if (block.type === "text" && typeof block.text === "string") text = (text ?? "") + block.text
  return text
}

const isTaskNotification = (text: string, origin: { kind?: string | null } | null | undefined): boolean =>
  origin?.kind === "task-notification" || text.trimStart().startsWith("<task-notification>")

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)
const strings = (values: ReadonlyArray<unknown> | null | undefined): string[] =>
  values ? values.filter((v): v is string => typeof v === "string") : []

// ---------------------------------------------------------------------------

export const makeMapper = (options: { sessionId: string; model?: string }): Mapper => {
  const sessionId = options.sessionId
  let model = options.model

  const calls = new Map<string, CallInfo>()
  const tasks = new Map<string, TaskState>()
  const byAgent = new Map<string, string>()
  const byCliTask = new Map<string, string>()
  /** parent_tool_use_id → task (the Agent call itself, a SendMessage that gave it work). */
  const routes = new Map<string, string>()
  /** CLI task ids that are not published (local_bash and other kinds). */
  const ignoredCliTasks = new Set<string>()
  const streamed = new Set<string>()
  const blockCounts = new Map<string, number>()
  const streamMessage = new Map<string, string>()
  const infoLines = new Map<string, Set<string>>()
  const taskLists = new Map<string, TaskList>()
  const promptSeen = new Set<string>()
  let lastUsage: Usage | undefined
  let lastUsageMessage: string | undefined
  let pendingSummary: string | undefined
  let compactPending = false

  // -- emitting ------------------------------------------------------------

  const push = (
    out: AgentEvent[],
    runId: string | undefined,
    taskId: string | undefined,
    body: EventBody,
  ) => {
    if (taskId !== undefined && tasks.get(taskId)?.hidden === true) return
    // Every body is a fresh literal from its call site: stamp it in place rather than copy it.
    const event = body as Record<string, unknown>
    event.session_id = sessionId
    if (runId !== undefined) event.run_id = runId
    if (taskId !== undefined) event.task_id = taskId
    out.push(event as unknown as AgentEvent)
  }

  const emitTask = (out: AgentEvent[], runId: string | undefined, state: TaskState) => {
    const task = changedSnapshot(state)
    if (task !== undefined) push(out, runId, state.parentTaskId, { type: "Task", task })
  }

  // -- bookkeeping ---------------------------------------------------------

  const countBlocks = (messageId: string, count: number): number => {
    const base = blockCounts.get(messageId) ?? 0
    blockCounts.set(messageId, base + count)
    if (blockCounts.size > MAX_MESSAGES) {
      // Old messages are done: forget the oldest half (Maps keep insertion order).
      let drop = MAX_MESSAGES / 2
      for (const key of blockCounts.keys()) {
        if (drop-- <= 0) break
        blockCounts.delete(key)
      }
      if (streamed.size > MAX_MESSAGES * 4) streamed.clear()
    }
    return base
  }

  const indexAgent = (state: TaskState, agentId: string | null | undefined) => {
    if (!agentId) return
    state.agentId = agentId
    byAgent.set(agentId, state.id)
  }

  /** Declare a subagent task from its spawning call (or what a forwarded frame says). */
  const declareAgent = (
    out: AgentEvent[],
    runId: string | undefined,
    callId: string,
    hints: { agentId?: string | null; description?: string | null; subagentType?: string | null },
    announce = true,
  ): TaskState => {
    let state = tasks.get(callId)
    if (state === undefined) {
      state = newTaskState(callId, "agent")
      const call = calls.get(callId)
      const input = (call?.call.input ?? {}) as Record<string, unknown>
      if (call?.taskId !== undefined) state.parentTaskId = call.taskId
      state.title = taskTitle(str(input.description) ?? hints.description, str(input.prompt))
      const name = str(input.subagent_type) ?? hints.subagentType ?? undefined
      if (name !== undefined) state.name = name
      const prompt = str(input.prompt)
      if (prompt !== undefined) state.prompt = prompt
      if (typeof input.run_in_background === "boolean") state.background = input.run_in_background
      tasks.set(callId, state)
      routes.set(callId, callId)
    }
    indexAgent(state, hints.agentId)
    if (announce) emitTask(out, runId, state)
    return state
  }

  /** The task a forwarded frame belongs to (undefined: the main conversation). */
  const taskOf = (
    out: AgentEvent[],
    runId: string | undefined,
    parent: string | null | undefined,
    agentId: string | null | undefined,
    frame: Readonly<Record<string, unknown>>,
  ): string | undefined => {
    if (parent) {
      const routed = routes.get(parent)
      if (routed !== undefined) {
        const state = tasks.get(routed)
        if (state !== undefined && agentId && state.agentId === undefined) indexAgent(state, agentId)
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
    const call = calls.get(parent)
    if (call !== undefined && !agentTools.has(call.call.name)) return call.taskId
    return declareAgent(out, runId, parent, {
      agentId,
      description: str(frame.task_description) ?? null,
      subagentType: str(frame.subagent_type) ?? null,
    }).id
  }

  const taskListOf = (taskId: string | undefined): TaskList => {
    const key = taskId ?? ""
    let list = taskLists.get(key)
    if (list === undefined) {
      list = new TaskList()
      taskLists.set(key, list)
    }
    return list
  }

  // -- tool calls ----------------------------------------------------------

  const startToolCall = (
    out: AgentEvent[],
    runId: string | undefined,
    block: ContentBlock,
    taskId: string | undefined,
  ) => {
    const id = block.id
    const name = block.name
    if (typeof id !== "string" || typeof name !== "string" || calls.has(id)) return
    const input = block.input ?? {}
    const d = describeToolCall(name, input)
    const call: ToolCall = {
      id,
      name,
      kind: d.kind,
      title: d.title,
      input,
      ...(d.diff === undefined ? {} : { diff: d.diff }),
      ...(d.new_text === undefined ? {} : { new_text: d.new_text }),
      ...(d.path === undefined ? {} : { path: d.path }),
      status: "Running",
      ...(taskId === undefined ? {} : { task_id: taskId }),
    }
    calls.set(id, { call, taskId })
    push(out, runId, taskId, { type: "ToolCallStarted", call })
    if (name === "TodoWrite") {
      const entries = planFromTodoWrite(input)
      if (entries !== undefined) push(out, runId, taskId, { type: "Plan", entries })
    } else if (name === "SendMessage") {
      // More work for an agent: its next frames come under this call.
      const to = str((input as Record<string, unknown>).to)
      const target = to === undefined ? undefined : (byAgent.get(to) ?? findTaskByName(to))
      if (target !== undefined) {
        routes.set(id, target)
        const state = tasks.get(target)
        if (state !== undefined && isTerminal(state.status)) {
          state.status = "Running"
          state.finished = false
          state.answer = undefined
          emitTask(out, runId, state)
        }
      }
    }
  }

  const findTaskByName = (name: string): string | undefined => {
    for (const state of tasks.values()) if (state.kind === "agent" && state.name === name) return state.id
    return undefined
  }

  const finishToolCall = (
    out: AgentEvent[],
    runId: string | undefined,
    block: ContentBlock,
    toolUseResult: unknown,
    taskId: string | undefined,
  ) => {
    const id = block.tool_use_id
    if (typeof id !== "string") return
    const known = calls.get(id)
    const started: ToolCall = known?.call ?? {
      id,
      name: "",
      kind: "other",
      title: "Tool",
      input: {},
      status: "Running",
    }
    const callTask = known?.taskId ?? taskId
    const result = toolResultOf(block.content, toolUseResult, block.is_error === true, started.name)
    const call: ToolCall = {
      ...started,
      status: result.status,
      output: result.output,
      output_text: result.output_text,
      ...(result.exit_code === undefined ? {} : { exit_code: result.exit_code }),
    }
    // A finished call is forgotten (its output can be large); an agent call stays for late child frames.
    if (!agentTools.has(started.name)) calls.delete(id)
    push(out, runId, callTask, { type: "ToolCallFinished", call })
    infoLines.delete(id)

    const name = started.name
    if (agentTools.has(name))
      finishAgentCall(out, runId, id, toolUseResult, result.output_text, block.is_error === true)
    else if (name === "Workflow") launchWorkflow(out, runId, id, toolUseResult)
    else if (block.is_error !== true) {
      const list = name.startsWith("Task") ? taskListOf(callTask) : undefined
      const changed =
        list === undefined
          ? false
          : name === "TaskCreate"
            ? list.created(started.input, toolUseResult)
            : name === "TaskUpdate"
              ? list.updated(started.input)
              : name === "TaskList"
                ? list.listed(toolUseResult)
                : false
      if (changed && list !== undefined) push(out, runId, callTask, { type: "Plan", entries: list.plan() })
    }
  }

  /** The spawning call's result: a foreground agent's answer, or a background launch. */
  const finishAgentCall = (
    out: AgentEvent[],
    runId: string | undefined,
    callId: string,
    toolUseResult: unknown,
    text: string,
    isError: boolean,
  ) => {
    const r = (typeof toolUseResult === "object" && toolUseResult !== null ? toolUseResult : {}) as Record<
      string,
      unknown
    >
    const state = tasks.get(routes.get(callId) ?? callId)
    if (state === undefined) return
    indexAgent(state, str(r.agentId))
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
    emitTask(out, runId, state)
  }

  const workflowState = (callId: string): TaskState => {
    let state = tasks.get(callId)
    if (state === undefined) {
      state = newTaskState(callId, "workflow")
      const call = calls.get(callId)
      if (call?.taskId !== undefined) state.parentTaskId = call.taskId
      state.title = call?.call.title
      state.workflow = { phases: [] }
      tasks.set(callId, state)
    }
    state.workflow ??= { phases: [] }
    return state
  }

  const workflowSignals: Signal[] = []

  const launchWorkflow = (
    out: AgentEvent[],
    runId: string | undefined,
    callId: string,
    toolUseResult: unknown,
  ) => {
    const launch = parseWorkflowLaunch(toolUseResult)
    if (launch === undefined) return
    const state = workflowState(callId)
    if (launch.taskId) {
      state.cliTaskId = launch.taskId
      byCliTask.set(launch.taskId, callId)
    }
    if (launch.workflowName) state.name ??= launch.workflowName
    state.workflow = {
      ...(state.workflow ?? { phases: [] }),
      ...(launch.workflowName ? { name: launch.workflowName } : {}),
      ...(launch.runId ? { run_id: launch.runId } : {}),
    }
    state.background = true
    emitTask(out, runId, state)
    workflowSignals.push({
      type: "workflow",
      taskId: callId,
      ...(launch.runId ? { runId: launch.runId } : {}),
      ...(launch.transcriptDir ? { transcriptDir: launch.transcriptDir } : {}),
      finished: false,
    })
  }

  // -- message frames ------------------------------------------------------

  const onStreamEvent = (out: AgentEvent[], runId: string | undefined, frame: StreamEvent) => {
    const event = frame.event
    const scope = frame.parent_tool_use_id ?? ""
    switch (event.type) {
      case "message_start": {
        const id = event.message?.id ?? frame.api_message_id
        if (id) streamMessage.set(scope, id)
        if (scope === "" && event.message?.usage) {
          lastUsage = event.message.usage
          lastUsageMessage = id ?? undefined
        }
        return
      }
      case "content_block_start":
      case "content_block_delta": {
        const messageId = frame.api_message_id ?? streamMessage.get(scope)
        if (messageId === undefined || typeof event.index !== "number") return
        const key = `${messageId}:${event.index}`
        let text: string | null | undefined
        let reasoning = false
        if (event.type === "content_block_start") {
          const blockType = event.content_block?.type
          if (blockType !== "text" && blockType !== "thinking") return
          streamed.add(key)
          reasoning = blockType === "thinking"
          const block = event.content_block as Record<string, unknown>
          text = str(reasoning ? block.thinking : block.text)
        } else {
          const delta = event.delta
          if (delta?.type === "text_delta") text = delta.text
          else if (delta?.type === "thinking_delta") {
            text = delta.thinking
            reasoning = true
          } else return
          streamed.add(key)
        }
        if (!text) return
        const taskId = frame.parent_tool_use_id
          ? taskOf(out, runId, frame.parent_tool_use_id, null, frame)
          : undefined
        push(out, runId, taskId, { type: reasoning ? "ReasoningDelta" : "TextDelta", item_id: key, text })
        return
      }
      case "message_delta":
        if (scope === "" && event.usage) lastUsage = { ...lastUsage, ...event.usage }
        return
      default:
        return
    }
  }

  const onAssistant = (
    out: AgentEvent[],
    runId: string | undefined,
    message: AssistantFrame["message"],
    taskId: string | undefined,
    fallbackId: string,
  ) => {
    const messageId = message.id ?? fallbackId
    const blocks: ReadonlyArray<ContentBlock> =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
    if (taskId === undefined) {
      if (message.usage && lastUsageMessage !== messageId) {
        lastUsage = message.usage
        lastUsageMessage = messageId
      }
    } else {
      const state = tasks.get(taskId)
      if (state !== undefined && state.model === undefined && message.model && state.kind !== "workflow") {
        state.model = message.model
        emitTask(out, runId, state)
      }
    }
    const base = countBlocks(messageId, blocks.length)
    for (let i = 0; i < blocks.length; i++) {
      const block = blocks[i] as ContentBlock
      const key = `${messageId}:${base + i}`
      switch (block.type) {
        case "text":
          if (typeof block.text !== "string") break
          if (taskId !== undefined && block.text.trim() !== "") {
            const state = tasks.get(taskId)
            if (state !== undefined) state.lastText = block.text
          }
          if (!streamed.has(key) && block.text !== "")
            push(out, runId, taskId, { type: "TextDelta", item_id: key, text: block.text })
          break
        case "thinking":
          if (!streamed.has(key) && typeof block.thinking === "string" && block.thinking !== "")
            push(out, runId, taskId, { type: "ReasoningDelta", item_id: key, text: block.thinking })
          break
        case "tool_use":
        case "server_tool_use":
          startToolCall(out, runId, block, taskId)
          break
      }
    }
  }

  const onUser = (
    out: AgentEvent[],
    runId: string | undefined,
    frame: {
      message: UserFrame["message"]
      uuid?: string | null
      isSynthetic?: boolean | null
      isCompactSummary?: boolean | null
      isReplay?: boolean | null
      origin?: { kind?: string | null } | null
    },
    toolUseResult: unknown,
    taskId: string | undefined,
  ) => {
    const content = frame.message.content
    if (typeof content !== "string") {
      let results = 0
      for (const block of content) if (block.type === "tool_result") results++
      if (results > 0) {
        for (const block of content)
          if (block.type === "tool_result")
            finishToolCall(out, runId, block, results === 1 ? toolUseResult : undefined, taskId)
        return
      }
    }
    const text = textOfContent(content)
    if (text === undefined) return
    if (taskId === undefined) {
      if (frame.isCompactSummary === true || (frame.isSynthetic === true && compactPending)) {
        if (compactPending) {
          compactPending = false
          push(out, runId, undefined, { type: "Compacted", summary: text })
        } else pendingSummary = text
      }
      // Other main-chat user frames are the host's own prompts, replays or notifications.
      return
    }
    if (frame.isReplay === true || isTaskNotification(text, frame.origin)) return
    const state = tasks.get(taskId)
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
    if (text.trimStart().startsWith("[Request interrupted by user")) {
      push(out, runId, taskId, { type: "Notice", level: "info", text: "Stopped." })
      return
    }
    push(out, runId, taskId, {
      type: "UserMessage",
      item_id: frame.uuid ?? `${taskId}:user:${promptSeen.size}`,
      text,
    })
  }

  // -- task frames ---------------------------------------------------------

  const hostTaskOf = (taskId: string, toolUseId?: string | null): TaskState | undefined => {
    const host = byCliTask.get(taskId) ?? byAgent.get(taskId)
    if (host !== undefined) return tasks.get(host)
    if (ignoredCliTasks.has(taskId)) return undefined
    return toolUseId ? tasks.get(toolUseId) : undefined
  }

  const onTaskStarted = (out: AgentEvent[], runId: string | undefined, frame: TaskStarted) => {
    const type = frame.task_type ?? (frame.subagent_type ? "local_agent" : undefined)
    if (type === "local_workflow") {
      const callId = frame.tool_use_id ?? frame.task_id
      const state = workflowState(callId)
      state.cliTaskId = frame.task_id
      byCliTask.set(frame.task_id, callId)
      state.title =
        taskTitle(frame.description, undefined) ?? frame.workflow_name ?? state.title ?? "Workflow"
      if (frame.workflow_name) {
        state.name = frame.workflow_name
        state.workflow = { ...(state.workflow ?? { phases: [] }), name: frame.workflow_name }
      }
      if (frame.prompt) state.prompt = frame.prompt
      state.hidden = frame.skip_transcript === true || frame.ambient === true
      state.status = "Running"
      state.finished = false
      emitTask(out, runId, state)
      return
    }
    if (type !== "local_agent") {
      ignoredCliTasks.add(frame.task_id)
      return
    }
    const existing = byAgent.get(frame.task_id)
    const callId = frame.tool_use_id ?? existing ?? frame.task_id
    if (existing !== undefined && existing !== callId) routes.set(callId, existing) // re-sent after SendMessage
    const state = tasks.get(existing ?? callId) ?? declareAgent(out, runId, callId, {}, false)
    indexAgent(state, frame.task_id)
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
    emitTask(out, runId, state)
  }

  const applySnapshot = (
    out: AgentEvent[],
    runId: string | undefined,
    state: TaskState,
    progress: ReadonlyArray<unknown>,
  ) => {
    const snap = parseWorkflowProgress(progress)
    if (snap.phases.length > 0)
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
    emitTask(out, runId, state)
    for (const child of children) emitTask(out, runId, child)
  }

  const onTaskProgress = (out: AgentEvent[], runId: string | undefined, frame: TaskProgress) => {
    const state = hostTaskOf(frame.task_id, frame.tool_use_id)
    if (state === undefined) return
    const usage = frame.usage
    if (typeof usage?.total_tokens === "number") state.usedTokens = usage.total_tokens
    if (typeof usage?.tool_uses === "number") state.toolUses = usage.tool_uses
    if (typeof usage?.duration_ms === "number") state.durationMs = usage.duration_ms
    if (state.kind === "workflow") {
      // "<phase>: <label>" of the agent that moved last; `summary` is the script's description.
      if (
        frame.description &&
        frame.workflow_progress?.some((e) => (e as { type?: unknown } | null)?.type === "workflow_agent")
      )
        state.activity = frame.description
      if (frame.workflow_progress) applySnapshot(out, runId, state, frame.workflow_progress)
      else emitTask(out, runId, state)
      return
    }
    if (frame.last_tool_name) state.activity = frame.last_tool_name
    if (frame.summary) state.summary = frame.summary
    emitTask(out, runId, state)
  }

  const onTaskUpdated = (out: AgentEvent[], runId: string | undefined, frame: TaskUpdated) => {
    const state = hostTaskOf(frame.task_id)
    if (state === undefined) return
    const patch = frame.patch
    const status = taskStatusOf(patch.status)
    if (status !== undefined) state.status = status
    if (typeof patch.is_backgrounded === "boolean") state.background = patch.is_backgrounded
    if (patch.error) state.error = patch.error
    if (isTerminal(state.status)) state.finished = true
    emitTask(out, runId, state)
  }

  const onTaskNotification = (out: AgentEvent[], runId: string | undefined, frame: TaskNotification) => {
    const state = hostTaskOf(frame.task_id, frame.tool_use_id)
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
    if (state.kind === "workflow") {
      emitTask(out, runId, state)
      workflowSignals.push({
        type: "workflow",
        taskId: state.id,
        ...(state.workflow?.run_id ? { runId: state.workflow.run_id } : {}),
        ...(frame.output_file ? { outputFile: frame.output_file } : {}),
        finished: true,
      })
      return
    }
    emitTask(out, runId, state)
  }

  // -- result --------------------------------------------------------------

  const contextWindow = (frame: ResultFrame): number | undefined => {
    const usage = frame.modelUsage
    if (!usage) return undefined
    const keys = Object.keys(usage)
    const key =
      model === undefined
        ? keys.length === 1
          ? keys[0]
          : undefined
        : (keys.find((k) => k === model) ??
          keys.find((k) => k.startsWith(model as string) || (model as string).startsWith(k)) ??
          (keys.length === 1 ? keys[0] : undefined))
    const entry = key === undefined ? undefined : usage[key]
    const window =
      typeof entry === "object" && entry !== null
        ? (entry as { contextWindow?: unknown }).contextWindow
        : undefined
    return typeof window === "number" ? window : undefined
  }

  const runUsage = (frame: ResultFrame): RunUsage => {
    const u = frame.usage ?? {}
    const thinking = u.output_tokens_details?.thinking_tokens
    const window = contextWindow(frame)
    const last = lastUsage
    const used =
      last === undefined
        ? undefined
        : (last.input_tokens ?? 0) +
          (last.cache_read_input_tokens ?? 0) +
          (last.cache_creation_input_tokens ?? 0) +
          (last.output_tokens ?? 0)
    return {
      input_tokens: u.input_tokens ?? 0,
      output_tokens: u.output_tokens ?? 0,
      ...(typeof u.cache_read_input_tokens === "number"
        ? { cache_read_tokens: u.cache_read_input_tokens }
        : {}),
      ...(typeof u.cache_creation_input_tokens === "number"
        ? { cache_write_tokens: u.cache_creation_input_tokens }
        : {}),
      ...(typeof thinking === "number" ? { thinking_tokens: thinking } : {}),
      ...(window === undefined ? {} : { context_window: window }),
      ...(used === undefined ? {} : { context_used: used }),
      ...(typeof frame.total_cost_usd === "number" ? { cost_usd: frame.total_cost_usd } : {}),
      ...(typeof frame.duration_ms === "number" ? { duration_ms: frame.duration_ms } : {}),
      ...(typeof frame.num_turns === "number" ? { num_turns: frame.num_turns } : {}),
    }
  }

  // -- the frame switch ----------------------------------------------------

  const map = (frame: Frame, runId: string | undefined): MapOutput => {
    const events: AgentEvent[] = []
    const signals: Signal[] = []
    if (!isKnownFrame(frame)) return { events, signals }
    switch (frame.type) {
      case "stream_event":
        onStreamEvent(events, runId, frame)
        break
      case "assistant": {
        const taskId = taskOf(events, runId, frame.parent_tool_use_id, frame.agent_id, frame)
        onAssistant(events, runId, frame.message, taskId, frame.uuid ?? "message")
        break
      }
      case "user": {
        const taskId = taskOf(events, runId, frame.parent_tool_use_id, frame.agent_id, frame)
        onUser(events, runId, frame, frame.tool_use_result, taskId)
        break
      }
      case "result":
        if (compactPending) {
          compactPending = false
          push(events, runId, undefined, { type: "Compacted", summary: pendingSummary ?? "" })
          pendingSummary = undefined
        }
        signals.push({
          type: "result",
          subtype: frame.subtype,
          isError: frame.is_error === true || frame.subtype !== "success",
          usage: runUsage(frame),
          errors: frame.errors ?? [],
          userMessageUuids:
            frame.user_message_uuids ?? (frame.user_message_uuid ? [frame.user_message_uuid] : []),
          ...(typeof frame.result === "string" ? { text: frame.result } : {}),
        })
        break
      case "rate_limit_event": {
        const limits = limitsFromRateLimitEvent(frame.rate_limit_info)
        const rejected = rejectionOf(frame.rate_limit_info)
        push(events, runId, undefined, { type: "UsageLimits", limits })
        signals.push({ type: "usage_limits", limits, ...(rejected === undefined ? {} : { rejected }) })
        break
      }
      case "system":
        switch (frame.subtype) {
          case "init":
            model = frame.model
            signals.push({
              type: "init",
              model: frame.model,
              cliSessionId: frame.session_id ?? "",
              ...(frame.permissionMode ? { permissionMode: frame.permissionMode } : {}),
              tools: strings(frame.tools),
              skills: (frame.skills ?? []).flatMap((s) =>
                typeof s === "string"
                  ? [s]
                  : typeof (s as { name?: unknown })?.name === "string"
                    ? [(s as { name: string }).name]
                    : [],
              ),
              slashCommands: strings(frame.slash_commands),
            })
            break
          case "session_state_changed":
            signals.push({ type: "state", state: frame.state })
            break
          case "status":
            if (frame.compact_result === "failed") {
              const message = frame.compact_error
                ? `Compaction failed: ${frame.compact_error}`
                : "Compaction failed."
              push(events, runId, undefined, { type: "Notice", level: "error", text: message })
              signals.push({ type: "compact_failed", message })
            }
            break
          case "compact_boundary":
            if (pendingSummary !== undefined) {
              push(events, runId, undefined, { type: "Compacted", summary: pendingSummary })
              pendingSummary = undefined
            } else compactPending = true
            break
          case "informational": {
            const toolUseId = frame.tool_use_id
            if (toolUseId) {
              let seen = infoLines.get(toolUseId)
              if (seen === undefined) {
                seen = new Set()
                infoLines.set(toolUseId, seen)
              }
              if (seen.has(frame.content)) break
              seen.add(frame.content)
              push(events, runId, calls.get(toolUseId)?.taskId, {
                type: "output_delta",
                tool_call_id: toolUseId,
                text: frame.content,
              })
            } else
              push(events, runId, undefined, {
                type: "Notice",
                level: noticeLevel(frame.level),
                text: frame.content,
              })
            break
          }
          case "task_started":
            onTaskStarted(events, runId, frame)
            break
          case "task_progress":
            onTaskProgress(events, runId, frame)
            break
          case "task_updated":
            onTaskUpdated(events, runId, frame)
            break
          case "task_notification":
            onTaskNotification(events, runId, frame)
            break
          case "api_retry": {
            const status = typeof frame.error_status === "number" ? ` ${frame.error_status}` : ""
            const attempt =
              typeof frame.attempt === "number"
                ? ` (attempt ${frame.attempt}${typeof frame.max_retries === "number" ? ` of ${frame.max_retries}` : ""})`
                : ""
            push(events, runId, undefined, {
              type: "Notice",
              level: "warning",
              text: `API error${status}; retrying${attempt}.`,
            })
            break
          }
        }
        break
    }
    if (workflowSignals.length > 0) signals.push(...workflowSignals.splice(0))
    return { events, signals }
  }

  // -- workflow agents' transcripts ----------------------------------------

  const mapAgentRecords = (taskId: string, records: unknown[], runId?: string): AgentEvent[] => {
    const events: AgentEvent[] = []
    const state = tasks.get(taskId)
    for (const record of records) {
      const type = (record as { type?: unknown } | null)?.type
      if (type === "assistant") {
        const parsed = AssistantRecord.safeParse(record)
        if (!parsed.success) continue
        onAssistant(events, runId, parsed.data.message, taskId, parsed.data.uuid ?? `${taskId}:message`)
      } else if (type === "user") {
        const parsed = UserRecord.safeParse(record)
        if (!parsed.success || parsed.data.isMeta === true) continue
        onUser(events, runId, parsed.data, parsed.data.toolUseResult, taskId)
      }
    }
    if (state !== undefined) emitTask(events, runId, state)
    workflowSignals.length = 0
    return events
  }

  const finishWorkflow = (taskId: string, record: unknown | null, runId?: string): AgentEvent[] => {
    const events: AgentEvent[] = []
    const state = tasks.get(taskId)
    if (state === undefined) return events
    const parsed = record === null ? undefined : WorkflowRecord.safeParse(record)
    if (parsed?.success) {
      const r = parsed.data
      if (r.workflowProgress) applySnapshot(events, runId, state, r.workflowProgress)
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
      const status = runStatus(r.status)
      if (status !== undefined && !isTerminal(state.status)) state.status = status
      if (typeof r.totalTokens === "number") state.usedTokens = r.totalTokens
      if (typeof r.totalToolCalls === "number") state.toolUses = r.totalToolCalls
      if (result !== undefined) state.answer = result
      if (r.error) state.error = r.error
    }
    if (!isTerminal(state.status)) state.status = "Completed"
    state.finished = true
    // Agents still marked running when the run ended did not finish.
    for (const child of tasks.values())
      if (child.parentTaskId === taskId && child.kind === "workflow_agent" && !isTerminal(child.status)) {
        child.status = state.status === "Completed" ? "Completed" : "Cancelled"
        child.finished = true
        emitTask(events, runId, child)
      }
    emitTask(events, runId, state)
    return events
  }

  return {
    map,
    taskForAgent: (agentId) => byAgent.get(agentId),
    agentForTask: (taskId) => {
      const state = tasks.get(taskId)
      if (state === undefined) return undefined
      const agentId = state.kind === "workflow" ? (state.cliTaskId ?? state.agentId) : state.agentId
      return agentId === undefined ? undefined : { agentId, kind: state.kind }
    },
    setTaskWaiting: (taskId, waiting, runId) => {
      const events: AgentEvent[] = []
      const state = tasks.get(taskId)
      if (state === undefined || state.waiting === waiting) return events
      state.waiting = waiting
      emitTask(events, runId, state)
      return events
    },
    setModel: (value) => {
      model = value
    },
    mapAgentRecords,
    finishWorkflow,
  }
}

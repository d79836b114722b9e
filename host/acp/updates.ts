/**
 * Agent events → ACP `session/update`s: plain functions over one state
 * record per session (`UpdateState`), used live and, through replay.ts, for
 * a stored chat. Rules kept here:
 * - A tool call is announced once (`tool_call`) and changed by
 *   `tool_call_update`s that carry only what changed, except `content`,
 *   which ACP replaces whole: command output is sent accumulated.
 * - A subagent or workflow agent is a tool call (kind `think`); everything
 *   that happens inside it carries `_meta.claudeCode.parentToolUseId`, the
 *   key claude-agent-acp uses, so a client that nests one nests the other.
 *   Text and reasoning inside a task go into that task's call content, not
 *   into the main message stream.
 * - Events ACP has no update for (RunStarted, approvals, questions) return
 *   nothing here: the session layer (session.ts) answers them.
 * - Recovery facts ACP v1 has no field for (`input_delivery`,
 *   `recovery_identity`) ride at once in a `session_info_update`'s
 *   `_meta.claudeCode` (`inputDelivery`, `recoveryIdentity`), named by run.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type {
  AgentEvent,
  PlanEntry,
  RecoveryIdentity,
  RunUsage,
  SessionInfoPayload,
  SkillInfo,
  TaskInfo,
  ToolCall,
  ToolKind,
  ToolStatus,
  UsageLimits,
} from "../../sdk/protocol.ts"

export type Update = acp.SessionUpdate

/** What one session's mapping remembers between events. */
export interface UpdateState {
  /** Tool calls announced so far, by id. */
  readonly calls: Map<string, CallSeen>
  /** Text and reasoning that happened inside a task, by task id. */
  readonly taskText: Map<string, string>
  /** The item each task's text last came from (a new item starts a new paragraph). */
  readonly taskItem: Map<string, string>
  /** The last context figures, for usage_update. */
  context?: { used: number; size: number }
  /** The session's cost so far (the CLI's figure is per process). */
  cost: number
  /** Cost of the process the last run reported from (a restart begins again at 0). */
  lastProcessCost: number
  limits?: UsageLimits
  /** Numbers the message ids of lines the agent writes itself (notices). */
  notes: number
}

interface CallSeen {
  output: string
  readonly parent: string | undefined
}

export const makeUpdateState = (): UpdateState => ({
  calls: new Map(),
  taskText: new Map(),
  taskItem: new Map(),
  cost: 0,
  lastProcessCost: 0,
  notes: 0,
})

// ---------------------------------------------------------------------------
// Small pieces

/** `_meta` naming the task a call or chunk happened in. */
export const parentMeta = (parent: string | undefined, toolName?: string) =>
  parent !== undefined || toolName !== undefined
    ? {
        _meta: {
          claudeCode: {
            ...(toolName !== undefined && { toolName }),
            ...(parent !== undefined && { parentToolUseId: parent }),
          },
        },
      }
    : {}

/**
 * The plugin's kinds → ACP's. Tasks are `think` (the nearest: work the agent
 * does itself), MCP tools `other`. Claude Code has no delete or move tool:
 * `rm`/`mv` run in Bash, and stay `execute`.
 */
export const acpKind = (kind: ToolKind): acp.ToolKind => {
  switch (kind) {
    case "execute":
    case "edit":
    case "read":
    case "search":
    case "fetch":
    case "think":
      return kind
    case "task":
      return "think"
    case "mcp":
    case "other":
      return "other"
    default: {
      const never: never = kind
      return never
    }
  }
}

export const acpStatus = (status: ToolStatus): acp.ToolCallStatus => {
  switch (status) {
    case "Running":
      return "in_progress"
    case "Completed":
      return "completed"
    // ACP has no cancelled status: the call did not complete.
    case "Failed":
    case "Cancelled":
      return "failed"
    default: {
      const never: never = status
      return never
    }
  }
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * ACP diffs for an edit: Write has the whole new file; Edit and MultiEdit
 * give the replaced fragments (old and new text), one diff each;
 * NotebookEdit its new cell source.
 */
export const diffsOf = (call: ToolCall): acp.Diff[] => {
  const input = record(call.input)
  const path = call.path ?? str(input.file_path) ?? str(input.notebook_path)
  if (path === undefined) return []
  switch (call.name) {
    case "Write":
      return [{ path, oldText: null, newText: call.new_text ?? str(input.content) ?? "" }]
    case "Edit":
      return [{ path, oldText: str(input.old_string) ?? "", newText: str(input.new_string) ?? "" }]
    case "MultiEdit":
      return (Array.isArray(input.edits) ? input.edits : []).map((e) => ({
        path,
        oldText: str(record(e).old_string) ?? "",
        newText: str(record(e).new_string) ?? "",
      }))
    case "NotebookEdit":
      return [{ path, oldText: null, newText: str(input.new_source) ?? "" }]
    default:
      return []
  }
}

const locationsOf = (call: ToolCall): acp.ToolCallLocation[] => {
  const input = record(call.input)
  const path = call.path ?? str(input.file_path) ?? str(input.notebook_path)
  return path?.startsWith("/") ? [{ path }] : []
}

const textContent = (text: string): acp.ToolCallContent => ({
  type: "content",
  content: { type: "text", text },
})

/** What a finished call shows: its diffs, then its output (with the exit code of a command that failed). */
const finishedContent = (call: ToolCall, streamed: string): acp.ToolCallContent[] => {
  const out: acp.ToolCallContent[] = diffsOf(call).map((d) => ({ type: "diff", ...d }))
  const text = call.output_text ?? (streamed === "" ? undefined : streamed)
  const exit = call.exit_code !== undefined && call.exit_code !== 0 ? `\n(exit code ${call.exit_code})` : ""
  if (text !== undefined && text !== "") out.push(textContent(`${text}${exit}`))
  else if (exit !== "") out.push(textContent(exit.trim()))
  return out
}

/** The `tool_call` that announces a call. */
export const toolCallStart = (call: ToolCall, parent: string | undefined): Update => {
  const diffs = diffsOf(call).map((d): acp.ToolCallContent => ({ type: "diff", ...d }))
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    title: call.title,
    kind: acpKind(call.kind),
    status: call.status === "Running" ? "in_progress" : acpStatus(call.status),
    rawInput: call.input,
    ...(diffs.length > 0 && { content: diffs }),
    ...(locationsOf(call).length > 0 && { locations: locationsOf(call) }),
    ...parentMeta(parent, call.name),
  }
}

/** The `tool_call_update` that closes a call: status, content, raw output, exit code. */
export const toolCallEnd = (call: ToolCall, parent: string | undefined, streamed = ""): Update => {
  const content = finishedContent(call, streamed)
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: call.id,
    status: acpStatus(call.status),
    ...(content.length > 0 && { content }),
    ...(call.output !== undefined && { rawOutput: call.output }),
    _meta: {
      claudeCode: {
        toolName: call.name,
        ...(parent !== undefined && { parentToolUseId: parent }),
        ...(call.exit_code !== undefined && { exitCode: call.exit_code }),
      },
    },
  }
}

/**
 * A call that has already ended, in one `tool_call` (a stored chat's calls):
 * what its announcement and its `tool_call_update` would leave a client
 * with, in half the messages.
 */
export const toolCallFinished = (call: ToolCall, parent: string | undefined): Update => {
  const { content: _announced, ...start } = toolCallStart(call, parent) as Extract<
    Update,
    { sessionUpdate: "tool_call" }
  >
  const end = toolCallEnd(call, parent) as Extract<Update, { sessionUpdate: "tool_call_update" }>
  return {
    ...start,
    status: acpStatus(call.status),
    ...(end.content !== undefined && end.content !== null && { content: end.content }),
    ...(end.rawOutput !== undefined && { rawOutput: end.rawOutput }),
    ...(end._meta && { _meta: end._meta }),
  }
}

export const planUpdate = (entries: ReadonlyArray<PlanEntry>, parent?: string): Update => ({
  sessionUpdate: "plan",
  entries: entries.map((e) => ({ content: e.content, status: e.status, priority: "medium" })),
  ...parentMeta(parent),
})

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

// ---------------------------------------------------------------------------
// The live mapping

const usageUpdate = (state: UpdateState): Update | undefined => {
  if (state.context === undefined) return undefined
  return {
    sessionUpdate: "usage_update",
    used: state.context.used,
    size: state.context.size,
    ...(state.cost > 0 && { cost: { amount: state.cost, currency: "USD" } }),
    ...(state.limits !== undefined && { _meta: { claudeCode: { rateLimits: state.limits } } }),
  }
}

/** Add a run's usage to the session's figures. */
export const noteUsage = (state: UpdateState, usage: RunUsage): void => {
  if (usage.context_window !== undefined && usage.context_used !== undefined)
    state.context = { used: usage.context_used, size: usage.context_window }
  if (usage.cost_usd !== undefined) {
    // The CLI's total_cost_usd counts from its process's start.
    const delta =
      usage.cost_usd >= state.lastProcessCost ? usage.cost_usd - state.lastProcessCost : usage.cost_usd
    state.cost += delta
    state.lastProcessCost = usage.cost_usd
  }
}

/** Skills and commands the user may start, as ACP commands (`/name`). */
export const commandsUpdate = (skills: ReadonlyArray<SkillInfo>): Update => ({
  sessionUpdate: "available_commands_update",
  availableCommands: skills
    .filter((s) => s.hidden_from_picker !== true)
    .map((s) => ({
      name: s.name,
      description: s.description ?? (s.source === "cli" ? "Claude Code command" : `${s.source} skill`),
      input: { hint: "arguments (optional)" },
    })),
})

export const sessionInfoUpdate = (info: SessionInfoPayload): Update | undefined =>
  info.title !== undefined ? { sessionUpdate: "session_info_update", title: info.title } : undefined

const chunk = (
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  text: string,
  messageId: string,
): Update => ({ sessionUpdate: kind, content: { type: "text", text }, messageId })

/** A line the agent writes itself (ACP v1 has no notice update), as its own message. */
export const note = (state: UpdateState, text: string): Update =>
  chunk("agent_message_chunk", `\n\n> ${text}\n\n`, `note-${++state.notes}`)

/** A recovery fact for the client's own policy: session metadata only (ACP v1 has no field for it). */
const recoveryMeta = (claudeCode: Record<string, unknown>): Update => ({
  sessionUpdate: "session_info_update",
  _meta: { claudeCode },
})

type InputDelivery = Extract<AgentEvent, { type: "input_delivery" }>

/** The identity in `_meta`'s spelling (camelCase, as every `claudeCode` key). */
const identityMeta = (identity: RecoveryIdentity) =>
  identity.identified
    ? {
        identified: true,
        key: identity.key,
        email: identity.email,
        organizationId: identity.organization_id,
        configDir: identity.config_dir,
      }
    : { identified: false, reason: identity.reason }

/** `_meta.claudeCode.inputDelivery`: what the agent can prove about one prompt (docs/agent-protocol.md). */
export const inputDeliveryUpdate = (event: InputDelivery): Update =>
  recoveryMeta({
    inputDelivery: {
      runId: event.run_id,
      inputUuid: event.input_uuid,
      ...(event.delivery_id !== undefined && { deliveryId: event.delivery_id }),
      state: event.state,
      ...(event.evidence !== undefined && { evidence: event.evidence }),
      ...(event.reason !== undefined && { reason: event.reason }),
    },
  })

/**
 * One agent event → the updates it means. Session-level events (SessionInfo's
 * mode and options) are the session layer's; it passes them through too, for
 * the title.
 */
export const updatesOf = (state: UpdateState, event: AgentEvent): Update[] => {
  const parent = event.task_id
  switch (event.type) {
    case "TextDelta":
    case "ReasoningDelta": {
      if (parent !== undefined) return appendTaskText(state, parent, event.item_id, event.text)
      return [
        chunk(
          event.type === "TextDelta" ? "agent_message_chunk" : "agent_thought_chunk",
          event.text,
          event.item_id,
        ),
      ]
    }
    case "UserMessage":
      return parent === undefined ? [chunk("user_message_chunk", event.text, event.item_id)] : []
    case "ToolCallStarted": {
      if (state.calls.has(event.call.id)) return []
      state.calls.set(event.call.id, { output: "", parent })
      return [toolCallStart(event.call, parent)]
    }
    case "output_delta": {
      const seen = state.calls.get(event.tool_call_id)
      if (!seen) return []
      seen.output += event.text
      return [
        {
          sessionUpdate: "tool_call_update",
          toolCallId: event.tool_call_id,
          content: [textContent(seen.output)],
          ...parentMeta(seen.parent),
        },
      ]
    }
    case "ToolCallFinished": {
      const seen = state.calls.get(event.call.id)
      const out: Update[] = []
      if (!seen) {
        out.push(toolCallStart({ ...event.call, status: "Running" }, parent))
        state.calls.set(event.call.id, { output: "", parent })
      }
      // A task's call shows the task (its work and summary), not the CLI's hand-back text.
      const end = toolCallEnd(event.call, seen?.parent ?? parent, seen?.output ?? "")
      if (event.call.kind === "task" && end.sessionUpdate === "tool_call_update") delete end.content
      out.push(end)
      return out
    }
    case "Plan":
      return [planUpdate(event.entries, parent)]
    case "Task":
      return taskUpdates(state, event.task)
    case "Compacted":
      return [note(state, "*(The conversation was compacted.)*")]
    case "Notice":
      return event.level === "info"
        ? []
        : [note(state, `${event.level === "error" ? "✗" : "⚠"} ${event.text}`)]
    case "usage_blocked":
      return [note(state, `✗ ${event.message}`)]
    case "Skills":
      return [commandsUpdate(event.skills)]
    case "UsageLimits": {
      state.limits = event.limits
      const usage = usageUpdate(state)
      return usage ? [usage] : []
    }
    case "RunEnded": {
      if (event.usage) noteUsage(state, event.usage)
      const usage = usageUpdate(state)
      return usage ? [usage] : []
    }
    case "SessionInfo": {
      const info = sessionInfoUpdate(event.info)
      return info ? [info] : []
    }
    case "RunStarted":
    case "ApprovalRequested":
    case "approval_resolved":
    case "QuestionAsked":
    case "question_resolved":
      return []
    case "input_delivery":
      return [inputDeliveryUpdate(event)]
    case "recovery_identity":
      return [recoveryMeta({ recoveryIdentity: { runId: event.run_id, ...identityMeta(event.identity) } })]
    default: {
      const never: never = event
      return never
    }
  }
}

/** Text said inside a task joins that task's call content. */
const appendTaskText = (state: UpdateState, taskId: string, itemId: string, text: string): Update[] => {
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

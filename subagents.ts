/**
 * Stored subagents rebuilt into task items. Each agent's transcript is
 * `<session folder>/subagents/**\/agent-<agentId>.jsonl` with its
 * `agent-<agentId>.meta.json` (`agentType`, `description`, `toolUseId`,
 * `parentAgentId` from depth 2, `requestShape`, `model`). It is read by the
 * chain rule, its opening prompt removed, mapped like the main chain, and
 * placed as a task right after the call that spawned it, inside its parent
 * agent's items when it has one. Workflow folders are left to workflow.ts.
 */
import { Effect } from "effect"
import { readJson } from "./files.ts"
import { readChain } from "./history.ts"
import { findToolCall, firstLine, lastAssistantText, recordsToItems, recordText, type StoredRecord } from "./records.ts"
import { Fs } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { TaskInfo, TaskStatus, ToolCall, TranscriptItem } from "./sdk/protocol.ts"

export interface AgentMeta {
  readonly agentType?: string
  readonly description?: string
  readonly toolUseId?: string
  readonly parentAgentId?: string
  readonly requestShape?: string
  readonly model?: string
}

export interface StoredAgent {
  readonly agentId: string
  readonly meta: AgentMeta
  /** The agent's conversation, its opening prompt removed. */
  readonly records: StoredRecord[]
  /** The opening prompt's text. */
  readonly prompt?: string
}

const str = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

const metaOf = (value: unknown): AgentMeta => {
  if (typeof value !== "object" || value === null) return {}
  const v = value as Record<string, unknown>
  const pick = (key: string) => (str(v[key]) === undefined ? {} : { [key]: v[key] as string })
  return {
    ...pick("agentType"),
    ...pick("description"),
    ...pick("toolUseId"),
    ...pick("parentAgentId"),
    ...pick("requestShape"),
    ...pick("model"),
  }
}

/** Workflow agents live in `workflows/` (`wf_*` run folders); workflow.ts reads them. */
const isWorkflowFolder = (name: string): boolean => name === "workflows" || name.startsWith("wf_")

/** Every `agent-*.jsonl` below `dir`, at any depth, workflow folders left out. */
const agentFiles = (dir: string): Effect.Effect<Array<{ agentId: string; dir: string }>, never, Fs> =>
  Effect.gen(function* () {
    const entries = (yield* (yield* Fs).list(dir)) ?? []
    const here = entries
      .filter((e) => e.kind !== "directory" && e.name.startsWith("agent-") && e.name.endsWith(".jsonl"))
      .map((e) => ({ agentId: e.name.slice("agent-".length, -".jsonl".length), dir }))
    const below = yield* Effect.forEach(
      entries.filter((e) => e.kind === "directory" && !isWorkflowFolder(e.name)),
      (e) => agentFiles(join(dir, e.name)),
      { concurrency: 4 },
    )
    return [...here, ...below.flat()]
  })

/** Read every stored subagent of a session (its folder is `<project dir>/<session id>`). */
export const readStoredAgents = (sessionFolder: string): Effect.Effect<StoredAgent[], never, Fs> =>
  Effect.gen(function* () {
    const files = yield* agentFiles(join(sessionFolder, "subagents"))
    return yield* Effect.forEach(
      files,
      ({ agentId, dir }) =>
        Effect.gen(function* () {
          const meta = metaOf(yield* readJson(join(dir, `agent-${agentId}.meta.json`)))
          const chain = yield* readChain(join(dir, `agent-${agentId}.jsonl`), { sidechain: true })
          const [first, ...rest] = chain.records
          const opening = first !== undefined && first.type === "user" && !hasToolResult(first)
          const prompt = opening ? recordText(first) : undefined
          return {
            agentId,
            meta,
            records: opening ? rest : chain.records,
            ...(prompt ? { prompt } : {}),
          }
        }),
      { concurrency: 4 },
    )
  })

const hasToolResult = (record: StoredRecord): boolean => {
  const message = record.message as { content?: unknown } | undefined
  return Array.isArray(message?.content) && message.content.some((b) => b?.type === "tool_result")
}

// ---------------------------------------------------------------------------
// Task notifications: `<task-notification>` user records the CLI queues when a background task ends

export interface TaskNotification {
  readonly taskId?: string
  readonly toolUseId?: string
  readonly status?: string
  readonly summary?: string
  readonly result?: string
  readonly usage?: { readonly used_tokens?: number; readonly tool_uses?: number; readonly duration_ms?: number }
}

const tag = (text: string, name: string): string | undefined => {
  const match = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(text)
  return match?.[1]?.trim()
}

const num = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const n = Number(text)
  return Number.isFinite(n) ? n : undefined
}

/** Every notification in a text (one record can carry several). */
export const parseTaskNotifications = (text: string): TaskNotification[] => {
  const out: TaskNotification[] = []
  for (const match of text.matchAll(/<task-notification>([\s\S]*?)<\/task-notification>/g)) {
    const body = match[1] ?? ""
    const usageText = tag(body, "usage")
    const usage =
      usageText === undefined
        ? undefined
        : {
            ...withNumber("used_tokens", num(tag(usageText, "subagent_tokens") ?? tag(usageText, "total_tokens"))),
            ...withNumber("tool_uses", num(tag(usageText, "tool_uses"))),
            ...withNumber("duration_ms", num(tag(usageText, "duration_ms"))),
          }
    const fields = {
      taskId: tag(body, "task-id"),
      toolUseId: tag(body, "tool-use-id"),
      status: tag(body, "status"),
      summary: tag(body, "summary"),
      result: tag(body, "result"),
    }
    out.push({
      ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
      ...(usage === undefined ? {} : { usage }),
    })
  }
  return out
}

const withNumber = (key: string, value: number | undefined) => (value === undefined ? {} : { [key]: value })

/** The notifications found in a chain of records, by tool_use id and by task (agent) id. */
export const notificationsIn = (records: ReadonlyArray<StoredRecord>): Map<string, TaskNotification> => {
  const found = new Map<string, TaskNotification>()
  for (const record of records) {
    if (record.type !== "user") continue
    const text = recordText(record)
    if (!text.includes("<task-notification>")) continue
    for (const n of parseTaskNotifications(text)) {
      if (n.toolUseId) found.set(n.toolUseId, n)
      if (n.taskId) found.set(n.taskId, n)
    }
  }
  return found
}

// ---------------------------------------------------------------------------
// Building the task items

const statusOfNotification = (status: string | undefined): TaskStatus | undefined => {
  switch (status) {
    case "completed":
      return "Completed"
    case "failed":
      return "Failed"
    case "stopped":
    case "killed":
      return "Cancelled"
    default:
      return undefined
  }
}

/** The agent's answer from its spawning call's result (its `toolUseResult.content`, harness notes left out). */
const answerOf = (call: ToolCall | undefined): string | undefined => {
  const output = call?.output
  if (typeof output !== "object" || output === null) return undefined
  const o = output as Record<string, unknown>
  if (o.status === "async_launched" || o.isAsync === true) return undefined
  if (!Array.isArray(o.content)) return undefined
  const text = o.content
    .filter((b): b is { type: string; text: string } => b?.type === "text" && typeof b.text === "string")
    .map((b) => b.text)
    .filter((t) => !t.trimStart().startsWith("<tools-used-before-summary>"))
    .join("\n")
    .trim()
  return text === "" ? undefined : text
}

const usageOfCall = (call: ToolCall | undefined): TaskInfo["usage"] | undefined => {
  const output = call?.output
  if (typeof output !== "object" || output === null) return undefined
  const o = output as Record<string, unknown>
  const usage = {
    ...withNumber("used_tokens", typeof o.totalTokens === "number" ? o.totalTokens : undefined),
    ...withNumber("tool_uses", typeof o.totalToolUseCount === "number" ? o.totalToolUseCount : undefined),
    ...withNumber("duration_ms", typeof o.totalDurationMs === "number" ? o.totalDurationMs : undefined),
  }
  return Object.keys(usage).length > 0 ? usage : undefined
}

const isBackground = (agent: StoredAgent, call: ToolCall | undefined): boolean => {
  if (agent.meta.requestShape === "background") return true
  const input = call?.input as { run_in_background?: unknown } | undefined
  if (input?.run_in_background === true) return true
  const output = call?.output as { status?: unknown; isAsync?: unknown } | undefined
  return output?.status === "async_launched" || output?.isAsync === true
}

/**
 * The task for one agent: TaskInfo from its meta, its spawning call and the
 * notification of its end; its items with its own children placed inside.
 */
const taskFor = (
  agent: StoredAgent,
  call: ToolCall | undefined,
  notifications: Map<string, TaskNotification>,
  parentTaskId: string | undefined,
  childrenOf: (agent: StoredAgent, taskId: string) => (items: TranscriptItem[]) => TranscriptItem[],
): Extract<TranscriptItem, { type: "task" }> => {
  const taskId = agent.meta.toolUseId ?? agent.agentId
  const base = recordsToItems(agent.records, { taskId })
  const items = childrenOf(agent, taskId)(base)
  const notification = notifications.get(taskId) ?? notifications.get(agent.agentId)
  const input = call?.input as { prompt?: unknown; description?: unknown } | undefined
  const prompt = str(input?.prompt) ?? agent.prompt
  const title =
    agent.meta.description ?? str(input?.description) ?? (prompt === undefined ? "" : firstLine(prompt))
  // The spawning call's failure decides; else how the notification says it ended; else it finished.
  const status: TaskStatus =
    call?.status === "Failed" ? "Failed" : (statusOfNotification(notification?.status) ?? "Completed")
  const summary =
    (status === "Failed" ? call?.output_text : undefined) ??
    answerOf(call) ??
    notification?.result ??
    lastAssistantText(items)
  const usage = usageOfCall(call) ?? notification?.usage
  const task: TaskInfo = {
    id: taskId,
    title: title || agent.meta.agentType || "Subagent",
    status,
    ...(parentTaskId === undefined ? {} : { parent_task_id: parentTaskId }),
    ...(agent.meta.agentType === undefined ? {} : { name: agent.meta.agentType }),
    ...(agent.meta.model === undefined ? {} : { model: agent.meta.model }),
    ...(prompt === undefined ? {} : { prompt }),
    ...(summary === undefined ? {} : { summary }),
    ...(usage === undefined || Object.keys(usage).length === 0 ? {} : { usage }),
    ...(isBackground(agent, call) ? { background: true } : {}),
  }
  return { type: "task", id: taskId, task, items }
}

/** Insert `task` right after the tool call item `toolUseId` (top level of `items`). */
const placeAfterCall = (items: TranscriptItem[], toolUseId: string, task: TranscriptItem): boolean => {
  const at = items.findIndex((i) => i.type === "tool_call" && i.call.id === toolUseId)
  if (at < 0) return false
  // Several agents spawned by one message: keep them in spawn order after their calls.
  let end = at + 1
  while (end < items.length && items[end]?.type === "task") end++
  items.splice(end, 0, task)
  return true
}

/** A spawning call whose result never came: the agent is read back as finished, not cut off. */
const settleCall = (items: TranscriptItem[], toolUseId: string): void => {
  const at = items.findIndex((i) => i.type === "tool_call" && i.call.id === toolUseId)
  const item = items[at]
  if (item?.type === "tool_call" && item.call.status === "Cancelled" && item.call.output === undefined)
    items[at] = { ...item, call: { ...item.call, status: "Completed" } }
}

/**
 * Place stored agents into a conversation's items: each as a task right
 * after its spawning call, nested by `parentAgentId`. `records` is the chain
 * the items came from (for the notifications of background agents).
 */
export const placeAgents = (
  items: ReadonlyArray<TranscriptItem>,
  records: ReadonlyArray<StoredRecord>,
  agents: ReadonlyArray<StoredAgent>,
): TranscriptItem[] => {
  const byParent = new Map<string | undefined, StoredAgent[]>()
  const known = new Set(agents.map((a) => a.agentId))
  for (const agent of agents) {
    const parent = agent.meta.parentAgentId !== undefined && known.has(agent.meta.parentAgentId)
      ? agent.meta.parentAgentId
      : undefined
    byParent.set(parent, [...(byParent.get(parent) ?? []), agent])
  }

  const placeChildren = (
    target: TranscriptItem[],
    parentAgentId: string | undefined,
    parentTaskId: string | undefined,
    notifications: Map<string, TaskNotification>,
  ): TranscriptItem[] => {
    const out = [...target]
    for (const agent of byParent.get(parentAgentId) ?? []) {
      const toolUseId = agent.meta.toolUseId
      if (toolUseId === undefined) continue
      const call = findToolCall(out, toolUseId)
      // An agent of a rewound branch: its spawning call is no longer in the conversation.
      if (call === undefined) continue
      const task = taskFor(agent, call.call, notifications, parentTaskId, (self, taskId) => (own) =>
        placeChildren(own, self.agentId, taskId, notificationsIn(self.records)),
      )
      if (placeAfterCall(out, toolUseId, task)) settleCall(out, toolUseId)
    }
    return out
  }
  return placeChildren([...items], undefined, undefined, notificationsIn(records))
}

/** Read a session's stored subagents and place them into its items. */
export const attachSubagents = (
  items: ReadonlyArray<TranscriptItem>,
  records: ReadonlyArray<StoredRecord>,
  sessionFolder: string,
): Effect.Effect<TranscriptItem[], never, Fs> =>
  Effect.gen(function* () {
    const agents = yield* readStoredAgents(sessionFolder)
    return agents.length === 0 ? [...items] : placeAgents(items, records, agents)
  })

/**
 * Stored subagents rebuilt into task items. Each agent's transcript is
 * `<session folder>/subagents/**\/agent-<agentId>.jsonl` with its
 * `agent-<agentId>.meta.json` (`agentType`, `description`, `toolUseId`,
 * `parentAgentId` from depth 2, `requestShape`, `model`, `stoppedByUser`). It is read by the
 * chain rule, its opening prompt removed, mapped like the main chain, and
 * placed as a task right after the call that spawned it, inside its parent
 * agent's items when it has one (`parentAgentId`, else the agent whose file
 * holds the spawning call). Workflow folders are left to workflow.ts.
 */
import { Effect } from "effect"
import { readJson } from "./files.ts"
import { chainOf, readChain } from "./history/chain.ts"
import { findToolCall, lastAssistantText, recordsToItems, recordText, type StoredRecord } from "./records.ts"
import { notificationsIn, type TaskNotification, withNumber } from "./history/task-notifications.ts"
import { Fs } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { TaskInfo, ToolCall, TranscriptItem } from "./sdk/protocol.ts"
import { isTerminal, newTaskState, snapshot, spawnAnswer, taskStatusOf, taskTitle } from "./task.ts"
import { resultText } from "./tools.ts"
import { AgentMeta } from "./wire.ts"
import { parseWorkflowLaunch, readStoredRun, storedWorkflowTasks } from "./workflow.ts"
import { nonEmpty } from "./values.ts"

export interface StoredAgent {
  readonly agentId: string
  readonly meta: StoredAgentMeta
  /** The agent's conversation, its opening prompt removed. */
  readonly records: StoredRecord[]
  /** The opening prompt's text. */
  readonly prompt?: string
}

/**
 * A stored agent as the read keeps it: its items built (tagged with its task
 * id) and the few facts placing it needs taken from its records, which are
 * let go as soon as the agent is read, not held until every agent is placed.
 */
export interface LoadedAgent {
  readonly agentId: string
  readonly meta: StoredAgentMeta
  readonly prompt?: string
  /** `meta.toolUseId`, else the agent id: its task's id and every item's `task_id`. */
  readonly taskId: string
  /** Its conversation's items, its own children not yet placed inside. */
  readonly items: TranscriptItem[]
  /** The notifications of its chain (its background children's ends). */
  readonly notifications: Map<string, TaskNotification>
  /** The ids of the tool calls its records made (which agent spawned which). */
  readonly callIds: ReadonlySet<string>
  /** The model of its first assistant message. */
  readonly model?: string
}

/** What the read keeps of a stored agent (`LoadedAgent`); its records are not held by it. */
export const loadedAgent = (agent: StoredAgent): LoadedAgent => {
  const taskId = agent.meta.toolUseId ?? agent.agentId
  const model = firstModel(agent.records)
  return {
    agentId: agent.agentId,
    meta: agent.meta,
    ...(agent.prompt === undefined ? {} : { prompt: agent.prompt }),
    taskId,
    items: recordsToItems(agent.records, { taskId }),
    notifications: notificationsIn(agent.records),
    callIds: callIdsIn(agent.records),
    ...(model === undefined ? {} : { model }),
  }
}

/** What the meta file says, null and empty fields left out. */
export interface StoredAgentMeta {
  readonly agentType?: string
  readonly description?: string
  readonly toolUseId?: string
  readonly parentAgentId?: string
  readonly requestShape?: string
  readonly model?: string
  /** The user stopped it (stop_task, or the parent's Stop). */
  readonly stoppedByUser?: boolean
}

const META_FIELDS = [
  "agentType",
  "description",
  "toolUseId",
  "parentAgentId",
  "requestShape",
  "model",
] as const

/** The meta file through its schema (wire.ts); when that fails, each string field that is there. */
const metaOf = (value: unknown): StoredAgentMeta => {
  const parsed = AgentMeta.safeParse(value)
  const source = (
    parsed.success ? parsed.data : typeof value === "object" && value !== null ? value : {}
  ) as Record<string, unknown>
  const meta: Record<string, string> = {}
  for (const key of META_FIELDS) {
    const v = nonEmpty(source[key])
    if (v !== undefined) meta[key] = v
  }
  const stopped = source.stoppedByUser === true ? { stoppedByUser: true } : {}
  return { ...meta, ...stopped } as StoredAgentMeta
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

/**
 * Read every stored subagent of a session (its folder is `<project
 * dir>/<session id>`), each mapped to its items as soon as it is read.
 */
export const readStoredAgents = (sessionFolder: string): Effect.Effect<LoadedAgent[], never, Fs> =>
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
          return loadedAgent({
            agentId,
            meta,
            records: opening ? rest : chain.records,
            ...(prompt ? { prompt } : {}),
          })
        }),
      { concurrency: 4 },
    )
  })

const hasToolResult = (record: StoredRecord): boolean => {
  const message = record.message as { content?: unknown } | undefined
  return Array.isArray(message?.content) && message.content.some((b) => b?.type === "tool_result")
}

// ---------------------------------------------------------------------------
// Building the task items

/** Tokens, tool uses and time from the spawning call's result (a foreground agent's totals). */
const usageOfResult = (output: unknown): TaskInfo["usage"] | undefined => {
  if (typeof output !== "object" || output === null) return undefined
  const o = output as Record<string, unknown>
  const usage = {
    ...withNumber("used_tokens", typeof o.totalTokens === "number" ? o.totalTokens : undefined),
    ...withNumber("tool_uses", typeof o.totalToolUseCount === "number" ? o.totalToolUseCount : undefined),
    ...withNumber("duration_ms", typeof o.totalDurationMs === "number" ? o.totalDurationMs : undefined),
  }
  return Object.keys(usage).length > 0 ? usage : undefined
}

const isLaunch = (output: unknown): boolean => {
  const o = output as { status?: unknown; isAsync?: unknown } | undefined
  return o?.status === "async_launched" || o?.isAsync === true
}

/** The model of the agent's first assistant message (as the live mapper takes it). */
const firstModel = (records: ReadonlyArray<StoredRecord>): string | undefined => {
  for (const r of records) {
    if (r.type !== "assistant") continue
    const model = (r.message as { model?: unknown } | undefined)?.model
    if (typeof model === "string" && model !== "" && model !== "<synthetic>") return model
  }
  return undefined
}

/**
 * The task for one agent, built with the live mapper's task state and rules
 * (title, status, answer, summary) from its meta, its spawning call and the
 * notification of its end; its items with its own children placed inside.
 */
const taskFor = (
  agent: LoadedAgent,
  call: ToolCall | undefined,
  notifications: Map<string, TaskNotification>,
  parentTaskId: string | undefined,
  itemsOf: (agent: LoadedAgent) => TranscriptItem[],
): Extract<TranscriptItem, { type: "task" }> => {
  const taskId = agent.taskId
  const items = itemsOf(agent)
  const notification = notifications.get(taskId) ?? notifications.get(agent.agentId)
  const input = (call?.input ?? {}) as Record<string, unknown>
  const state = newTaskState(taskId, "agent")
  if (parentTaskId !== undefined) state.parentTaskId = parentTaskId
  const prompt = nonEmpty(input.prompt) ?? agent.prompt
  state.title = taskTitle(nonEmpty(input.description) ?? agent.meta.description, prompt)
  const name = nonEmpty(input.subagent_type) ?? agent.meta.agentType
  if (name !== undefined) state.name = name
  if (prompt !== undefined) state.prompt = prompt
  const model = agent.model ?? agent.meta.model
  if (model !== undefined) state.model = model
  if (typeof input.run_in_background === "boolean") state.background = input.run_in_background
  if (agent.meta.requestShape === "background" || isLaunch(call?.output)) state.background = true

  const usage = usageOfResult(call?.output) ?? notification?.usage
  if (usage?.used_tokens !== undefined) state.usedTokens = usage.used_tokens
  if (usage?.tool_uses !== undefined) state.toolUses = usage.tool_uses
  if (usage?.duration_ms !== undefined) state.durationMs = usage.duration_ms

  const failed = call?.status === "Failed" && !isLaunch(call.output)
  // Stopped (stop_task, or the user's interrupt): the call's result is the interrupt,
  // as live, where `task_notification stopped` ends the task Cancelled. A call
  // with no result at all is an unfinished agent instead (settled below).
  const stopped =
    !failed &&
    ((call?.status === "Cancelled" && call.output !== undefined) ||
      (agent.meta.stoppedByUser === true && notification?.status === undefined))
  if (failed) {
    state.status = "Failed"
    state.error = call?.output_text ?? resultText(call?.output)
  } else if (stopped) state.status = "Cancelled"
  else state.status = taskStatusOf(notification?.status) ?? "Completed"
  // A stored agent has ended: one the process left running reads back as finished.
  if (!isTerminal(state.status)) state.status = "Completed"
  state.finished = true
  if (!failed && !stopped && call !== undefined && !isLaunch(call.output)) {
    const answer = spawnAnswer(call.output, call.output_text ?? "")
    if (answer !== undefined) state.answer = answer
  }
  if (state.answer === undefined && notification?.result) state.answer = notification.result
  const last = lastAssistantText(items)
  if (last !== undefined) state.lastText = last
  if (notification?.summary) state.summary = notification.summary
  return { type: "task", id: taskId, task: snapshot(state), items }
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
const settled = (item: Extract<TranscriptItem, { type: "tool_call" }>): TranscriptItem =>
  item.call.status === "Cancelled" && item.call.output === undefined
    ? { ...item, call: { ...item.call, status: "Completed" } }
    : item

/** The ids of the tool calls a transcript's records made. */
const callIdsIn = (records: ReadonlyArray<StoredRecord>): Set<string> => {
  const ids = new Set<string>()
  for (const record of records) {
    const content = (record.message as { content?: unknown } | undefined)?.content
    if (!Array.isArray(content)) continue
    for (const block of content)
      if (block?.type === "tool_use" && typeof block.id === "string") ids.add(block.id)
  }
  return ids
}

/**
 * Which agent spawned each agent: its meta's `parentAgentId` when that agent
 * is stored, else the agent whose transcript file holds the spawning call
 * (older metas, and depth 2 without the field); undefined: the main chat.
 */
const parentsOf = (agents: ReadonlyArray<LoadedAgent>) => {
  const known = new Set(agents.map((a) => a.agentId))
  const callOwner = new Map<string, string>()
  for (const agent of agents) for (const id of agent.callIds) callOwner.set(id, agent.agentId)
  return (agent: LoadedAgent): string | undefined => {
    const declared = agent.meta.parentAgentId
    if (declared !== undefined && known.has(declared)) return declared
    const owner = agent.meta.toolUseId === undefined ? undefined : callOwner.get(agent.meta.toolUseId)
    return owner === agent.agentId ? undefined : owner
  }
}

/**
 * Place stored agents into a conversation's items: each as a task right
 * after its spawning call, nested by `parentAgentId`, else by the file the
 * call was found in. `records` is the chain
 * the items came from (for the notifications of background agents).
 */
export const placeAgents = (
  items: ReadonlyArray<TranscriptItem>,
  records: ReadonlyArray<StoredRecord>,
  agents: ReadonlyArray<StoredAgent>,
): TranscriptItem[] => placeAgentsWith(items, notificationsIn(records), agents.map(loadedAgent))

/** `placeAgents` given the notifications of the conversation's chain (`notificationsIn`) and the agents as read. */
const placeAgentsWith = (
  items: ReadonlyArray<TranscriptItem>,
  notifications: Map<string, TaskNotification>,
  agents: ReadonlyArray<LoadedAgent>,
): TranscriptItem[] => {
  const byParent = new Map<string | undefined, LoadedAgent[]>()
  const parentOf = parentsOf(agents)
  for (const agent of agents) {
    const parent = parentOf(agent)
    byParent.set(parent, [...(byParent.get(parent) ?? []), agent])
  }

  /**
   * One conversation's agents placed: each call found through an index of the
   * top-level calls (a search of every item per agent would be quadratic),
   * the tasks gathered per call and laid out once, in spawn order after their call.
   */
  const placeChildren = (
    target: TranscriptItem[],
    parentAgentId: string | undefined,
    parentTaskId: string | undefined,
    notifications: Map<string, TaskNotification>,
  ): TranscriptItem[] => {
    const children = byParent.get(parentAgentId) ?? []
    if (children.length === 0) return target
    const out = [...target]
    const callAt = new Map<string, number>()
    out.forEach((item, at) => {
      if (item.type === "tool_call" && !callAt.has(item.call.id)) callAt.set(item.call.id, at)
    })
    const tasksAfter = new Map<number, TranscriptItem[]>()
    for (const agent of children) {
      const toolUseId = agent.meta.toolUseId
      if (toolUseId === undefined) continue
      const at = callAt.get(toolUseId)
      const top = at === undefined ? undefined : out[at]
      // Not at the top level: inside a task placed already (it is found, as before, but not placed).
      const call =
        top?.type === "tool_call"
          ? top
          : findToolCall([...target, ...[...tasksAfter.values()].flat()], toolUseId)
      // An agent of a rewound branch: its spawning call is no longer in the conversation.
      if (call === undefined) continue
      const task = taskFor(agent, call.call, notifications, parentTaskId, (self) =>
        placeChildren(self.items, self.agentId, self.taskId, self.notifications),
      )
      if (at === undefined || top?.type !== "tool_call") continue
      tasksAfter.set(at, [...(tasksAfter.get(at) ?? []), task])
      out[at] = settled(top)
    }
    if (tasksAfter.size === 0) return out
    const laid: TranscriptItem[] = []
    out.forEach((item, at) => {
      laid.push(item)
      const tasks = tasksAfter.get(at)
      if (tasks !== undefined) laid.push(...tasks)
    })
    return laid
  }
  return placeChildren([...items], undefined, undefined, notifications)
}

// ---------------------------------------------------------------------------
// Stored workflow runs (workflow.ts reads them; placed here like agents)

const workflowCalls = (items: ReadonlyArray<TranscriptItem>): Array<{ call: ToolCall; taskId?: string }> => {
  const found: Array<{ call: ToolCall; taskId?: string }> = []
  for (const item of items) {
    if (item.type === "tool_call" && item.call.name === "Workflow")
      found.push({ call: item.call, ...(item.task_id === undefined ? {} : { taskId: item.task_id }) })
    if (item.type === "task") found.push(...workflowCalls(item.items))
  }
  return found
}

/** Insert `task` after the call `toolUseId`, wherever it is (inside a task too). */
const placeDeep = (items: TranscriptItem[], toolUseId: string, task: TranscriptItem): TranscriptItem[] => {
  if (placeAfterCall(items, toolUseId, task)) return items
  return items.map((item) =>
    item.type === "task" ? { ...item, items: placeDeep([...item.items], toolUseId, task) } : item,
  )
}

/** Each `Workflow` call with a launch result becomes the run's task, its agents inside it. */
const attachWorkflows = (
  items: TranscriptItem[],
  sessionFolder: string,
): Effect.Effect<TranscriptItem[], never, Fs> =>
  Effect.gen(function* () {
    let out = items
    for (const { call, taskId } of workflowCalls(items)) {
      const launch = parseWorkflowLaunch(call.output)
      const runId = launch?.runId
      if (!runId) continue
      const files = yield* readStoredRun(sessionFolder, runId, call.id, launch)
      const run = storedWorkflowTasks({
        ...files.input,
        ...(taskId === undefined ? {} : { parentTaskId: taskId }),
      })
      const agents: TranscriptItem[] = run.agents.map((agent) => {
        const records = agent.agentId === undefined ? undefined : files.records.get(agent.agentId)
        const chain = records === undefined ? [] : chainOf(records, { sidechain: true })
        // The first record is the agent's prompt, framed by the harness.
        const body = chain[0]?.type === "user" ? chain.slice(1) : chain
        return {
          type: "task",
          id: agent.task.id,
          task: agent.task,
          items: recordsToItems(body, { taskId: agent.task.id }),
        }
      })
      out = placeDeep(out, call.id, { type: "task", id: run.workflow.id, task: run.workflow, items: agents })
    }
    return out
  })

/**
 * Read a session's stored subagents and workflow runs and place them into
 * its items. `notifications`: those of the session's chain (`notificationsIn`),
 * so its records need not live while the agents are read.
 */
export const attachSubagents = (
  items: ReadonlyArray<TranscriptItem>,
  notifications: Map<string, TaskNotification>,
  sessionFolder: string,
): Effect.Effect<TranscriptItem[], never, Fs> =>
  Effect.gen(function* () {
    const agents = yield* readStoredAgents(sessionFolder)
    const placed = agents.length === 0 ? [...items] : placeAgentsWith(items, notifications, agents)
    return yield* attachWorkflows(placed, sessionFolder)
  })

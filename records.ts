/**
 * Stored transcript records → transcript items. A plain mapping over one
 * conversation chain (already ordered root to leaf by history.ts or
 * subagents.ts): user prompts, text, reasoning, tool calls with their
 * results, plans, compaction summaries and stops. Item ids are the records'
 * uuids, so rollback can find a prompt again; tool calls go through tools.ts,
 * the same classification the live mapper uses.
 */
import type { ToolCall, TranscriptItem } from "./sdk/protocol.ts"
import {
  applyTaskTool,
  describeToolCall,
  planFromTodoWrite,
  TaskList,
  type ToolDescription,
  toolResultOf,
} from "./tools.ts"
import { asString, isObject } from "./values.ts"

/** A stored record as read from a transcript line: a JSON object, fields unchecked. */
export type StoredRecord = Readonly<Record<string, unknown>>

export interface RecordOptions {
  /** The task (subagent) these records ran in: set on every item. */
  readonly taskId?: string
}

/**
 * The record's `message.content` as a block list (a plain string becomes one
 * text block). Read-only: when every block is an object this is the record's
 * own array, not a copy (a transcript read asks this of every record).
 */
export const contentBlocks = (record: StoredRecord): ReadonlyArray<Record<string, unknown>> => {
  const message = record.message
  if (!isObject(message)) return []
  const content = message.content
  if (typeof content === "string") return [{ type: "text", text: content }]
  if (!Array.isArray(content)) return []
  for (const block of content) if (!isObject(block)) return content.filter(isObject)
  return content as ReadonlyArray<Record<string, unknown>>
}

/**
 * The text blocks of a record joined by line breaks (tool results and images
 * left out). One loop, no arrays: a record's only text comes back as that
 * very string, since a read asks this of a record several times.
 */
export const recordText = (record: StoredRecord): string => {
  const message = record.message
  if (!isObject(message)) return ""
  const content = message.content
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  let text: string | undefined
  for (const block of content) {
    if (!isObject(block) || block.type !== "text" || typeof block.text !== "string") continue
    text = text === undefined ? block.text : `${text}\n${block.text}`
  }
  return text ?? ""
}

/** `[Request interrupted by user]`, `[Request interrupted by user for tool use]`: a stop. */
export const isInterruptText = (text: string): boolean =>
  text.trimStart().startsWith("[Request interrupted by user")

/**
 * The end of a background task, queued into the conversation by the CLI: its
 * origin says so, or its text opens with `<task-notification>`. Live frames
 * and stored records both ask this.
 */
export const isTaskNotificationText = (text: string, origin: unknown): boolean =>
  (isObject(origin) && origin.kind === "task-notification") ||
  text.trimStart().startsWith("<task-notification>")

/** A stored record that is a task notification. */
export const isTaskNotification = (record: StoredRecord): boolean =>
  isTaskNotificationText(recordText(record), record.origin)

/** Text the CLI adds for the model or the harness, never typed by the user. */
const isHarnessText = (text: string): boolean => {
  const t = text.trimStart()
  return (
    t.startsWith("<system-reminder>") ||
    t.startsWith("<local-command-stdout>") ||
    t.startsWith("<local-command-stderr>") ||
    t.startsWith("<local-command-caveat>") ||
    t.startsWith("<task-notification>")
  )
}

/** `<command-name>/x</command-name>…<command-args>a b</command-args>` → `/x a b`. */
const commandText = (text: string): string | undefined => {
  const name = /<command-name>([^<]*)<\/command-name>/.exec(text)?.[1]?.trim()
  if (!name) return undefined
  const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(text)?.[1]?.trim()
  const slash = name.startsWith("/") ? name : `/${name}`
  return args ? `${slash} ${args}` : slash
}

/**
 * The CLI's records of control requests: a set_model is stored as a command
 * `/model <name>` after a `<local-command-caveat>` meta record ("The command
 * below was run directly in Claude Code, not sent to you as a request"), its
 * output in a `<local-command-stdout>` *user* record right after it. Nobody
 * typed it, so it is no prompt of the chat. A command the user typed is
 * stored the same way, but its output is a `system` `local_command` record
 * (2.1.282 and 2.1.332, whoever sent it, with or without a uuid), and a
 * typed `/compact` is written after its compaction's summary (its caveat's
 * parent), output as a user record: both stay. `turnAttributionKey` (2.1.332,
 * a prompt sent with a uuid) also marks a typed one. Their uuids, from
 * records in chain order.
 */
export const localCommandUuids = (records: ReadonlyArray<unknown>): ReadonlySet<string> => {
  const found = new Set<string>()
  let caveat: string | undefined
  /** The caveat came right after a compaction summary: a typed /compact's. */
  let afterSummary = false
  let summary: string | undefined
  for (let at = 0; at < records.length; at++) {
    const raw = records[at]
    if (!isObject(raw) || raw.type !== "user") continue
    const record = raw as StoredRecord
    if (record.isCompactSummary === true) summary = asString(record.uuid)
    // Only a meta record or the one after a caveat is looked at: the text of the others is never needed.
    if (record.isMeta !== true && caveat === undefined) continue
    const text = recordText(record).trimStart()
    const uuid = asString(record.uuid)
    if (record.isMeta === true && text.startsWith("<local-command-caveat>")) {
      caveat = uuid
      afterSummary = summary !== undefined && record.parentUuid === summary
    } else if (caveat !== undefined && record.parentUuid === caveat && text.startsWith("<command-name>")) {
      if (uuid !== undefined && !afterSummary && record.turnAttributionKey === undefined) {
        const next = records[at + 1]
        if (isObject(next) && isRequestOutput(next as StoredRecord, uuid)) found.add(uuid)
      }
      caveat = undefined
    } else caveat = undefined
  }
  return found
}

/** `<local-command-stdout>text</local-command-stdout>` → its text, when there is any. */
const commandOutput = (content: unknown): string | undefined => {
  if (typeof content !== "string") return undefined
  const text = /^\s*<local-command-stdout>([\s\S]*)<\/local-command-stdout>\s*$/.exec(content)?.[1]
  return text === undefined || text.trim() === "" ? undefined : text
}

/** A control request's output: a user `<local-command-stdout>` record answering the command `command`. */
const isRequestOutput = (record: StoredRecord, command: string): boolean =>
  record.type === "user" &&
  record.parentUuid === command &&
  recordText(record).trimStart().startsWith("<local-command-stdout>")

/**
 * What a user record says as a prompt: its text (harness blocks left out, a
 * slash command shown as typed) and how many images it carried. Null when it
 * holds no prompt (tool results, meta records, reminders).
 */
export const promptOf = (record: StoredRecord): { text: string; images: number } | null => {
  if (record.isMeta === true || record.isCompactSummary === true) return null
  if (isTaskNotification(record)) return null
  const texts: string[] = []
  let images = 0
  for (const block of contentBlocks(record)) {
    if (block.type === "image") images++
    else if (block.type === "text" && typeof block.text === "string") {
      if (isHarnessText(block.text)) continue
      texts.push(commandText(block.text) ?? block.text)
    }
  }
  if (texts.length === 0 && images === 0) return null
  return { text: texts.join("\n"), images }
}

/** The first line of a prompt, for a title. */
export const firstLine = (text: string): string =>
  text
    .split("\n")
    .map((line) => line.trim())
    .find((line) => line !== "") ?? ""

/** The text of the last assistant item (a task's summary when nothing better exists). */
export const lastAssistantText = (items: ReadonlyArray<TranscriptItem>): string | undefined => {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]
    if (item?.type === "assistant" && item.text.trim() !== "") return item.text
  }
  return undefined
}

/** The tool call item with this tool_use id, searched inside task items too. */
export const findToolCall = (
  items: ReadonlyArray<TranscriptItem>,
  toolUseId: string,
): Extract<TranscriptItem, { type: "tool_call" }> | undefined => {
  for (const item of items) {
    if (item.type === "tool_call" && item.call.id === toolUseId) return item
    if (item.type === "task") {
      const inner = findToolCall(item.items, toolUseId)
      if (inner) return inner
    }
  }
  return undefined
}

/**
 * The CLI stores a tool's output twice (the result's content and, in
 * `toolUseResult`, `stdout`, `file.content`…), and the answer carries both
 * (`output_text` and `output`). Where a field of the output (or of an object
 * in it) equals the text, it is made the text's very string, so the copy
 * parsed from the record is garbage at once: a long session's answer holds
 * each output once in memory, not twice. Nothing the answer says changes.
 */
const shareText = (output: unknown, text: string | undefined): void => {
  if (text === undefined || text.length < SHARED_MIN || !isObject(output)) return
  share(output, text)
  for (const key in output) {
    const value = output[key]
    if (isObject(value)) share(value, text)
  }
}

/**
 * `shareText` as a record is read (history/chain.ts), before it is kept: a user
 * record's `toolUseResult` fields that repeat its tool result's text become
 * that very string, so the parsed copy dies young instead of living in the
 * chain until the items are built.
 */
export const shareRecordOutput = (record: StoredRecord): void => {
  const structured = record.toolUseResult
  const message = record.message
  if (!isObject(structured) || !isObject(message) || !Array.isArray(message.content)) return
  for (const block of message.content) {
    if (!isObject(block) || block.type !== "tool_result") continue
    const content = block.content
    // Only a text the result holds already: joining blocks would make one more copy.
    const text =
      typeof content === "string"
        ? content
        : Array.isArray(content) && content.length === 1 && isObject(content[0]) && content[0].type === "text"
          ? asString(content[0].text)
          : undefined
    shareText(structured, text)
  }
}

/** `===` compares the characters; the assignment makes the field that very string. */
const share = (fields: Record<string, unknown>, text: string): void => {
  for (const key in fields) {
    const value = fields[key]
    if (typeof value === "string" && value.length === text.length && value === text) fields[key] = text
  }
}
/** Shorter texts are not worth the comparison. */
const SHARED_MIN = 64

/**
 * An Edit call's description for when its result carries the CLI's own
 * patch: that patch replaces the call's diff (tools.ts `toolResultOf`), so
 * the diff of the input's fragments is never built (it was ~15% of a long
 * session's read). Only the diff depends on the fragments: kind, title and
 * path come from `file_path` (records.test.ts holds this).
 */
export const describePatchedEdit = (input: unknown): ToolDescription => {
  const { diff: _replaced, ...described } = describeToolCall(
    "Edit",
    isObject(input) ? { ...input, old_string: "", new_string: "" } : input,
  )
  return described
}

/** A tool call waiting for its result; described when it comes (or at the end). */
interface OpenCall {
  readonly at: number
  readonly id: string
  readonly name: string
  readonly input: unknown
  readonly tag: { readonly task_id?: string }
}

/** The call as the item carries it: the same fields, in the same order, as described at once. */
const callOf = (open: OpenCall, described: ToolDescription): ToolCall => ({
  id: open.id,
  name: open.name,
  input: open.input,
  ...described,
  status: "Running",
  ...open.tag,
})

/** Map one chain of records (root first) to transcript items. */
export const recordsToItems = (
  records: ReadonlyArray<unknown>,
  options: RecordOptions = {},
): TranscriptItem[] => {
  const items: TranscriptItem[] = []
  /** tool_use id → position of its tool_call item, for the result that follows. */
  const calls = new Map<string, number>()
  /** Calls not yet described: their item holds the call's id, name and input only. */
  const open = new Map<number, OpenCall>()
  /** The task list the TaskCreate/TaskUpdate/TaskList tools keep: a plan whenever it changes. */
  const tasks = new TaskList()
  const tag = options.taskId === undefined ? {} : { task_id: options.taskId }
  const localCommands = localCommandUuids(records)

  for (const raw of records) {
    if (!isObject(raw)) continue
    const record = raw as StoredRecord
    const uuid = asString(record.uuid)
    if (uuid === undefined) continue
    let n = 0
    /** One record may give several items: the first keeps the uuid, later ones get a suffix. */
    const nextId = () => (n++ === 0 ? uuid : `${uuid}:${n - 1}`)

    if (record.type === "assistant") {
      if (record.isApiErrorMessage === true) {
        const text = recordText(record)
        if (text) items.push({ type: "notice", id: nextId(), level: "error", text })
        continue
      }
      for (const block of contentBlocks(record)) {
        if (block.type === "text") {
          const text = asString(block.text) ?? ""
          if (text.trim() !== "") items.push({ type: "assistant", id: nextId(), text, ...tag })
        } else if (block.type === "thinking") {
          const text = asString(block.thinking) ?? ""
          if (text.trim() !== "") items.push({ type: "reasoning", id: nextId(), text, ...tag })
        } else if (block.type === "tool_use" || block.type === "server_tool_use") {
          const id = asString(block.id)
          const name = asString(block.name)
          if (id === undefined || name === undefined) continue
          const input = block.input ?? {}
          const at = items.length
          calls.set(id, at)
          open.set(at, { at, id, name, input, tag })
          // Described when its result comes: an Edit's result may bring the diff (describePatchedEdit).
          const call = { id, name, input, status: "Running", ...tag } as ToolCall
          items.push({ type: "tool_call", id: nextId(), call, ...tag })
          if (name === "TodoWrite") {
            const entries = planFromTodoWrite(input)
            if (entries) items.push({ type: "plan", id: nextId(), entries, ...tag })
          }
        }
      }
      continue
    }

    if (record.type === "system") {
      // A typed command's output: live, the CLI streams it as a synthetic assistant message.
      const output = record.subtype === "local_command" ? commandOutput(record.content) : undefined
      if (output !== undefined) items.push({ type: "assistant", id: nextId(), text: output, ...tag })
      continue
    }
    if (record.type !== "user") continue
    if (record.isCompactSummary === true) {
      items.push({ type: "compacted", id: nextId(), summary: recordText(record) })
      continue
    }
    const blocks = contentBlocks(record)
    const results = blocks.filter((b) => b.type === "tool_result")
    for (const result of results) {
      const toolUseId = asString(result.tool_use_id)
      const at = toolUseId === undefined ? undefined : calls.get(toolUseId)
      const item = at === undefined ? undefined : items[at]
      if (at === undefined || item?.type !== "tool_call") continue
      // The record's toolUseResult belongs to its one tool result.
      const structured = results.length === 1 ? record.toolUseResult : undefined
      const outcome = toolResultOf(result.content, structured, result.is_error === true, item.call.name)
      shareText(outcome.output, outcome.output_text)
      const waiting = open.get(at)
      open.delete(at)
      const call =
        waiting === undefined
          ? item.call
          : callOf(
              waiting,
              waiting.name === "Edit" && outcome.diff !== undefined
                ? { ...describePatchedEdit(waiting.input), diff: outcome.diff } // the diff keeps its place
                : describeToolCall(waiting.name, waiting.input),
            )
      items[at] = { ...item, call: { ...call, ...outcome } }
      const changed = applyTaskTool(tasks, item.call.name, item.call.input, structured, outcome.status)
      if (changed) items.push({ type: "plan", id: nextId(), entries: tasks.plan(), ...tag })
    }
    if (results.length > 0) continue
    const text = recordText(record)
    if (isInterruptText(text)) {
      items.push({ type: "notice", id: nextId(), level: "info", text: "Stopped." })
      continue
    }
    const prompt = localCommands.has(uuid) ? null : promptOf(record)
    if (prompt === null) continue
    items.push({
      type: "user",
      id: nextId(),
      text: prompt.text,
      ...(prompt.images > 0 ? { images: prompt.images } : {}),
      ...tag,
    })
  }

  for (const waiting of open.values()) {
    const item = items[waiting.at]
    if (item?.type === "tool_call")
      items[waiting.at] = { ...item, call: callOf(waiting, describeToolCall(waiting.name, waiting.input)) }
  }
  // A call whose result never came: the process ended while it ran.
  for (const at of calls.values()) {
    const item = items[at]
    if (item?.type === "tool_call" && item.call.status === "Running")
      items[at] = { ...item, call: { ...item.call, status: "Cancelled" } }
  }
  return items
}

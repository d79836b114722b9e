/**
 * Task notifications: the `<task-notification>` user records the CLI queues
 * into a conversation when a background task ends (its task and tool_use
 * ids, status, summary, result, usage), parsed from their text. The stored
 * subagents (subagents.ts) take a background agent's end from them.
 */
import { recordText, type StoredRecord } from "../records.ts"

export interface TaskNotification {
  readonly taskId?: string
  readonly toolUseId?: string
  readonly status?: string
  readonly summary?: string
  readonly result?: string
  readonly usage?: {
    readonly used_tokens?: number
    readonly tool_uses?: number
    readonly duration_ms?: number
  }
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
            ...withNumber(
              "used_tokens",
              num(tag(usageText, "subagent_tokens") ?? tag(usageText, "total_tokens")),
            ),
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

/** `{ [key]: value }`, or nothing when the value is missing. */
export const withNumber = (key: string, value: number | undefined) =>
  value === undefined ? {} : { [key]: value }

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

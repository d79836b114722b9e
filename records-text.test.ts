/**
 * The record helpers every read asks of every record (records.ts
 * `contentBlocks`, `recordText`, `localCommandUuids`): the same answers as
 * their plain definitions, over every recorded transcript and hand-made
 * edge cases, with no copy of a block list that is already clean.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { contentBlocks, localCommandUuids, recordText, type StoredRecord } from "./records.ts"
import { isObject } from "./values.ts"

/** The plain definitions: arrays filtered, mapped and joined. */
const plainBlocks = (record: StoredRecord): ReadonlyArray<Record<string, unknown>> => {
  const message = record.message
  if (!isObject(message)) return []
  const content = message.content
  if (typeof content === "string") return [{ type: "text", text: content }]
  return Array.isArray(content) ? content.filter(isObject) : []
}
const plainText = (record: StoredRecord): string =>
  plainBlocks(record)
    .filter((b) => b.type === "text" && typeof b.text === "string")
    .map((b) => b.text as string)
    .join("\n")
/** A command right after its caveat, answered by a user stdout record, its caveat not after a compaction summary. */
const plainLocalCommands = (records: ReadonlyArray<StoredRecord>): Set<string> => {
  const found = new Set<string>()
  const users = records.filter((r) => r.type === "user")
  const summaries = new Set(users.filter((r) => r.isCompactSummary === true).map((r) => r.uuid))
  users.forEach((record, i) => {
    const caveat = users[i - 1]
    const next = records[records.indexOf(record) + 1]
    const isCaveat =
      caveat?.isMeta === true && plainText(caveat).trimStart().startsWith("<local-command-caveat>")
    if (
      isCaveat &&
      typeof record.uuid === "string" &&
      record.parentUuid === caveat?.uuid &&
      plainText(record).trimStart().startsWith("<command-name>") &&
      record.turnAttributionKey === undefined &&
      !(summaries.has(caveat?.parentUuid) && users.slice(0, i).some((r) => r.uuid === caveat?.parentUuid)) &&
      next?.type === "user" &&
      next.parentUuid === record.uuid &&
      plainText(next).trimStart().startsWith("<local-command-stdout>")
    )
      found.add(record.uuid)
  })
  return found
}

/** Every record of every recorded transcript (main chats and subagents). */
const recordedRecords = (): StoredRecord[] => {
  const records: StoredRecord[] = []
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith(".jsonl") && dir.includes("/projects"))
        for (const line of readFileSync(path, "utf8").split("\n"))
          if (line.trim() !== "") records.push(JSON.parse(line) as StoredRecord)
    }
  }
  walk("testdata")
  return records
}

const user = (content: unknown, extra: Record<string, unknown> = {}): StoredRecord => ({
  type: "user",
  message: { role: "user", content },
  ...extra,
})

const edgeCases: StoredRecord[] = [
  user("plain string"),
  user([]),
  user([{ type: "text", text: "one" }]),
  user([
    { type: "text", text: "one" },
    { type: "image", source: {} },
    { type: "text", text: "two" },
  ]),
  user([
    { type: "text", text: "  " },
    { type: "text", text: "<task-notification>x" },
  ]),
  user([null, "stray", { type: "text", text: "after strays" }, 3]),
  user([
    { type: "text", text: 7 },
    { type: "tool_result", content: "r" },
  ]),
  user(undefined),
  { type: "user", message: "not an object" },
  { type: "assistant" },
]

describe("record text and blocks", () => {
  const records = [...recordedRecords(), ...edgeCases]

  it("reads recorded transcripts (the comparison below is over real records)", () => {
    expect(records.length).toBeGreaterThan(100)
  })

  it("recordText and contentBlocks answer as their plain definitions", () => {
    for (const record of records) {
      expect(recordText(record)).toBe(plainText(record))
      expect(contentBlocks(record)).toEqual(plainBlocks(record))
    }
  })

  it("a clean block list is the record's own array, not a copy", () => {
    const record = edgeCases[3] as StoredRecord
    expect(contentBlocks(record)).toBe((record.message as { content: unknown }).content)
  })

  it("localCommandUuids finds the same commands as its plain definition", () => {
    const caveat = user([{ type: "text", text: "<local-command-caveat>Caveat</local-command-caveat>" }], {
      uuid: "c1",
      isMeta: true,
    })
    const command = user("<command-name>/model</command-name><command-args>opus</command-args>", {
      uuid: "m1",
      parentUuid: "c1",
    })
    const answer = user("<local-command-stdout>Set model to opus</local-command-stdout>", {
      uuid: "o1",
      parentUuid: "m1",
    })
    const summary = user("This session is being continued…", { uuid: "s1", isCompactSummary: true })
    const afterSummary = { ...caveat, uuid: "c3", parentUuid: "s1" }
    const compact = user("<command-name>/compact</command-name>", { uuid: "m3", parentUuid: "c3" })
    const compacted = user("<local-command-stdout>Compacted </local-command-stdout>", {
      uuid: "o3",
      parentUuid: "m3",
    })
    const typed = user("<command-name>/compact</command-name>", {
      uuid: "m2",
      parentUuid: "c2",
      turnAttributionKey: "k",
    })
    const caveat2 = { ...caveat, uuid: "c2" }
    const sequences = [
      records,
      [caveat, command],
      [caveat, command, answer],
      [caveat2, typed, answer],
      [caveat, user("x", { uuid: "u" }), command, answer],
      [summary, afterSummary, compact, compacted],
      [caveat, command, answer, summary, afterSummary, compact, compacted],
    ]
    for (const sequence of sequences)
      expect([...localCommandUuids(sequence)].sort()).toEqual([...plainLocalCommands(sequence)].sort())
    expect([...localCommandUuids([caveat, command, answer])]).toEqual(["m1"])
  })
})

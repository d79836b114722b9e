import { readdirSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "./testkit/node-fs.ts"
import { readChain } from "./history.ts"
import { firstLine, isTaskNotification, promptOf, recordsToItems, type StoredRecord } from "./records.ts"
import type { TranscriptItem } from "./sdk/protocol.ts"

/** The main transcript of a recorded scenario, read by the chain rule. */
const recorded = async (scenario: string): Promise<StoredRecord[]> => {
  const dir = `testdata/${scenario}/projects/-home-dev-ws`
  const file = readdirSync(dir).find((f) => f.endsWith(".jsonl"))
  const chain = await Effect.runPromise(readChain(`${dir}/${file}`).pipe(Effect.provide(NodeFsLayer)))
  return chain.records
}

const calls = (items: TranscriptItem[]) => items.flatMap((i) => (i.type === "tool_call" ? [i.call] : []))

describe("records → items over recordings", () => {
  it("text with thinking: prompts, reasoning and text, ids are record uuids", async () => {
    const records = await recorded("text_thinking")
    const items = recordsToItems(records)
    expect(items.map((i) => i.type)).toEqual(["user", "reasoning", "assistant", "user", "assistant"])
    expect(items[0]).toMatchObject({ type: "user", text: "Hello there" })
    const uuids = new Set(records.map((r) => r.uuid))
    for (const item of items) expect(uuids.has(item.id)).toBe(true)
  })

  it("Bash approved: exit code 0 and the whole tool_use_result as output", async () => {
    const [call] = calls(recordsToItems(await recorded("bash_allow")))
    expect(call).toMatchObject({ name: "Bash", kind: "execute", status: "Completed", exit_code: 0 })
    expect(call?.output).toMatchObject({ stdout: expect.stringContaining("bash-output-ok") })
  })

  it("Bash denied: failed", async () => {
    const [call] = calls(recordsToItems(await recorded("bash_deny")))
    expect(call).toMatchObject({ name: "Bash", status: "Failed" })
  })

  it("Write then Edit: new_text and a unified diff, as live", async () => {
    const [write, edit] = calls(recordsToItems(await recorded("write_edit")))
    expect(write).toMatchObject({ name: "Write", kind: "edit", status: "Completed" })
    expect(write?.new_text).toBeTruthy()
    expect(edit?.diff).toMatch(/^--- a\//m)
    expect(edit?.diff).toMatch(/^@@ /m)
  })

  it("TodoWrite: a tool call and a plan", async () => {
    const items = recordsToItems(await recorded("todo"))
    const plans = items.filter((i) => i.type === "plan")
    expect(plans.length).toBeGreaterThan(0)
    const last = plans[plans.length - 1]
    expect(last?.type === "plan" && last.entries.length).toBeGreaterThan(0)
  })

  it("task tools: a plan after TaskCreate and TaskUpdate", async () => {
    const items = recordsToItems(await recorded("tasks"))
    const plans = items.flatMap((i) => (i.type === "plan" ? [i.entries] : []))
    expect(plans.length).toBe(2)
    expect(plans[0]?.[0]).toMatchObject({ content: "Fix the parser", status: "pending" })
    expect(plans[1]?.[0]).toMatchObject({ content: "Fix the parser", status: "in_progress" })
  })

  it("an interrupted turn: the call cancelled, then Stopped.", async () => {
    const items = recordsToItems(await recorded("interrupt"))
    const at = items.findIndex((i) => i.type === "notice")
    expect(items[at]).toMatchObject({ type: "notice", text: "Stopped." })
    expect(calls(items)[0]).toMatchObject({ name: "Bash", status: "Cancelled" })
    expect(items.slice(at + 1).map((i) => i.type)).toEqual(["user", "assistant"])
  })

  it("a compaction: the summary as a compacted item, the command as typed", async () => {
    const items = recordsToItems(await recorded("compact"))
    const compacted = items.find((i) => i.type === "compacted")
    expect(compacted?.type === "compacted" && compacted.summary).toContain("Summary")
    expect(items.some((i) => i.type === "user" && i.text === "/compact")).toBe(true)
    expect(items.some((i) => i.type === "user" && i.text.includes("local-command"))).toBe(false)
  })

  it("an API error message as an error notice", async () => {
    const items = recordsToItems(await recorded("rate_limit"))
    expect(items.some((i) => i.type === "notice" && i.level === "error")).toBe(true)
  })
})

describe("records → items, hand-written", () => {
  const user = (uuid: string, content: unknown, extra: Record<string, unknown> = {}) => ({
    type: "user",
    uuid,
    parentUuid: null,
    message: { role: "user", content },
    ...extra,
  })

  it("skips meta records, reminders and task notifications; counts images", () => {
    const items = recordsToItems([
      user("u1", "<local-command-caveat>x</local-command-caveat>", { isMeta: true }),
      user("u2", [{ type: "text", text: "<system-reminder>hi</system-reminder>" }]),
      user("u3", "<task-notification>\n<task-id>a1</task-id>\n</task-notification>", {
        origin: { kind: "task-notification" },
      }),
      user("u4", [
        { type: "image", source: {} },
        { type: "text", text: "look" },
      ]),
    ])
    expect(items).toEqual([{ type: "user", id: "u4", text: "look", images: 1 }])
  })

  it("a record with several blocks gives one item per block, ids suffixed", () => {
    const items = recordsToItems([
      {
        type: "assistant",
        uuid: "a1",
        message: {
          content: [
            { type: "thinking", thinking: "hmm" },
            { type: "text", text: "yes" },
            { type: "tool_use", id: "t1", name: "Read", input: { file_path: "/x" } },
          ],
        },
      },
    ])
    expect(items.map((i) => i.id)).toEqual(["a1", "a1:1", "a1:2"])
    // No result ever came: the process ended while it ran.
    expect(calls(items)[0]).toMatchObject({ id: "t1", status: "Cancelled", kind: "read" })
  })

  it("tags every item with the task it ran in", () => {
    const items = recordsToItems([user("u1", "go")], { taskId: "toolu_1" })
    expect(items).toEqual([{ type: "user", id: "u1", text: "go", task_id: "toolu_1" }])
  })

  it("prompt helpers", () => {
    expect(
      promptOf(user("u", "<command-name>/model</command-name><command-args>opus</command-args>"))?.text,
    ).toBe("/model opus")
    expect(isTaskNotification(user("u", "<task-notification>x</task-notification>"))).toBe(true)
    expect(firstLine("\n\n  Title here \nrest")).toBe("Title here")
  })
})

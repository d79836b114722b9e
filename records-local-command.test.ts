/**
 * The CLI's record of a control request (set_model) is not a prompt; a
 * command the user typed (/compact) is. Shapes as CLI 2.1.332 writes them.
 */
import { describe, expect, it } from "vitest"
import { firstPromptRecord, promptRecords } from "./history.ts"
import { recordsToItems } from "./records.ts"

const caveat = (uuid: string, parent: string) => ({
  parentUuid: parent,
  type: "user",
  message: {
    role: "user",
    content:
      "<local-command-caveat>The command below was run directly in Claude Code, not sent to you as a request, and its output goes straight to the user. It's recorded here as context for later messages.</local-command-caveat>",
  },
  isMeta: true,
  rowSource: "harness",
  uuid,
})
const command = (uuid: string, parent: string, name: string, args: string, typed: boolean) => ({
  parentUuid: parent,
  type: "user",
  message: {
    role: "user",
    content: `<command-name>/${name}</command-name>\n            <command-message>${name}</command-message>\n            <command-args>${args}</command-args>`,
  },
  rowSource: "local",
  uuid,
  ...(typed ? { turnAttributionKey: uuid } : {}),
})
const stdout = (uuid: string, parent: string, text: string) => ({
  parentUuid: parent,
  type: "user",
  message: { role: "user", content: `<local-command-stdout>${text}</local-command-stdout>` },
  rowSource: "local",
  uuid,
})
const prompt = (uuid: string, parent: string | null, text: string) => ({
  parentUuid: parent,
  type: "user",
  message: { role: "user", content: [{ type: "text", text }] },
  promptSource: "sdk",
  uuid,
  turnAttributionKey: uuid,
})

const records = [
  prompt("u1", null, "alpha"),
  caveat("c1", "u1"),
  command("m1", "c1", "model", "claude-haiku-5-5", false),
  stdout("o1", "m1", "Set model to `claude-haiku-5-5`"),
  prompt("u2", "o1", "beta"),
  caveat("c2", "u2"),
  command("k1", "c2", "compact", "", true),
  stdout("o2", "k1", "Compacted "),
]

describe("control requests in a stored chat", () => {
  it("a set_model's /model record is no user item; a typed /compact is", () => {
    const users = recordsToItems(records).filter((i) => i.type === "user")
    expect(users.map((i) => (i.type === "user" ? i.text : ""))).toEqual(["alpha", "beta", "/compact"])
  })

  it("a rewind counts only what the user sent", () => {
    expect(promptRecords(records).map((r) => r.uuid)).toEqual(["u1", "u2", "k1"])
  })
})

describe("the first prompt (a chat's title)", () => {
  it("is the first of promptRecords, a control request's /model passed over", () => {
    const leading = [caveat("c0", "x"), command("m0", "c0", "model", "claude-haiku-5-5", false), ...records]
    for (const chain of [records, leading, records.slice(1), []])
      expect(firstPromptRecord(chain)?.uuid).toBe(promptRecords(chain)[0]?.uuid)
    expect(firstPromptRecord(leading)?.uuid).toBe("u1")
  })

  it("reads no record after it (the title of a long chat costs one prompt, not the chat)", () => {
    const long = [...records, ...Array.from({ length: 1000 }, (_, i) => prompt(`p${i}`, "o2", "more"))]
    const guarded = new Proxy(long, {
      get: (target, key, receiver) => {
        if (typeof key === "string" && /^\d+$/.test(key) && Number(key) > 0)
          throw new Error(`read record ${key}`)
        return Reflect.get(target, key, receiver)
      },
    })
    expect(firstPromptRecord(guarded)?.uuid).toBe("u1")
  })
})

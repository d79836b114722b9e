/**
 * The CLI's record of a control request (set_model) is not a prompt; a
 * command the user typed (/compact, /model) is, whoever sent it and with or
 * without a uuid. Shapes as CLI 2.1.332 writes them, and the real CLI's
 * recordings (testdata/local_commands: 2.1.332 and 2.1.282, prompts sent
 * without a uuid).
 */
import { existsSync, readdirSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "./testkit/node-fs.ts"
import { firstPromptRecord, promptRecords, readPrompts, readSession } from "./history.ts"
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
const command = (uuid: string, parent: string, name: string, args: string, typed = false) => ({
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

/** A typed command's output: a system record (2.1.282 and 2.1.332). */
const output = (uuid: string, parent: string, text: string) => ({
  parentUuid: parent,
  type: "system",
  subtype: "local_command",
  content: `<local-command-stdout>${text}</local-command-stdout>`,
  uuid,
})
const summary = (uuid: string, parent: string | null) => ({
  parentUuid: parent,
  type: "user",
  message: { role: "user", content: "This session is being continued from a previous conversation…" },
  isCompactSummary: true,
  uuid,
})

const records = [
  prompt("u1", null, "alpha"),
  caveat("c1", "u1"),
  command("m1", "c1", "model", "claude-haiku-5-5"),
  stdout("o1", "m1", "Set model to `claude-haiku-5-5`"),
  prompt("u2", "o1", "beta"),
  caveat("c2", "u2"),
  command("k1", "c2", "compact", "", true),
  stdout("o2", "k1", "Compacted "),
]

/** The same chat from a client that sends no uuid: no turnAttributionKey anywhere. */
const withoutKeys = [
  prompt("u1", null, "alpha"),
  caveat("c1", "u1"),
  command("m1", "c1", "model", "sonnet"),
  stdout("o1", "m1", "Set model to `sonnet (claude-sonnet-5-5)`"),
  caveat("c2", "o1"),
  command("t1", "c2", "model", "haiku"),
  output("s1", "t1", "Set model to `Haiku 5.5` for this session only"),
  summary("y1", null),
  caveat("c3", "y1"),
  command("k1", "c3", "compact", ""),
  stdout("o3", "k1", "Compacted "),
  prompt("u2", "o3", "beta"),
].map((r) => {
  const { turnAttributionKey: _, ...rest } = r as Record<string, unknown>
  return rest
})

describe("control requests in a stored chat", () => {
  it("a set_model's /model record is no user item; a typed /compact is", () => {
    const users = recordsToItems(records).filter((i) => i.type === "user")
    expect(users.map((i) => (i.type === "user" ? i.text : ""))).toEqual(["alpha", "beta", "/compact"])
  })

  it("a rewind counts only what the user sent", () => {
    expect(promptRecords(records).map((r) => r.uuid)).toEqual(["u1", "u2", "k1"])
  })

  it("tells them apart without turnAttributionKey: a typed command's output is a system record, a typed /compact follows its summary", () => {
    const users = recordsToItems(withoutKeys).filter((i) => i.type === "user")
    expect(users.map((i) => (i.type === "user" ? i.text : ""))).toEqual([
      "alpha",
      "/model haiku",
      "/compact",
      "beta",
    ])
    expect(promptRecords(withoutKeys).map((r) => r.uuid)).toEqual(["u1", "t1", "k1", "u2"])
    // The typed command's output reads back as live shows it (a synthetic assistant message).
    const said = recordsToItems(withoutKeys).filter((i) => i.type === "assistant")
    expect(said.map((i) => (i.type === "assistant" ? i.text : ""))).toEqual([
      "Set model to `Haiku 5.5` for this session only",
    ])
  })
})

/** The recorded chats of the real CLI, read back as read_session reads them. */
const recorded = ["testdata/local_commands", "testdata/cli-2.1.282/local_commands"].filter((dir) =>
  existsSync(`${dir}/projects`),
)

describe.each(recorded)("%s (real CLI, prompts without a uuid)", (dir) => {
  const [project = ""] = readdirSync(`${dir}/projects`)
  const cwd = project.replace(/-/g, "/")
  const session = (readdirSync(`${dir}/projects/${project}`).find((f) => f.endsWith(".jsonl")) ?? "").slice(
    0,
    -6,
  )
  const run = <A>(effect: Effect.Effect<A, never, never>) => Effect.runPromise(effect)

  it("shows the typed /model and /compact, never set_model's /model", async () => {
    const read = await run(readSession(dir, cwd, session).pipe(Effect.provide(NodeFsLayer)))
    const users = (read?.items ?? []).filter((i) => i.type === "user")
    expect(users.map((i) => (i.type === "user" ? i.text : ""))).toEqual([
      "alpha",
      "/model haiku",
      "/compact",
      "beta",
    ])
    const stored = await run(readPrompts(dir, cwd, session).pipe(Effect.provide(NodeFsLayer)))
    expect(stored.prompts).toHaveLength(4)
  })
})

describe("the first prompt (a chat's title)", () => {
  it("is the first of promptRecords, a control request's /model passed over", () => {
    const leading = [
      caveat("c0", "x"),
      command("m0", "c0", "model", "claude-haiku-5-5"),
      stdout("o0", "m0", "Set model to `claude-haiku-5-5`"),
      ...records,
    ]
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

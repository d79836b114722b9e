/**
 * One title rule for list_sessions and read_session: a chat is called the
 * same in the list and when opened (the rename's file, a custom title, an AI
 * title, then the first prompt's first line).
 */
import { readdirSync } from "node:fs"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "./testkit/node-fs.ts"
import { listSessions, readSession } from "./history.ts"
import { Fs, Storage } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const HOME = "/home/user"
const CONFIG = `${HOME}/.claude`
const WS = "/work/app"
const PROJECT = `${CONFIG}/projects/-work-app`
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const jsonl = (records: ReadonlyArray<unknown>) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`
const user = (uuid: string, text: string) => ({
  parentUuid: null,
  isSidechain: false,
  type: "user",
  message: { role: "user", content: [{ type: "text", text }] },
  uuid,
  timestamp: "2026-11-01T10:00:01.000Z",
  cwd: WS,
  sessionId: "s",
})
const assistant = (uuid: string, parent: string) => ({
  parentUuid: parent,
  isSidechain: false,
  message: { id: `msg_${uuid}`, type: "message", role: "assistant", content: [{ type: "text", text: "ok" }] },
  type: "assistant",
  uuid,
  timestamp: "2026-11-01T10:00:02.000Z",
  cwd: WS,
})
const turn = (n: number, text: string) => [
  user(id(n * 10 + 1), text),
  assistant(id(n * 10 + 2), id(n * 10 + 1)),
]

const files: Record<string, string> = {
  [`${PROJECT}/${id(1)}.jsonl`]: jsonl([...turn(1, "\nFix the parser\nand more")]),
  [`${PROJECT}/${id(2)}.jsonl`]: jsonl([...turn(2, "first B"), { type: "ai-title", aiTitle: "AI B" }]),
  [`${PROJECT}/${id(3)}.jsonl`]: jsonl([
    ...turn(3, "first C"),
    { type: "ai-title", aiTitle: "AI C" },
    { type: "custom-title", customTitle: "Custom C" },
  ]),
  [`${PROJECT}/${id(4)}.jsonl`]: jsonl([
    ...turn(4, "first D"),
    { type: "custom-title", customTitle: "Old D" },
  ]),
  [`${PROJECT}/${id(4)}/custom-title.json`]: JSON.stringify({ customTitle: "Renamed D" }),
}

const inMemory = <A>(effect: Effect.Effect<A, never, Fs | Storage>) => {
  const broker = makeMemoryBroker({ home: HOME, files })
  return Effect.runPromise(
    effect.pipe(
      Effect.provide(Layer.succeed(Fs, broker.api.fs)),
      Effect.provide(Layer.succeed(Storage, broker.api.storage)),
    ),
  )
}

describe("a chat has one title, listed and read", () => {
  it("by priority: the rename's file, a custom title, an AI title, the first prompt's first line", async () => {
    const listed = await inMemory(listSessions(CONFIG, { cwd: WS }))
    const byId = new Map(listed.sessions.map((s) => [s.session_id, s.title]))
    const expected = ["Fix the parser", "AI B", "Custom C", "Renamed D"]
    for (const [n, title] of expected.entries()) {
      const read = await inMemory(readSession(CONFIG, WS, id(n + 1)))
      expect(read?.title).toBe(title)
      expect(byId.get(id(n + 1))).toBe(title)
    }
  })

  it("every recorded session reads with the title it is listed under", async () => {
    const scenarios = readdirSync("testdata").filter((s) => {
      try {
        return readdirSync(`testdata/${s}/projects/-home-dev-ws`).some((f) => f.endsWith(".jsonl"))
      } catch {
        return false
      }
    })
    expect(scenarios.length).toBeGreaterThan(10)
    const onDisk = <A>(effect: Effect.Effect<A, never, Fs | Storage>) =>
      Effect.runPromise(
        effect.pipe(
          Effect.provide(NodeFsLayer),
          Effect.provide(Layer.succeed(Storage, makeMemoryBroker().api.storage)),
        ),
      )
    for (const scenario of scenarios) {
      const config = `testdata/${scenario}`
      const listed = await onDisk(listSessions(config, { cwd: "/home/dev/ws" }))
      for (const entry of listed.sessions) {
        const read = await onDisk(readSession(config, "/home/dev/ws", entry.session_id))
        expect([scenario, read?.title]).toEqual([scenario, entry.title])
      }
    }
  })
})

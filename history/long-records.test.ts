import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { NodeFsLayer } from "../testkit/node-fs.ts"
import { LONG_STRING_BYTES } from "../files.ts"
import { listSessions, readSession } from "../history.ts"
import { cutNote } from "../long-line.ts"
import { type Fs, Storage } from "../sdk/plugin-api.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"

const onDisk = <A>(effect: Effect.Effect<A, never, Fs | Storage>) =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(NodeFsLayer),
      Effect.provide(Layer.succeed(Storage, makeMemoryBroker().api.storage)),
    ),
  )

const config = mkdtempSync(join(tmpdir(), "cvg-long-records-"))
afterAll(() => rmSync(config, { recursive: true, force: true }))

const CWD = "/work/app"
const ID = "00000000-0000-4000-8000-000000000001"
/** A command's 20 MB output, stored twice on one line as the CLI stores it (content and toolUseResult.stdout). */
const STDOUT = "build line 0123456789\\n".repeat(900_000)
const STDOUT_BYTES = STDOUT.length

const records = [
  `{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":"print the whole log"}]},"uuid":"u1","timestamp":"2026-11-01T10:00:00.000Z","cwd":"${CWD}","sessionId":"${ID}","gitBranch":"main"}`,
  `{"parentUuid":"u1","isSidechain":false,"message":{"id":"m1","type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"cat build.log"}}]},"type":"assistant","uuid":"a1","timestamp":"2026-11-01T10:00:01.000Z","cwd":"${CWD}"}`,
  `{"parentUuid":"a1","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_1","type":"tool_result","content":"${STDOUT}","is_error":false}]},"uuid":"r1","timestamp":"2026-11-01T10:00:02.000Z","toolUseResult":{"stdout":"${STDOUT}","stderr":"","interrupted":false},"sourceToolAssistantUUID":"a1","cwd":"${CWD}"}`,
  `{"parentUuid":"r1","isSidechain":false,"message":{"id":"m2","type":"message","role":"assistant","content":[{"type":"text","text":"Printed."}]},"type":"assistant","uuid":"a2","timestamp":"2026-11-01T10:00:03.000Z","cwd":"${CWD}"}`,
]
const dir = join(config, "projects", "-work-app")
mkdirSync(dir, { recursive: true })
writeFileSync(join(dir, `${ID}.jsonl`), `${records.join("\n")}\n`)

describe("a transcript with one huge tool result", () => {
  it("reads the chain with the output cut in the item and its size said", async () => {
    const transcript = await onDisk(readSession(config, CWD, ID))
    const items = transcript?.items ?? []
    expect(items.map((i) => i.type)).toEqual(["user", "tool_call", "assistant"])
    const call = items[1]
    if (call?.type !== "tool_call") throw new Error("no tool call")
    expect(call.call.status).toBe("Completed")
    expect(call.call.exit_code).toBe(0)
    // Bounded by what is shown, not by the 40 MB line: both copies cut, each saying the full size.
    const note = cutNote(LONG_STRING_BYTES, STDOUT_BYTES)
    expect(call.call.output_text?.endsWith(note)).toBe(true)
    expect(call.call.output_text?.length).toBeLessThan(LONG_STRING_BYTES + 200)
    expect((call.call.output as { stdout: string }).stdout.endsWith(note)).toBe(true)
    expect(items[2]).toMatchObject({ type: "assistant", text: "Printed." })
  })

  it("lists the session from its ends", async () => {
    const page = await onDisk(listSessions(config))
    expect(page.sessions.map((s) => [s.session_id, s.title])).toEqual([[ID, "print the whole log"]])
  })
})

/**
 * What a read answer holds in memory: each tool output once, though the CLI
 * stores it twice (the result's content and `toolUseResult`) and the answer
 * carries both (`output_text`, `output`). Measured as the heap after a full
 * collection, with the records dropped and only the items kept; while a
 * chain holds its records, before any item is built; and the stored agents
 * as read, before they are placed.
 */
import { runInNewContext } from "node:vm"
import { setFlagsFromString } from "node:v8"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { chainOf, keptRecord } from "./history/chain.ts"
import { recordsToItems } from "./records.ts"
import { Fs } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import { readStoredAgents } from "./subagents.ts"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const RESULTS = 20
const OUTPUT_CHARS = 1_000_000

/** A Bash call and its result, linked as a chain, as the CLI writes them (the output twice in the line). */
const lines = (i: number, output: string): string[] => [
  JSON.stringify({
    type: "assistant",
    uuid: `a-${i}`,
    parentUuid: i === 0 ? null : `u-${i - 1}`,
    message: { content: [{ type: "tool_use", id: `t-${i}`, name: "Bash", input: { command: "cat log" } }] },
  }),
  JSON.stringify({
    type: "user",
    uuid: `u-${i}`,
    parentUuid: `a-${i}`,
    message: { content: [{ type: "tool_result", tool_use_id: `t-${i}`, content: output }] },
    toolUseResult: { stdout: output, stderr: "", interrupted: false, file: { content: output } },
  }),
]

const heap = () => {
  gc()
  return process.memoryUsage().heapUsed
}

describe("a read answer's memory", () => {
  it("holds each tool output once when content and toolUseResult say the same", () => {
    const texts = Array.from({ length: RESULTS }, (_, i) => `${i}`.padEnd(OUTPUT_CHARS, "x"))
    const json = texts.flatMap((t, i) => lines(i, t))
    const before = heap()
    // Parsed as the reader does: every string its own copy.
    let records: unknown[] | undefined = json.map((line) => JSON.parse(line) as unknown)
    const items = recordsToItems(records)
    records = undefined
    const held = heap() - before
    const calls = items.flatMap((i) => (i.type === "tool_call" ? [i.call] : []))
    expect(calls).toHaveLength(RESULTS)
    for (const [i, call] of calls.entries()) {
      expect(call.output_text).toBe(texts[i])
      expect(call.output).toMatchObject({ stdout: texts[i], file: { content: texts[i] } })
    }
    // Three copies each before the outputs were shared (60 MB here); one now, plus the items.
    expect(held).toBeLessThan(RESULTS * OUTPUT_CHARS * 1.5)
    expect(held).toBeGreaterThan(RESULTS * OUTPUT_CHARS * 0.9)
  })

  it("a chain being read holds each tool output once already, before any item is built", () => {
    const texts = Array.from({ length: RESULTS }, (_, i) => `${i}`.padEnd(OUTPUT_CHARS, "y"))
    const json = texts.flatMap((t, i) => lines(i, t))
    const before = heap()
    // The chain keeps the records a whole read long (history/chain.ts shares the outputs as each is added).
    const chain = chainOf(json.map((line) => JSON.parse(line) as unknown))
    const held = heap() - before
    expect(chain).toHaveLength(2 * RESULTS)
    for (const [i, record] of chain.filter((r) => r.type === "user").entries())
      expect(record.toolUseResult).toMatchObject({ stdout: texts[i], file: { content: texts[i] } })
    // Three copies each while the chain held them as parsed (60 MB here); one now.
    expect(held).toBeLessThan(RESULTS * OUTPUT_CHARS * 1.5)
  })

  it("stored agents as read hold their items, not their records", async () => {
    const AGENTS = 20
    const BULK = 1_000_000
    const folder = "/home/user/.claude/projects/-w/s"
    const files: Record<string, string> = {}
    for (let i = 0; i < AGENTS; i++) {
      const records = [
        {
          parentUuid: null,
          isSidechain: true,
          agentId: `a${i}`,
          type: "user",
          message: { role: "user", content: "go" },
          uuid: `u${i}`,
        },
        {
          parentUuid: `u${i}`,
          isSidechain: true,
          agentId: `a${i}`,
          type: "assistant",
          message: { role: "assistant", content: [{ type: "text", text: `done ${i}` }] },
          uuid: `r${i}`,
          // A field the chain keeps (it names only the fields it drops) and no item shows.
          bulk: `${i}`.padEnd(BULK, "z"),
        },
      ]
      files[`${folder}/subagents/agent-a${i}.jsonl`] = `${records.map((r) => JSON.stringify(r)).join("\n")}\n`
      files[`${folder}/subagents/agent-a${i}.meta.json`] = JSON.stringify({
        agentType: "general-purpose",
        toolUseId: `t${i}`,
      })
    }
    const broker = makeMemoryBroker({ files })
    const read = readStoredAgents(folder).pipe(Effect.provide(Layer.succeed(Fs, broker.api.fs)))
    const before = heap()
    const agents = await Effect.runPromise(read)
    const held = heap() - before
    expect(agents).toHaveLength(AGENTS)
    for (const agent of agents)
      expect(agent.items).toMatchObject([{ type: "assistant", text: `done ${agent.agentId.slice(1)}` }])
    // Every agent's records held until all were read and placed before (20 MB here).
    expect(held).toBeLessThan(AGENTS * BULK * 0.25)
  })

  it("a kept record leaves out the CLI's bookkeeping, and keeps every field it does not name", () => {
    const record = {
      parentUuid: "p",
      isSidechain: false,
      type: "assistant",
      uuid: "u",
      timestamp: "2026-06-01T08:00:00.000Z",
      cwd: "/ws",
      sessionId: "s",
      version: "2.1.332",
      gitBranch: "main",
      requestId: "req",
      somethingNew: { kept: true },
      message: { id: "msg", role: "assistant", model: "m", content: [], usage: { input_tokens: 1 } },
    }
    expect(keptRecord(record)).toEqual({
      parentUuid: "p",
      isSidechain: false,
      type: "assistant",
      uuid: "u",
      somethingNew: { kept: true },
      message: { role: "assistant", model: "m", content: [] },
    })
  })
})

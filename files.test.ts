import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  decodeText,
  LinePrefix,
  LineSplitter,
  readHead,
  readJson,
  readJsonl,
  readLines,
  readTail,
  readText,
} from "./files.ts"
import { brokerContext } from "./sdk/context.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

const split = (chunks: string[], filter?: (prefix: Uint8Array) => boolean) => {
  const lines: string[] = []
  const splitter = new LineSplitter((bytes) => lines.push(decoder.decode(bytes)), filter)
  for (const chunk of chunks) splitter.push(encoder.encode(chunk))
  splitter.end()
  return lines
}

describe("LineSplitter", () => {
  it("joins lines across chunk boundaries and drops \\r before \\n", () => {
    expect(split(['{"a":', '1}\r\n{"b"', ":2}\n", "\n", '{"c":3}\n'])).toEqual([
      '{"a":1}',
      '{"b":2}',
      '{"c":3}',
    ])
  })

  it("hands over a torn last line at the end", () => {
    expect(split(['{"a":1}\n{"b":', "2"])).toEqual(['{"a":1}', '{"b":2'])
  })

  it("skips a line by its first bytes, even when it spans many chunks", () => {
    const big = `{"type":"api-request-blob","message":"${"x".repeat(3 * LinePrefix)}"}`
    const seen: number[] = []
    const chunks = [
      '{"type":"user"}\n',
      big.slice(0, 100),
      big.slice(100, 900),
      `${big.slice(900)}\n`,
      '{"type":"assistant"}\n',
    ]
    const lines = split(chunks, (prefix) => {
      seen.push(prefix.length)
      return !decoder.decode(prefix).includes("api-request")
    })
    expect(lines).toEqual(['{"type":"user"}', '{"type":"assistant"}'])
    // The filter saw at most LinePrefix bytes of the big line, once.
    expect(seen).toEqual([15, LinePrefix, 20])
  })

  it("keeps a long wanted line whole across chunks", () => {
    const long = `{"type":"user","text":"${"é".repeat(2000)}"}`
    const bytes = encoder.encode(`${long}\n`)
    const lines: string[] = []
    const splitter = new LineSplitter(
      (b) => lines.push(decoder.decode(b)),
      () => true,
    )
    for (let at = 0; at < bytes.length; at += 333) splitter.push(bytes.slice(at, at + 333))
    splitter.end()
    expect(lines).toEqual([long])
  })
})

describe("decodeText", () => {
  it("decodes valid text, and a character cut at a range end as U+FFFD", () => {
    expect(decodeText(encoder.encode("héllo"))).toBe("héllo")
    expect(decodeText(encoder.encode("hé").subarray(0, 2))).toBe("h\uFFFD")
  })
})

describe("reads through the broker", () => {
  const broker = makeMemoryBroker({
    files: {
      "/home/user/.claude/a.txt": "0123456789",
      "/home/user/.claude/t.jsonl": '{"n":1}\n{"n":2}\n{"n":',
      "/home/user/.claude/x.json": '{"customTitle":"T"}',
    },
  })
  const run = <A>(effect: Effect.Effect<A, never, never>) => Effect.runPromise(effect)
  const ctx = brokerContext(broker.api)
  const provide = <A, R>(effect: Effect.Effect<A, never, R>) =>
    run(Effect.provideContext(effect, ctx) as Effect.Effect<A, never, never>)

  it("reads text, a head and a tail", async () => {
    expect(await provide(readText("/home/user/.claude/a.txt"))).toBe("0123456789")
    expect(await provide(readHead("/home/user/.claude/a.txt", 4))).toBe("0123")
    expect(await provide(readTail("/home/user/.claude/a.txt", 3))).toBe("789")
    expect(await provide(readTail("/home/user/.claude/a.txt", 3, 10))).toBe("789")
    expect(await provide(readJson("/home/user/.claude/x.json"))).toEqual({ customTitle: "T" })
  })

  it("answers null for a missing file", async () => {
    expect(await provide(readText("/home/user/.claude/none"))).toBeNull()
    expect(await provide(readHead("/home/user/.claude/none", 4))).toBeNull()
    expect(await provide(readTail("/home/user/.claude/none", 4))).toBeNull()
    expect(await provide(readJsonl("/home/user/.claude/none"))).toBeNull()
    expect(await provide(readJson("/home/user/.claude/a.txt"))).toBeNull()
  })

  it("streams JSONL lines and drops a torn last line", async () => {
    expect(await provide(readLines("/home/user/.claude/t.jsonl"))).toEqual(['{"n":1}', '{"n":2}', '{"n":'])
    expect(await provide(readJsonl("/home/user/.claude/t.jsonl"))).toEqual([{ n: 1 }, { n: 2 }])
  })
})

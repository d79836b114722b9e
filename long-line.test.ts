import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import { LineSplitter } from "./files.ts"
import { cutNote, grouped, LongLineCompactor } from "./long-line.ts"

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/** `text` through a compactor in parts of `size` bytes. */
const compact = (text: string, keep: number, size: number): string => {
  const bytes = encoder.encode(text)
  const cutter = new LongLineCompactor(keep)
  for (let at = 0; at < bytes.length; at += size) cutter.push(bytes.subarray(at, at + size))
  return decoder.decode(cutter.finish())
}

describe("cutNote", () => {
  it("groups the sizes by thousands, as en-US numbers read", () => {
    expect(cutNote(262_144, 12_345_678)).toBe(" [… truncated: 262,144 of 12,345,678 bytes shown]")
    for (const n of [0, 7, 999, 1000, 10_000, 100_000, 999_999, 1_000_000, 2 ** 31, 123_456_789_012])
      expect(grouped(n)).toBe(n.toLocaleString("en-US"))
  })
})

describe("LongLineCompactor", () => {
  it("leaves short strings and everything outside strings as they are", () => {
    const line = '{"a":"short","n":[1,2.5,true,null],"o":{"k":"v\\"q"}}'
    for (const size of [1, 3, 7, 1000]) expect(compact(line, 16, size)).toBe(line)
  })

  it("cuts a long string, says its size, and keeps the line valid JSON", () => {
    const long = "x".repeat(10_000)
    const line = JSON.stringify({ type: "user", content: long, uuid: "u-1", after: "y".repeat(20) })
    for (const size of [1, 13, 4096, line.length]) {
      const record = JSON.parse(compact(line, 100, size)) as Record<string, string>
      expect(record.uuid).toBe("u-1")
      expect(record.after).toBe("y".repeat(20))
      expect(record.content).toBe(`${"x".repeat(100)}${cutNote(100, 10_000)}`)
    }
  })

  it("never cuts inside an escape or a UTF-8 character", () => {
    // Every cut position over strings made of escapes, \u sequences and multibyte characters.
    const value = 'é\n"\\\u0001€😀a'.repeat(40)
    const line = JSON.stringify({ v: value, w: '"', n: 42 })
    const valueBytes = encoder.encode(JSON.stringify(value)).length - 2
    for (let keep = 1; keep < 60; keep++)
      for (const size of [1, 2, 5, 4096]) {
        const parsed = JSON.parse(compact(line, keep, size)) as { v: string; n: number }
        expect(parsed.n).toBe(42)
        const shown = parsed.v.slice(0, parsed.v.indexOf(" [… truncated"))
        expect(value.startsWith(shown)).toBe(true)
        expect(parsed.v).toContain(`of ${valueBytes} bytes shown]`)
      }
  })
})

describe("LineSplitter over a huge line", () => {
  it("hands over a 100 MB record cut small, never holding more than the limit", () => {
    const stdout = "0123456789abcdef".repeat(100 * 1024 * 64) // 100 MiB
    const record = `{"parentUuid":"p","isSidechain":false,"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"${stdout}","is_error":false}]},"uuid":"u-big","toolUseResult":{"stdout":"${stdout}","stderr":""},"sourceToolAssistantUUID":"a1"}`
    const lines: string[] = []
    const splitter = new LineSplitter((bytes) => lines.push(decoder.decode(bytes)), undefined, {
      longLineBytes: 4 * 1024 * 1024,
      longStringBytes: 64 * 1024,
    })
    const bytes = encoder.encode(
      `{"type":"user","uuid":"before"}\n${record}\n{"type":"user","uuid":"after"}\n`,
    )
    for (let at = 0; at < bytes.length; at += 1024 * 1024) splitter.push(bytes.subarray(at, at + 1024 * 1024))
    splitter.end()
    expect(lines).toHaveLength(3)
    const big = JSON.parse(lines[1] as string) as {
      uuid: string
      message: { content: Array<{ content: string }> }
      toolUseResult: { stdout: string }
    }
    expect(big.uuid).toBe("u-big")
    const note = cutNote(64 * 1024, stdout.length)
    expect(big.message.content[0]?.content).toBe(`${stdout.slice(0, 64 * 1024)}${note}`)
    expect(big.toolUseResult.stdout.endsWith(note)).toBe(true)
    // Memory: the splitter held about the limit, not the 200 MB line.
    expect(splitter.mostHeldBytes).toBeLessThan(6 * 1024 * 1024)
    expect((lines[1] as string).length).toBeLessThan(200 * 1024)
  })

  it("keeps no buffer grown for a huge line once the line went to the cutter", () => {
    setFlagsFromString("--expose-gc")
    const gc = runInNewContext("gc") as () => void
    const arrayBuffers = () => {
      // The second collection finishes the first one's sweep of array buffers.
      gc()
      gc()
      return process.memoryUsage().arrayBuffers
    }
    const bytes = encoder.encode(
      `{"type":"user","text":"${"q".repeat(12 * 1024 * 1024)}"}\n{"type":"user"}\n`,
    )
    const chunk = new Uint8Array(256 * 1024)
    const before = arrayBuffers()
    let lines = 0
    const splitter = new LineSplitter(() => lines++)
    for (let at = 0; at < bytes.length; at += chunk.length) {
      const n = Math.min(chunk.length, bytes.length - at)
      chunk.set(bytes.subarray(at, at + n))
      splitter.push(chunk.subarray(0, n))
    }
    splitter.end()
    expect(lines).toBe(2)
    // The splitter lives on (a file's read goes on): a carry grown for the 12 MB line (8 MiB at first) stayed with it.
    expect(arrayBuffers() - before).toBeLessThan(2 * 1024 * 1024)
    expect(splitter.mostHeldBytes).toBeLessThan(6 * 1024 * 1024)
  })
})

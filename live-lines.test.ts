/** The live stdout's splitter: sdk/lines.ts's rules, and a long line cut as it streams. */
import { describe, expect, it } from "vitest"
import { LiveLineSplitter } from "./live-lines.ts"
import { boundedLines } from "./sdk/lines.ts"
import { Effect, Stream } from "effect"

const encoder = new TextEncoder()
const bytes = (text: string) => encoder.encode(text)

/** Feed `text` in chunks of `size` bytes; the lines, and the most the splitter held. */
const split = (
  text: string | Uint8Array,
  size: number,
  limits: ConstructorParameters<typeof LiveLineSplitter>[0],
) => {
  const all = typeof text === "string" ? bytes(text) : text
  const splitter = new LiveLineSplitter(limits)
  const lines = []
  for (let at = 0; at < all.length; at += size) lines.push(...splitter.push(all.subarray(at, at + size)))
  lines.push(...splitter.end())
  return { lines, most: splitter.mostHeldBytes }
}

const small = { maxLineBytes: 4096, longLineBytes: 256, longStringBytes: 40 }

describe("LiveLineSplitter", () => {
  it("gives what sdk/lines.ts's boundedLines gives for lines under the long-line size", async () => {
    const text = '{"a":1}\r\n{"b":"x\ry"}\n\n\xff{"c":2}\n' + "z".repeat(5000) + '\n{"tail":true}'
    const raw = new Uint8Array([...bytes(text.slice(0, 20)), 0xff, ...bytes(text.slice(20))])
    const expected = await Effect.runPromise(
      Stream.runCollect(boundedLines(Stream.make(raw.subarray(0, 7), raw.subarray(7)), 4096)),
    )
    for (const size of [1, 3, 7, 64, raw.length])
      expect(split(raw, size, { maxLineBytes: 4096, longLineBytes: 1 << 20 }).lines).toEqual([...expected])
  })

  it("cuts a line past the long-line size as it streams: valid JSON, each long string's size said", () => {
    const long = "é".repeat(300) // 600 bytes
    const line = JSON.stringify({ type: "user", content: long, short: "kept", escaped: 'a"b\\'.repeat(50) })
    for (const size of [1, 5, 64, 10_000]) {
      const { lines, most } = split(`${line}\n{"next":1}\n`, size, small)
      expect(lines).toHaveLength(2)
      const frame = JSON.parse(lines[0]?.text ?? "") as Record<string, string>
      expect(lines[0]?.problem).toBeUndefined()
      expect(frame.short).toBe("kept")
      expect(frame.content).toBe(`${"é".repeat(20)} [… truncated: 40 of 600 bytes shown]`)
      expect(frame.escaped?.startsWith('a"b\\')).toBe(true)
      // The size counts the string as the line spells it (each escape two bytes).
      expect(frame.escaped).toMatch(/\[… truncated: \d+ of 300 bytes shown\]$/)
      expect(lines[1]?.text).toBe('{"next":1}')
      expect(most).toBeLessThanOrEqual(small.longLineBytes + size)
    }
  })

  it("skips a line whose cut form still passes the cap, counting all its bytes", () => {
    // Many short strings: cutting keeps them all.
    const line = JSON.stringify(Array.from({ length: 2000 }, (_, i) => `s${i}`))
    const { lines } = split(`${line}\n{"after":1}\n`, 100, small)
    expect(lines[0]?.problem).toEqual({ kind: "too_long", bytes: bytes(line).length, maxBytes: 4096 })
    expect(lines[0]?.text).toBe(line.slice(0, 200))
    expect(lines[1]?.text).toBe('{"after":1}')
  })

  it("with a cap at or below the long-line size, nothing is cut: past the cap a line is skipped", () => {
    const line = JSON.stringify({ content: "x".repeat(3000) })
    const { lines } = split(`${line}\n`, 500, { maxLineBytes: 1024, longLineBytes: 2048 })
    expect(lines[0]?.problem).toEqual({ kind: "too_long", bytes: line.length, maxBytes: 1024 })
  })

  it("holds a 100 MB line as its cut form only", () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x78) // "x", one buffer given again and again
    const splitter = new LiveLineSplitter({ maxLineBytes: 128 * 1024 * 1024 })
    const lines = [...splitter.push(bytes('{"type":"user","tool_use_result":{"stdout":"'))]
    const total = 100 * 1024 * 1024
    for (let sent = 0; sent < total; sent += chunk.length) lines.push(...splitter.push(chunk))
    lines.push(...splitter.push(bytes('"}}\n')))
    expect(lines).toHaveLength(1)
    const frame = JSON.parse(lines[0]?.text ?? "") as { tool_use_result: { stdout: string } }
    expect(frame.tool_use_result.stdout).toMatch(
      /^x{262144} \[… truncated: 262,144 of 104,857,600 bytes shown\]$/,
    )
    // The 4 MiB held before cutting starts, never the line.
    expect(splitter.mostHeldBytes).toBeLessThanOrEqual(4 * 1024 * 1024 + chunk.length)
  })
})

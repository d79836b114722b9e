/** boundedLines and its LineSplitter: LF-only line ends, the cap, strict UTF-8. */
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { boundedLines, LineSplitter } from "./lines.ts"

const enc = new TextEncoder()

describe("LineSplitter", () => {
  it("splits across chunks; CRLF is a line end, a lone CR stays in its line", () => {
    const s = new LineSplitter(1024)
    const out = [
      ...s.push(enc.encode('{"a":1}\r')),
      ...s.push(enc.encode('\n{"b":"x\ry"}\n{"c"')),
      ...s.push(enc.encode(":3}")),
      ...s.end(),
    ]
    expect(out).toEqual([{ text: '{"a":1}' }, { text: '{"b":"x\ry"}' }, { text: '{"c":3}' }])
  })

  it("owns what it keeps of a chunk: a Buffer reused by its producer changes no line", () => {
    // Buffer's `slice` is a view: a splitter that kept `slice()`s read the next chunk's bytes back.
    const s = new LineSplitter(1024)
    const lent = Buffer.alloc(8)
    const text = '{"a":"spans"}\n{"b":2}\n'
    const out = []
    for (let at = 0; at < text.length; at += 8) {
      const n = lent.write(text.slice(at, at + 8))
      out.push(...s.push(lent.subarray(0, n)))
      lent.fill(0x7a)
    }
    expect(out).toEqual([{ text: '{"a":"spans"}' }, { text: '{"b":2}' }])
  })

  it("a 700 MB line with no newline holds no more than the cap, then reads on after its newline", () => {
    const cap = 1024 * 1024
    const s = new LineSplitter(cap)
    const chunk = new Uint8Array(1024 * 1024).fill(0x61)
    let held = 0
    for (let i = 0; i < 700; i++) {
      expect(s.push(chunk)).toEqual([])
      held = Math.max(held, s.heldBytes)
    }
    expect(held).toBeLessThanOrEqual(cap)
    const out = s.push(enc.encode('aaa\n{"next":1}\n'))
    expect(out).toHaveLength(2)
    expect(out[0]?.problem).toEqual({ kind: "too_long", bytes: 700 * 1024 * 1024 + 3, maxBytes: cap })
    expect(out[0]?.text).toBe("a".repeat(200))
    expect(out[1]).toEqual({ text: '{"next":1}' })
  })

  it("a line over the cap that ends the stream still arrives as one too-long line", () => {
    const s = new LineSplitter(10)
    expect(s.push(enc.encode("0123456789abc"))).toEqual([])
    expect(s.end()).toEqual([
      { text: "0123456789abc", problem: { kind: "too_long", bytes: 13, maxBytes: 10 } },
    ])
  })

  it("invalid UTF-8 is read with U+FFFD and marked; a character split across chunks is not", () => {
    const s = new LineSplitter(1024)
    const euro = enc.encode("€")
    const out = [
      ...s.push(new Uint8Array([0x61, 0xff, 0x0a, euro[0] as number])),
      ...s.push(new Uint8Array([euro[1] as number, euro[2] as number, 0x0a])),
    ]
    expect(out).toEqual([{ text: "a\uFFFD", problem: { kind: "invalid_utf8" } }, { text: "€" }])
  })

  it("boundedLines runs the splitter over a stream", async () => {
    const chunks = ['{"a":', '1}\n{"b"', ":2}\r\n\n", '{"c":3}'].map((s) => enc.encode(s))
    const out = await Effect.runPromise(Stream.runCollect(boundedLines(Stream.fromIterable(chunks), 100)))
    expect([...out].map((l) => l.text)).toEqual(['{"a":1}', '{"b":2}', "", '{"c":3}'])
  })
})

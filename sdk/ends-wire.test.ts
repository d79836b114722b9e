/**
 * The byte layout of `readEnds` across the channel (sdk/ends-wire.ts): every
 * record comes back whatever the pieces the pipe cuts the stream into, a
 * record inside one piece is visited without a copy, and what a host sends
 * is never trusted past what the call asked for.
 */
import { describe, expect, it } from "vitest"
import { ENDS_HEADER_BYTES, endsRecordBytes, makeEndsReader, writeEndsRecord } from "./ends-wire.ts"
import type { FileEnds } from "./plugin-api.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const text = (b: Uint8Array) => new TextDecoder().decode(b)

const files: Array<FileEnds | null> = [
  {
    head: bytes("head-0"),
    tail: bytes("tail-0!"),
    size: 1_000_000,
    mtimeMs: 1733000000123.25,
    birthtimeMs: 17,
  },
  null,
  { head: bytes(""), tail: bytes(""), size: 0, mtimeMs: 1.5, birthtimeMs: 0 },
  { head: bytes("é".repeat(8)), tail: bytes("z".repeat(16)), size: 99, mtimeMs: 2, birthtimeMs: 3 },
  { head: bytes("whole"), tail: bytes("whole"), size: 5, mtimeMs: Number.NaN, birthtimeMs: 4 },
]

/** The records of `files`, indexes 10, 11, … */
const stream = (): Uint8Array => {
  const out = new Uint8Array(files.length * endsRecordBytes(16, 16))
  let at = 0
  files.forEach((f, i) => {
    at = writeEndsRecord(out, at, 10 + i, f)
  })
  return out.subarray(0, at)
}

const seenOf = (pieces: ReadonlyArray<Uint8Array>) => {
  const seen: Array<[number, unknown]> = []
  const reader = makeEndsReader(16, 16, (index, ends) =>
    seen.push([
      index,
      ends && {
        head: text(ends.head),
        tail: text(ends.tail),
        size: ends.size,
        m: ends.mtimeMs,
        b: ends.birthtimeMs,
      },
    ]),
  )
  for (const piece of pieces) reader.push(piece)
  reader.end()
  return seen
}

const expected = files.map((f, i) => [
  10 + i,
  f && { head: text(f.head), tail: text(f.tail), size: f.size, m: f.mtimeMs, b: f.birthtimeMs },
])

describe("readEnds records on the byte lane", () => {
  it("gives every record back, in order, whatever size the pieces are cut to", () => {
    const all = stream()
    for (let size = 1; size <= all.byteLength; size++) {
      const pieces: Uint8Array[] = []
      for (let at = 0; at < all.byteLength; at += size) pieces.push(all.slice(at, at + size))
      expect(seenOf(pieces), `pieces of ${size} bytes`).toEqual(expected)
    }
  })

  it("visits a record that lies inside one piece as views of it, and one split across pieces from its own copy", () => {
    const all = stream()
    const views: boolean[] = []
    const reader = makeEndsReader(16, 16, (_, ends) => {
      if (ends) views.push(ends.head.buffer === all.buffer)
    })
    // The first record whole in the first piece, the rest cut in the fourth's header.
    const cut = endsRecordBytes(0, 0) + 6 + 7 + ENDS_HEADER_BYTES * 2 + 10
    reader.push(all.subarray(0, cut))
    reader.push(all.subarray(cut))
    reader.end()
    expect(views).toEqual([true, true, false, true])
  })

  it("refuses a record longer than the call asked for, and a stream that ends inside a record", () => {
    const all = stream()
    expect(() => makeEndsReader(4, 16, () => {}).push(all)).toThrow(/past the 4 \+ 16 asked/)
    const reader = makeEndsReader(16, 16, () => {})
    reader.push(all.subarray(0, all.byteLength - 3))
    expect(() => reader.end()).toThrow(/ended inside a record/)
  })
})

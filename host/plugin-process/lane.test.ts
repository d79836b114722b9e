/**
 * The byte lane's framing (lane.ts) on its own: frames of several streams
 * come out whole and in order however the reads cut them, inside a header
 * or a payload, one byte at a time or all at once; pieces are views of the
 * read, never copies; an empty frame says nothing.
 */
import { describe, expect, it } from "vitest"
import { frameHeader, HEADER_BYTES, makeLaneReader } from "./lane.ts"

const frames: Array<[number, Uint8Array]> = [
  [1, Uint8Array.from({ length: 300 }, (_, i) => i % 251)],
  [7, Uint8Array.from([9, 8, 7])],
  [1, new Uint8Array(0)],
  [0xfffffffe, Uint8Array.from({ length: 70_000 }, (_, i) => (i * 31) % 256)],
  [7, Uint8Array.from([1])],
]

const wire = (): Uint8Array => {
  const parts = frames.flatMap(([sid, bytes]) => [frameHeader(sid, bytes.byteLength), bytes])
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

/** Each stream's pieces joined, as hex: what a reader of that stream would have. */
const joined = (pieces: ReadonlyArray<readonly [number, Uint8Array]>) => {
  const by = new Map<number, Uint8Array[]>()
  for (const [sid, piece] of pieces) {
    const list = by.get(sid) ?? []
    list.push(piece)
    by.set(sid, list)
  }
  return new Map([...by].map(([sid, ps]) => [sid, Buffer.concat(ps).toString("hex")]))
}

const readAll = (reads: ReadonlyArray<Uint8Array>) => {
  const pieces: Array<readonly [number, Uint8Array]> = []
  const reader = makeLaneReader((sid, piece) => {
    if (piece.byteLength === 0) throw new Error("an empty piece")
    pieces.push([sid, piece])
  })
  for (const r of reads) reader.push(r)
  return { got: joined(pieces), pieces: pieces.map(([, p]) => p) }
}

const expected = () => joined(frames.filter(([, bytes]) => bytes.byteLength > 0))

describe("the byte lane's frames", () => {
  it("come out whole and in order from one read", () => {
    expect(readAll([wire()]).got).toEqual(expected())
  })

  it("come out the same wherever one cut falls (inside a header, inside a payload)", () => {
    const bytes = wire()
    // Every cut within the first frames and around each header; then a stride through the long one.
    const cuts = new Set<number>()
    for (let i = 1; i < 400; i++) cuts.add(i)
    for (let i = 400; i < bytes.byteLength; i += 997) cuts.add(i)
    for (let i = bytes.byteLength - 20; i < bytes.byteLength; i++) cuts.add(i)
    for (const cut of cuts) {
      const { got } = readAll([bytes.subarray(0, cut), bytes.subarray(cut)])
      expect(got, `cut at ${cut}`).toEqual(expected())
    }
  })

  it("come out the same one byte at a time", () => {
    const bytes = wire()
    const reads = Array.from({ length: bytes.byteLength }, (_, i) => bytes.subarray(i, i + 1))
    expect(readAll(reads).got).toEqual(expected())
  })

  it("are handed out as views of the read, not copies", () => {
    const bytes = wire()
    const { pieces } = readAll([bytes])
    expect(pieces.every((p) => p.buffer === bytes.buffer)).toBe(true)
    expect(pieces[0]?.byteOffset).toBe(HEADER_BYTES)
  })
})

/**
 * The byte lane's framing (lane.ts) on its own: frames of several streams
 * come out whole and in order however the reads cut them, inside a header
 * or a payload, one byte at a time or all at once; pieces are views of the
 * read, never copies; an empty frame says nothing. The read loop reads
 * into a buffer again only once every piece of it was lent and given back:
 * a kept piece, or one still lent, leaves its view intact.
 */
import fc from "fast-check"
import { describe, expect, it, vi } from "vitest"
import type { PieceFate } from "../../sdk/channel.ts"
import {
  frameHeader,
  HEADER_BYTES,
  LANE_BUFFER,
  LANE_IDLE_MS,
  LaneBytes,
  makeLaneReader,
  type ReadInto,
  readLane,
} from "./lane.ts"

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

  it("are searched for a byte with Node's native search (a plugin splits lines with indexOf)", () => {
    const { pieces } = readAll([wire()])
    expect(pieces.every((p) => p instanceof LaneBytes)).toBe(true)
  })
})

describe("LaneBytes", () => {
  it("finds what a Uint8Array finds, for any value and start", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 64 }),
        fc.nat({ max: 8 }),
        fc.oneof(fc.integer({ min: -3, max: 260 }), fc.double(), fc.constantFrom(10, 0, 255, 256, -1, 10.5)),
        fc.option(fc.oneof(fc.integer({ min: -80, max: 80 }), fc.double()), { nil: undefined }),
        (content, offset, value, from) => {
          const backing = new Uint8Array(offset + content.length)
          backing.set(content, offset)
          const plain = backing.subarray(offset)
          const lane = new LaneBytes(backing.buffer, offset, content.length)
          expect(lane.indexOf(value, from)).toBe(plain.indexOf(value, from))
        },
      ),
    )
  })

  it("is a Uint8Array in all else: a slice copies, and what it makes is plain", () => {
    const backing = Uint8Array.from([1, 10, 2, 10, 3])
    const lane = new LaneBytes(backing.buffer, 1, 3)
    const copy = lane.slice(0, 2)
    backing[1] = 99
    expect(Array.from(copy)).toEqual([10, 2])
    expect(lane.subarray(1).constructor).toBe(Uint8Array)
    expect(lane.map((b) => b + 1).constructor).toBe(Uint8Array)
    expect(lane.indexOf(10)).toBe(2)
    expect(new TextDecoder().decode(lane)).toBe("c\u0002\n")
  })
})

// Buffers compared by identity as booleans: a failed `toBe` of two 1 MiB buffers takes minutes to print.

/** A lane whose every read is one whole buffer's frame of stream 1, filled with the read's number. */
const fullReads = (fate: (n: number) => PieceFate) => {
  const pieces: Uint8Array[] = []
  let reads = 0
  let resume: (() => void) | null = null
  const readInto: ReadInto = (buffer, at, length, done) => {
    const n = ++reads
    const go = () => {
      buffer.set(frameHeader(1, length - HEADER_BYTES), at)
      buffer.fill(n, at + HEADER_BYTES, at + length)
      done(null, length)
    }
    // One read a step, so a test can give pieces back between reads.
    resume = go
  }
  const lane = readLane(readInto, (_sid, piece) => {
    pieces.push(piece)
    return fate(pieces.length)
  })
  const step = () => {
    const go = resume
    resume = null
    go?.()
  }
  return { lane, pieces, step }
}

describe("the lane's read loop", () => {
  it("reads into a buffer again once its lent pieces are given back: a view kept past that is overwritten", () => {
    const { lane, pieces, step } = fullReads(() => "lent")
    step()
    const first = pieces[0] as Uint8Array
    expect(first.byteLength).toBe(LANE_BUFFER - HEADER_BYTES)
    expect(first[0]).toBe(1)
    lane.release([first])
    // The read after it was already under way into a fresh buffer; the one after takes the given-back one.
    step()
    expect(pieces[1]?.buffer === first.buffer, "the same buffer").toBe(false)
    step()
    // The same memory, read into again: the lent view now shows the third read.
    expect(pieces[2]?.buffer === first.buffer, "the same buffer").toBe(true)
    expect(first[0]).toBe(3)
  })

  it("never reads into a buffer with a piece still lent, or kept", () => {
    for (const fate of ["lent", "kept"] as const) {
      const { lane, pieces, step } = fullReads(() => fate)
      step()
      step()
      const [first, second] = pieces as [Uint8Array, Uint8Array]
      expect(second.buffer === first.buffer, "the same buffer").toBe(false)
      expect(first[0]).toBe(1)
      // Giving back what was kept (or what another reader lent) changes nothing for it.
      lane.release([second])
      step()
      step()
      expect(first[0]).toBe(1)
      expect(pieces.slice(2).some((p) => p.buffer === first.buffer)).toBe(false)
      if (fate === "lent") expect(pieces[3]?.buffer === second.buffer, "the same buffer").toBe(true)
      else expect(pieces[3]?.buffer === second.buffer, "the same buffer").toBe(false)
    }
  })

  it("lets its waiting buffers go after a quiet second: the next read takes a fresh one", () => {
    vi.useFakeTimers()
    try {
      const { lane, pieces, step } = fullReads(() => "lent")
      step()
      const first = pieces[0] as Uint8Array
      lane.release([first])
      // Given back and waiting, but no read for longer than LANE_IDLE_MS: let go.
      vi.advanceTimersByTime(LANE_IDLE_MS + 1)
      step()
      step()
      expect(pieces.slice(1).some((p) => p.buffer === first.buffer)).toBe(false)
      expect(first[0]).toBe(1)
    } finally {
      vi.useRealTimers()
    }
  })

  it("a dropped piece (no reader) leaves its buffer free", () => {
    const { pieces, step } = fullReads(() => "dropped")
    step()
    step()
    expect(pieces[1]?.buffer === pieces[0]?.buffer, "the same buffer").toBe(true)
  })
})

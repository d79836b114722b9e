/**
 * The return lane's framing (return-lane.ts) on its own: frames come out
 * whole and in order however the reads cut them (inside a length prefix or a
 * payload, one byte at a time, all at once); a frame within one read is a
 * view of it, one spread over reads is joined once; an empty frame is a
 * frame; a frame over the cap is dropped without being held, and the frames
 * after it still come out.
 */
import { deserialize, serialize } from "node:v8"
import { describe, expect, it } from "vitest"
import { frameLength, LENGTH_BYTES, makeReturnReader } from "./return-lane.ts"

const payloads: Uint8Array[] = [
  Uint8Array.from({ length: 300 }, (_, i) => i % 251),
  new Uint8Array(0),
  Uint8Array.from({ length: 200_000 }, (_, i) => (i * 31) % 256),
  Uint8Array.from([7]),
]

const wireOf = (frames: ReadonlyArray<Uint8Array>): Uint8Array =>
  Buffer.concat(frames.flatMap((p) => [frameLength(p.byteLength), p]))

const readAll = (reads: ReadonlyArray<Uint8Array>, maxFrameBytes?: number) => {
  const frames: Uint8Array[] = []
  const oversized: number[] = []
  const reader = makeReturnReader({
    frame: (bytes) => frames.push(bytes),
    oversized: (length) => oversized.push(length),
    ...(maxFrameBytes !== undefined && { maxFrameBytes }),
  })
  for (const read of reads) reader.push(read)
  return { frames, oversized }
}

const hex = (xs: ReadonlyArray<Uint8Array>) => xs.map((x) => Buffer.from(x).toString("hex"))

const cut = (bytes: Uint8Array, size: number): Uint8Array[] => {
  const out: Uint8Array[] = []
  for (let at = 0; at < bytes.byteLength; at += size) out.push(bytes.subarray(at, at + size))
  return out
}

describe("the return lane's frames", () => {
  const wire = wireOf(payloads)

  it.each([1, 3, LENGTH_BYTES, 5, 4096, 65_536, wire.byteLength])(
    "come out whole and in order from reads of %i bytes",
    (size) => {
      expect(hex(readAll(cut(wire, size)).frames)).toEqual(hex(payloads))
    },
  )

  it("hands out a frame that one read holds as a view of that read", () => {
    const { frames } = readAll([wire])
    expect(frames[0]?.buffer).toBe(wire.buffer)
  })

  it("joins a frame over many reads into one copy of its own", () => {
    const { frames } = readAll(cut(wire, 1000))
    const big = frames[2] as Uint8Array
    expect(big.byteLength).toBe(200_000)
    expect(big.byteOffset).toBe(0)
    expect(big.buffer.byteLength).toBe(200_000)
  })

  it("drops a frame over the cap without holding it, and keeps step", () => {
    const { frames, oversized } = readAll(cut(wire, 777), 100_000)
    expect(oversized).toEqual([200_000])
    expect(hex(frames)).toEqual(hex([payloads[0]!, payloads[1]!, payloads[3]!]))
  })

  it("carries a serialized batch larger than a pipe's buffer back intact", () => {
    const batch = [
      {
        t: "res",
        id: 1,
        value: { items: Array.from({ length: 2000 }, (_, i) => `item ${i} ${"é".repeat(200)}`) },
      },
    ]
    const payload = serialize(batch)
    expect(payload.byteLength).toBeGreaterThan(256 * 1024)
    const { frames } = readAll(cut(wireOf([payload]), 65_536))
    expect(deserialize(frames[0] as Uint8Array)).toEqual(batch)
  })
})

/**
 * The channel on its own, two peers joined by an in-memory pair of ports
 * (messages structured-cloned, as over IPC): credit holds a producer to the
 * reader's pace, small byte chunks cross as one, errors keep their tag and
 * fields, and closing fails whatever is pending. A byte stream on a lane
 * (b to a only, slower than the messages, as a pipe beside IPC may be):
 * every byte arrives before its end, under the same credit; a reader that
 * lends gives its pieces back at its next pull or its cancel, and only then.
 */
import { describe, expect, it } from "vitest"
import {
  ChannelError,
  CREDIT_STEP,
  type Message,
  makePeer,
  type PieceFate,
  type Port,
  STREAM_WINDOW,
} from "./channel.ts"

const pair = () => {
  const posted = { a: 0, b: 0 }
  const credits = { a: 0, b: 0 }
  const listeners: { a?: (b: ReadonlyArray<Message>) => void; b?: (b: ReadonlyArray<Message>) => void } = {}
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    post: (batch) => {
      posted[self]++
      credits[self] += batch.filter((m) => m.t === "credit").length
      const copy = structuredClone(batch)
      setImmediate(() => listeners[other]?.(copy))
    },
    listen: (receive) => {
      listeners[self] = receive
    },
    later: (flush) => void setImmediate(flush),
  })
  return { a: makePeer(port("a", "b")), b: makePeer(port("b", "a")), posted, credits }
}

/** Peers whose byte lane (b to a) delivers `laneDelayMs` after the message that follows it. */
const lanePair = (laneDelayMs: number) => {
  const listeners: { a?: (b: ReadonlyArray<Message>) => void; b?: (b: ReadonlyArray<Message>) => void } = {}
  let hearBytes: ((sid: number, piece: Uint8Array) => PieceFate) | undefined
  const laneSent = { bytes: 0, pieces: 0 }
  /** What the reader said of each piece, and the pieces it gave back, in order. */
  const fates: PieceFate[] = []
  const released: Uint8Array[] = []
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    post: (batch) => {
      const copy = structuredClone(batch)
      setImmediate(() => listeners[other]?.(copy))
    },
    listen: (receive) => {
      listeners[self] = receive
    },
    later: (flush) => void setImmediate(flush),
    ...(self === "b" && {
      sendBytes: (sid: number, chunk: Uint8Array) => {
        laneSent.bytes += chunk.byteLength
        laneSent.pieces++
        // Cut in two, as reads of a pipe may: the reader must take pieces.
        const half = chunk.byteLength >> 1
        const pieces = half > 0 ? [chunk.slice(0, half), chunk.slice(half)] : [chunk.slice()]
        setTimeout(() => {
          for (const p of pieces) if (hearBytes) fates.push(hearBytes(sid, p))
        }, laneDelayMs)
      },
    }),
    ...(self === "a" && {
      listenBytes: (hear: (sid: number, piece: Uint8Array) => PieceFate) => (hearBytes = hear),
      releaseBytes: (pieces: ReadonlyArray<Uint8Array>) => void released.push(...pieces),
    }),
  })
  return { a: makePeer(port("a", "b")), b: makePeer(port("b", "a")), laneSent, fates, released }
}

const readBytes = async (reader: AsyncIterable<unknown>): Promise<Uint8Array> => {
  const parts: Uint8Array[] = []
  for await (const batch of reader) for (const item of batch as Uint8Array[]) parts.push(item)
  return Uint8Array.from(parts.flatMap((p) => [...p]))
}

const tick = () => new Promise((r) => setTimeout(r, 10))

describe("the channel", () => {
  it("answers requests, and a failure keeps its tag and plain fields", async () => {
    const { a, b } = pair()
    b.handle("add", (args) => (args as number[]).reduce((x, y) => x + y, 0))
    b.handle("refuse", () => {
      throw { _tag: "NotGranted", message: "no", capability: "process", detail: "rm" }
    })
    expect(await a.request("add", [1, 2, 3])).toBe(6)
    const error = await a.request("refuse").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ChannelError)
    expect((error as ChannelError).wire).toEqual({
      _tag: "NotGranted",
      message: "no",
      fields: { capability: "process", detail: "rm" },
    })
    await expect(a.request("nothing")).rejects.toThrow(/no operation nothing/)
  })

  it("holds a producer to the reader's credit: no more than the window ahead", async () => {
    const { a, b } = pair()
    let emitted = 0
    const chunk = new Uint8Array(64 * 1024)
    b.serve("bytes", async (_args, sink) => {
      for (let i = 0; i < 100 && !sink.signal.aborted; i++) {
        await sink.emit([chunk])
        emitted += chunk.byteLength
      }
    })
    const reader = a.open("bytes")
    const it = reader[Symbol.asyncIterator]()
    const first = await it.next()
    let read = 0
    for (const item of first.value as Uint8Array[]) read += item.byteLength
    await tick()
    await tick()
    // The reader took one batch: the producer stopped within a window of what was read.
    expect(read).toBeGreaterThan(0)
    expect(emitted).toBeLessThanOrEqual(read + STREAM_WINDOW + chunk.byteLength)
    expect(emitted).toBeLessThan(100 * chunk.byteLength)
    for (;;) {
      const next = await it.next()
      if (next.done) break
      for (const item of next.value as Uint8Array[]) read += item.byteLength
    }
    expect(emitted).toBe(100 * chunk.byteLength)
    expect(read).toBe(100 * chunk.byteLength)
  })

  it("grants credit back in steps of a quarter window, not per batch, and never stalls the producer", async () => {
    const { a, b, credits } = pair()
    const chunk = new Uint8Array(16 * 1024)
    const chunks = (8 * STREAM_WINDOW) / chunk.byteLength
    b.serve("bytes", async (_args, sink) => {
      // One chunk per flush: each crosses as a batch of its own.
      for (let i = 0; i < chunks; i++) {
        await sink.emit([chunk])
        await new Promise((r) => setImmediate(r))
      }
    })
    let batches = 0
    let read = 0
    for await (const batch of a.open("bytes")) {
      batches++
      for (const item of batch as Uint8Array[]) read += item.byteLength
    }
    expect(read).toBe(8 * STREAM_WINDOW)
    // Batches are each well under a step: one credit per batch would be many more.
    expect(batches).toBeGreaterThan(64)
    expect(credits.a).toBeLessThanOrEqual((8 * STREAM_WINDOW) / CREDIT_STEP)
  })

  it("sends small chunks of one flush as one array, in order", async () => {
    const { a, b, posted } = pair()
    b.serve("small", async (_args, sink) => {
      for (let i = 0; i < 200; i++) void sink.emit([new Uint8Array([i % 256])])
    })
    const batches: unknown[][] = []
    for await (const batch of a.open("small")) batches.push(batch as unknown[])
    const items = batches.flat() as Uint8Array[]
    expect(items.length).toBeLessThan(5)
    expect(Array.from(items.flatMap((i) => [...i]))).toEqual(Array.from({ length: 200 }, (_, i) => i % 256))
    expect(posted.b).toBeLessThan(5)
  })

  it("a reader that stops closes the stream at the producer", async () => {
    const { a, b } = pair()
    let aborted = false
    b.serve("endless", async (_args, sink) => {
      sink.signal.addEventListener("abort", () => (aborted = true))
      while (!sink.signal.aborted) await sink.emit([new Uint8Array(STREAM_WINDOW)])
    })
    for await (const _ of a.open("endless")) break
    await tick()
    expect(aborted).toBe(true)
  })

  it("close fails every pending request and ends every stream with the reason", async () => {
    const { a, b } = pair()
    b.handle("never", () => new Promise(() => {}))
    b.serve("never", () => new Promise(() => {}))
    const pending = a.request("never")
    const reading = (async () => {
      for await (const _ of a.open("never")) {
      }
    })()
    await tick()
    a.close({ _tag: "PluginProcessExited", message: "gone" })
    await expect(pending).rejects.toThrow("gone")
    await expect(reading).rejects.toThrow("gone")
    await expect(a.request("later")).rejects.toThrow("gone")
  })

  it("a byte stream crosses on the lane, and its end waits for its last bytes", async () => {
    const { a, b, laneSent } = lanePair(30)
    b.serve(
      "bytes",
      async (_args, sink) => {
        for (let i = 0; i < 50; i++)
          await sink.emit([Uint8Array.from({ length: 1000 }, (_, j) => (i + j) % 256)])
      },
      { bytes: true },
    )
    const got = await readBytes(a.open("bytes"))
    expect(got.byteLength).toBe(50_000)
    expect(got[999]).toBe(999 % 256)
    expect(got[49_999]).toBe((49 + 999) % 256)
    expect(laneSent.bytes).toBe(50_000)
  })

  it("an error ending a lane stream still comes after its bytes", async () => {
    const { a, b } = lanePair(30)
    b.serve(
      "fails",
      async (_args, sink) => {
        await sink.emit([new Uint8Array(10)])
        throw { _tag: "BrokerFailure", message: "went away" }
      },
      { bytes: true },
    )
    const seen: number[] = []
    const reading = (async () => {
      for await (const batch of a.open("fails"))
        for (const item of batch as Uint8Array[]) seen.push(item.byteLength)
    })()
    await expect(reading).rejects.toThrow("went away")
    expect(seen.reduce((x, y) => x + y, 0)).toBe(10)
  })

  it("holds a lane producer to the reader's credit", async () => {
    const { a, b, laneSent } = lanePair(1)
    const chunk = new Uint8Array(64 * 1024)
    b.serve(
      "bytes",
      async (_args, sink) => {
        for (let i = 0; i < 100 && !sink.signal.aborted; i++) await sink.emit([chunk])
      },
      { bytes: true },
    )
    const it = a.open("bytes")[Symbol.asyncIterator]()
    const first = await it.next()
    let read = 0
    for (const item of first.value as Uint8Array[]) read += item.byteLength
    for (let i = 0; i < 5; i++) await tick()
    expect(laneSent.bytes).toBeLessThanOrEqual(read + STREAM_WINDOW + chunk.byteLength)
    for (;;) {
      const next = await it.next()
      if (next.done) break
      for (const item of next.value as Uint8Array[]) read += item.byteLength
    }
    expect(read).toBe(100 * chunk.byteLength)
  })

  it("a lent reader gives each batch back at its next pull, and the rest at its cancel; others keep theirs", async () => {
    const serveChunks = (peer: ReturnType<typeof lanePair>["b"]) =>
      peer.serve(
        "bytes",
        async (_args, sink) => {
          for (let i = 0; i < 20 && !sink.signal.aborted; i++) await sink.emit([new Uint8Array(1000).fill(i)])
        },
        { bytes: true },
      )
    const kept = lanePair(1)
    serveChunks(kept.b)
    expect((await readBytes(kept.a.open("bytes"))).byteLength).toBe(20_000)
    expect(kept.fates.length).toBe(40)
    expect(kept.fates.every((f) => f === "kept")).toBe(true)
    expect(kept.released).toEqual([])

    const lent = lanePair(1)
    serveChunks(lent.b)
    const it = lent.a.open("bytes", undefined, { lend: true })[Symbol.asyncIterator]()
    const first = (await it.next()).value as Uint8Array[]
    expect(lent.released).toEqual([])
    const second = (await it.next()).value as Uint8Array[]
    // Given back when the next was pulled: the same pieces, not copies.
    expect(lent.released).toEqual(first)
    expect(lent.released.every((p, i) => p === first[i])).toBe(true)
    for (let i = 0; i < 5; i++) await tick()
    await it.return?.()
    // The cancel gives back the batch in hand and every queued one.
    expect(lent.released.slice(first.length, first.length + second.length)).toEqual(second)
    const heard = lent.fates.filter((f) => f === "lent").length
    expect(lent.released.length).toBe(heard)
    expect(lent.fates.every((f) => f !== "kept")).toBe(true)
  })

  it("a byte stream that emits something else fails, and says so", async () => {
    const { a, b } = lanePair(1)
    b.serve("bad", async (_args, sink) => sink.emit(["text"]), { bytes: true })
    await expect(readBytes(a.open("bad"))).rejects.toThrow(/non-byte item/)
  })
})

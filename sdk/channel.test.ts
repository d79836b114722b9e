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

type Listeners = { a?: (b: ReadonlyArray<Message>) => void; b?: (b: ReadonlyArray<Message>) => void }

/** One side's port of an in-memory pair: each batch structured-cloned (as over IPC), heard a turn later; `sent` sees it first. */
const memoryPort = (
  listeners: Listeners,
  self: "a" | "b",
  other: "a" | "b",
  sent?: (batch: ReadonlyArray<Message>) => void,
): Port => ({
  post: (batch) => {
    sent?.(batch)
    const copy = structuredClone(batch)
    setImmediate(() => listeners[other]?.(copy))
  },
  listen: (receive) => {
    listeners[self] = receive
  },
  later: (flush) => void setImmediate(flush),
})

const pair = () => {
  const posted = { a: 0, b: 0 }
  const credits = { a: 0, b: 0 }
  const listeners: Listeners = {}
  const port = (self: "a" | "b", other: "a" | "b"): Port =>
    memoryPort(listeners, self, other, (batch) => {
      posted[self]++
      credits[self] += batch.filter((m) => m.t === "credit").length
    })
  return { a: makePeer(port("a", "b")), b: makePeer(port("b", "a")), posted, credits }
}

/** Peers whose byte lane (b to a) delivers `laneDelayMs` after the message that follows it. */
const lanePair = (laneDelayMs: number) => {
  const listeners: Listeners = {}
  let hearBytes: ((sid: number, piece: Uint8Array) => PieceFate) | undefined
  const laneSent = { bytes: 0, pieces: 0 }
  /** What the reader said of each piece, and the pieces it gave back, in order. */
  const fates: PieceFate[] = []
  const released: Uint8Array[] = []
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    ...memoryPort(listeners, self, other),
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

/**
 * Peers whose b side can say when a batch is written: b's writes resolve
 * only when the test lets them (`written`), so the test sees how many of an
 * answer's parts are out at once.
 */
/** The part size the tests use: an answer's array crosses in parts past four of them. */
const PART = 2000

const writtenPair = (auto = false) => {
  const listeners: Listeners = {}
  const batches: Message[][] = []
  const waiting: Array<() => void> = []
  let failNext: unknown
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    ...memoryPort(listeners, self, other, (batch) => {
      if (self === "b") batches.push([...batch])
    }),
    ...(self === "b" && {
      postWhenWritten: (batch: ReadonlyArray<Message>) =>
        new Promise<void>((resolve, reject) => {
          if (failNext !== undefined) return reject(failNext)
          batches.push([...batch])
          const copy = structuredClone(batch)
          setImmediate(() => listeners.a?.(copy))
          if (auto) setImmediate(resolve)
          else waiting.push(resolve)
        }),
    }),
  })
  return {
    a: makePeer(port("a", "b"), { partBytes: PART }),
    b: makePeer(port("b", "a"), { partBytes: PART }),
    batches,
    /** Writes sent and not yet let through. */
    waiting,
    failParts: (error: unknown) => {
      failNext = error
    },
    /** A batch handed to a as if b had sent it. */
    inject: (batch: Message[]) => listeners.a?.(structuredClone(batch)),
  }
}

describe("a large answer", () => {
  /** An answer whose `items` are `n` entries of ~120 bytes as JSON. */
  const history = (n: number) => ({
    title: "t",
    items: Array.from({ length: n }, (_, i) => ({ i, text: `item ${i}`.padEnd(100, ".") })),
    subagents: Array.from({ length: 10 }, (_, i) => `a${i}`),
    short: [1, 2, 3],
  })

  it("crosses in parts, one written before the next is sent, and arrives whole", async () => {
    const { a, b, batches, waiting } = writtenPair()
    const sent = history(200)
    b.handle("read", () => sent)
    let answered = false
    const answer = a.request("read").finally(() => {
      answered = true
    })
    // Each part waits for the last to be written: one out at a time.
    while (!answered) {
      await tick()
      expect(waiting.length).toBeLessThanOrEqual(1)
      waiting.shift()?.()
    }
    expect(await answer).toEqual(sent)
    const partBatches = batches.filter((batch) => batch.some((m) => m.t === "part"))
    expect(partBatches.every((batch) => batch.length === 1)).toBe(true)
    const sizes = partBatches.map((batch) => (batch[0] as unknown as { entries: unknown[] }).entries.length)
    // ~120 bytes an entry: about PART bytes a part.
    expect(sizes.slice(0, -1).every((n) => n * 120 <= PART * 1.2 && n * 120 >= PART * 0.8)).toBe(true)
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(200)
    const res = batches.flat().find((m) => m.t === "res")
    expect(res).toMatchObject({
      parts: ["items"],
      value: { items: [], subagents: sent.subagents, short: [1, 2, 3] },
    })
  })

  it("arrays within four parts, and ports that cannot say a batch was written, cross whole", async () => {
    const small = writtenPair(true)
    small.b.handle("read", () => history(50))
    expect(((await small.a.request("read")) as { items: unknown[] }).items).toHaveLength(50)
    expect(small.batches.flat().filter((m) => m.t === "part")).toHaveLength(0)

    const { a, b, posted } = pair()
    b.handle("read", () => history(5000))
    expect(((await a.request("read")) as { items: unknown[] }).items).toHaveLength(5000)
    expect(posted.b).toBe(1)
  })

  it("a part that cannot be written fails its call with that error; the call after it is answered", async () => {
    const { a, b, failParts, waiting } = writtenPair()
    b.handle("read", () => history(200))
    b.handle("ping", () => "pong")
    failParts({ _tag: "Unserializable", message: "a part the channel cannot carry" })
    const error = await a.request("read").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ChannelError)
    expect((error as ChannelError).wire._tag).toBe("Unserializable")
    expect(waiting).toHaveLength(0)
    expect(await a.request("ping")).toBe("pong")
  })

  it("parts for no waiting call, or naming what the answer has no array under, change nothing", async () => {
    const { a, b, inject } = writtenPair(true)
    // The answer is forged below: b never answers on its own.
    b.handle("read", () => new Promise(() => {}))
    const answer = a.request("read")
    await tick()
    inject([
      { t: "part", id: 99, key: "items", entries: [7] },
      { t: "part", id: 1, key: "items", entries: [1, 2] },
      { t: "part", id: 1, key: "n", entries: [9] },
      { t: "part", id: 1, key: "__proto__", entries: [9] },
      { t: "part", id: 1, key: "items", entries: [3] },
      { t: "res", id: 1, value: { items: [], n: 2 }, parts: ["items", "n", "__proto__"] },
    ])
    const value = (await answer) as Record<string, unknown>
    expect(value).toEqual({ items: [1, 2, 3], n: 2 })
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype)
  })
})

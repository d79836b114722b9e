/**
 * The channel on its own, two peers joined by an in-memory pair of ports
 * (messages structured-cloned, as over IPC): credit holds a producer to the
 * reader's pace, small byte chunks cross as one, errors keep their tag and
 * fields, and closing fails whatever is pending.
 */
import { describe, expect, it } from "vitest"
import { ChannelError, type Message, makePeer, type Port, STREAM_WINDOW } from "./channel.ts"

const pair = () => {
  const posted = { a: 0, b: 0 }
  const listeners: { a?: (b: ReadonlyArray<Message>) => void; b?: (b: ReadonlyArray<Message>) => void } = {}
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    post: (batch) => {
      posted[self]++
      const copy = structuredClone(batch)
      setImmediate(() => listeners[other]?.(copy))
    },
    listen: (receive) => {
      listeners[self] = receive
    },
    later: (flush) => void setImmediate(flush),
  })
  return { a: makePeer(port("a", "b")), b: makePeer(port("b", "a")), posted }
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
})

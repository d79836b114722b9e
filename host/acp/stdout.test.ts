/**
 * The batched stdio of the ACP agent (stdout.ts) over a recording sink: one
 * write per turn, order and message boundaries kept, backpressure, and the
 * SDK's own refusal of a bad line still answered.
 */
import { PassThrough, Readable } from "node:stream"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { describe, expect, it } from "vitest"
import { batchedStdio, type LineSink } from "./stdout.ts"

const recordingSink = (accept: () => boolean = () => true) => {
  const writes: string[] = []
  let drain: (() => void) | undefined
  const sink: LineSink = {
    write: (text) => {
      writes.push(text)
      return accept()
    },
    once: (_event, listener) => {
      drain = listener
    },
  }
  return { sink, writes, drain: () => drain?.() }
}

const message = (n: number): acp.AnyMessage => ({
  jsonrpc: "2.0",
  method: "session/update",
  params: { sessionId: "s", update: { n } },
})
const turn = () => new Promise((r) => setImmediate(r))
const input = () => Readable.toWeb(new PassThrough()) as ReadableStream<Uint8Array>

describe("batchedStdio", () => {
  it("writes every message of one turn in one write, in order, one line each", async () => {
    const { sink, writes } = recordingSink()
    const { stream } = batchedStdio(sink, input())
    const writer = stream.writable.getWriter()
    for (let n = 0; n < 100; n++) void writer.write(message(n))
    await writer.ready
    await turn()
    await turn()
    expect(writes).toHaveLength(1)
    const lines = writes[0]!.trimEnd().split("\n")
    expect(
      lines.map((l) => (JSON.parse(l) as { params: { update: { n: number } } }).params.update.n),
    ).toEqual([...Array(100).keys()])
  })

  it("writes at once when the batch reaches its high water, without waiting for the turn", async () => {
    const { sink, writes } = recordingSink()
    const { stream } = batchedStdio(sink, input(), 200)
    const writer = stream.writable.getWriter()
    for (let n = 0; n < 10; n++) await writer.write(message(n))
    expect(writes.length).toBeGreaterThan(0)
    expect(writes.every((w) => w.endsWith("\n"))).toBe(true)
  })

  it("holds writes while the sink has not drained, and goes on when it does", async () => {
    let full = true
    const { sink, writes, drain } = recordingSink(() => !full)
    const { stream } = batchedStdio(sink, input(), 10)
    const writer = stream.writable.getWriter()
    void writer.write(message(1))
    await turn()
    expect(writes).toHaveLength(1)
    let second = false
    const pending = writer.write(message(2)).then(() => (second = true))
    await turn()
    expect(second).toBe(false)
    expect(writes).toHaveLength(1)
    full = false
    drain()
    await pending
    expect(second).toBe(true)
    expect(writes.join("")).toContain('"n":2')
  })

  it("makes the next batch while the sink still holds one, and waits once it holds more than in flight", async () => {
    // A pipe's stream: every write over its own high water returns false; it counts what waits.
    const writes: string[] = []
    let drain: (() => void) | undefined
    const sink = {
      writableLength: 0,
      write(text: string) {
        writes.push(text)
        this.writableLength += text.length
        return false
      },
      once(_event: "drain", listener: () => void) {
        drain = listener
      },
    }
    const batch = JSON.stringify(message(0)).length + 1
    const { stream } = batchedStdio(sink, input(), batch, 3 * batch)
    const writer = stream.writable.getWriter()
    await writer.write(message(1))
    await writer.write(message(2))
    // Two batches wait in the sink, under in flight: the writer did not wait.
    expect(writes).toHaveLength(2)
    let third = false
    void writer.write(message(3)).then(() => (third = true))
    await turn()
    let fourth = false
    const pending = writer.write(message(4)).then(() => (fourth = true))
    await turn()
    expect(writes).toHaveLength(3)
    expect(fourth).toBe(false)
    sink.writableLength = 0
    drain?.()
    await pending
    expect(third && fourth).toBe(true)
  })

  it("answers a malformed line with the protocol's parse error, through the batches", async () => {
    const { sink, writes } = recordingSink()
    const raw = new PassThrough()
    const { stream } = batchedStdio(sink, Readable.toWeb(raw) as ReadableStream<Uint8Array>)
    const reader = stream.readable.getReader()
    raw.write("{not json\n")
    raw.write(`${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {} })}\n`)
    const next = await reader.read()
    expect((next.value as { method?: string }).method).toBe("initialize")
    await turn()
    expect(JSON.parse(writes.join("").trim())).toMatchObject({ id: null, error: { code: -32700 } })
  })
})

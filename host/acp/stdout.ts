/**
 * The agent's side of stdio for the ACP SDK: the client's lines read by the
 * SDK's own `ndJsonStream` (its -32700 and batch refusals kept), and the
 * agent's messages written in batches: each message is serialized once,
 * straight into a batch, and every message of one turn of the event loop
 * leaves in one `write` (a `session/load` of a long chat is thousands of
 * notifications; through the SDK's own writer each took two promise chains,
 * an encode and a write of its own).
 *
 * Rules kept:
 * - Messages leave whole and in the order the SDK wrote them.
 * - A batch leaves at the end of the current turn (setImmediate), or at
 *   once when HIGH_WATER bytes wait, so a single update is not held back.
 * - Backpressure: once more than IN_FLIGHT bytes wait in the sink (one batch
 *   being read while the next is made), writes resolve only when it drains,
 *   so a slow client slows the writer instead of filling memory, and the
 *   client reads one batch while the next is being made.
 * - `flush` writes what waits now (before the process exits).
 */
import * as acp from "@agentclientprotocol/sdk/unstable"

/** What the batches are written to: process.stdout, or a test's sink. */
export interface LineSink {
  write(text: string): boolean
  once(event: "drain", listener: () => void): unknown
  /** Bytes written and not yet taken by the other end (a stream's own count); without it every full write waits. */
  readonly writableLength?: number
}

const HIGH_WATER = 1 << 20
/** What may wait in the sink before writers wait for its drain: a batch on its way and the next. */
const IN_FLIGHT = 2 * HIGH_WATER

export interface BatchedStdio {
  /** The stream to `connect` the agent app to. */
  readonly stream: acp.Stream
  readonly flush: () => void
}

/** A writer of text in batches, over `sink`. */
const batches = (sink: LineSink, highWater: number, inFlight: number) => {
  let queued: string[] = []
  let size = 0
  let scheduled = false
  let drained: Promise<void> | undefined
  const flush = () => {
    scheduled = false
    if (queued.length === 0) return
    const batch = queued.length === 1 ? queued[0]! : queued.join("")
    queued = []
    size = 0
    if (!sink.write(batch) && (sink.writableLength ?? Number.POSITIVE_INFINITY) >= inFlight)
      drained ??= new Promise((resolve) =>
        sink.once("drain", () => {
          drained = undefined
          resolve()
        }),
      )
  }
  const push = (text: string): Promise<void> | undefined => {
    queued.push(text)
    size += text.length
    if (size >= highWater) flush()
    else if (!scheduled) {
      scheduled = true
      setImmediate(flush)
    }
    return drained
  }
  return { push, flush }
}

export const batchedStdio = (
  sink: LineSink,
  input: ReadableStream<Uint8Array>,
  highWater = HIGH_WATER,
  inFlight = IN_FLIGHT,
): BatchedStdio => {
  const out = batches(sink, highWater, inFlight)
  const decoder = new TextDecoder()
  // The SDK's reader answers a bad line itself: through this, behind what is queued.
  const refusals = new WritableStream<Uint8Array>({ write: (bytes) => out.push(decoder.decode(bytes)) })
  const { readable } = acp.ndJsonStream(refusals, input)
  const writable = new WritableStream<acp.AnyMessage>({
    write: (message) => out.push(`${JSON.stringify(message)}\n`),
    close: () => {
      out.flush()
    },
  })
  return { stream: { readable, writable }, flush: out.flush }
}

/**
 * The channel between a host and a plugin that runs in a process of its own:
 * requests answered by id, one-way notes, and streams with credit, over a
 * Port that carries plain (structured-clone) messages in batches.
 *
 * Rules it keeps:
 * - Both ends run the same code; neither trusts the other's messages beyond
 *   their envelope (a host validates what it reads, see host/plugin-process/).
 * - Streams are pulled: the consumer opens one and grants credit (a weight,
 *   bytes for byte streams); the producer sends only while credit is left,
 *   so a slow reader holds the source instead of filling memory. Credit
 *   goes back in steps of a quarter window, not a message per batch.
 * - Byte items of one stream queued in the same flush cross as one array:
 *   small chunks never cost a message or a copy each.
 * - A byte stream (served with `{ bytes: true }`) crosses on the port's byte
 *   lane where it has one (a raw pipe, no serializer): its chunks go there
 *   as they come, its end on the channel carrying how many bytes the lane
 *   took, so the reader ends it only once they have all arrived. Credit is
 *   the same for both paths.
 * - A reader that lends (`open(op, args, { lend: true })`: done with a batch
 *   before it pulls the next) gives each batch's lane pieces back to the port
 *   at its next pull, its cancel or its end (`releaseBytes`), so the lane may
 *   read into their buffer again; every other reader's pieces are its to keep.
 * - An answer with a top-level array judged larger than four parts
 *   (`PART_BYTES`, from a sample of its entries as JSON) crosses in parts
 *   where the port can say when a batch is written (`postWhenWritten`): a
 *   slice of about `PART_BYTES` at a time, the next once the last is
 *   written, then the rest of the answer, which names the arrays that came
 *   in parts. Judged by size, not count, so a list of small entries never
 *   pays for parts; neither side holds a large answer whole as one
 *   serialized message.
 * - One close path: `close` fails every pending request and ends every stream.
 * - No Node module: the plugin side of this file runs inside the sandbox.
 *
 * The parts live in channel/: types.ts (messages, port, peer), outbox.ts,
 * parts.ts, serving.ts (the producer's end), reading.ts (the consumer's end).
 */
import { makeOutbox } from "./channel/outbox.ts"
import { answerInParts, PART_BYTES, partedArrays, takePart, withParts } from "./channel/parts.ts"
import { openReader, type Reading, takeEnd, takeItems, takeLanePiece } from "./channel/reading.ts"
import { grantCredit, type Served, startServing, stopServing } from "./channel/serving.ts"
import {
  ChannelError,
  type Message,
  type NoteHandler,
  type Peer,
  type PeerOptions,
  type Port,
  type RequestHandler,
  type StreamHandler,
  toWireError,
  type WireError,
} from "./channel/types.ts"

export { PART_BYTES } from "./channel/parts.ts"
export * from "./channel/types.ts"

export const makePeer = (port: Port, { partBytes = PART_BYTES }: PeerOptions = {}): Peer => {
  let nextId = 0
  let closedWith: WireError | null = null
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>()
  /** The parts of answers still coming, by request id, then by key. */
  const parts = new Map<number, Map<string, unknown[]>>()
  const handlers = new Map<string, RequestHandler>()
  const noteHandlers = new Map<string, NoteHandler>()
  const streamHandlers = new Map<string, StreamHandler>()
  const byteStreams = new Set<string>()
  const served = new Map<number, Served>()
  const reading = new Map<number, Reading>()

  const outbox = makeOutbox(port, () => closedWith !== null)
  const { send, flush } = outbox

  const answer = (id: number, run: () => unknown) => {
    let out: unknown
    try {
      out = run()
    } catch (error) {
      send({ t: "err", id, error: toWireError(error) })
      return
    }
    Promise.resolve(out).then(
      (value) => {
        const parted = port.postWhenWritten ? partedArrays(value, partBytes) : []
        if (parted.length === 0) send({ t: "res", id, value })
        else void answerInParts(partSender, id, value as Record<string, unknown>, parted)
      },
      (error) => send({ t: "err", id, error: toWireError(error) }),
    )
  }
  const partSender = {
    post: port.postWhenWritten as NonNullable<Port["postWhenWritten"]>,
    send,
    flush,
    closed: () => closedWith !== null,
  }
  const server = { served, send, sendBytes: port.sendBytes, lendBytes: port.lendBytes }
  const reader = {
    reading,
    send,
    releaseBytes: port.releaseBytes,
    nextId: () => ++nextId,
    closed: () => closedWith,
  }

  const receive = (message: Message) => {
    switch (message.t) {
      case "req": {
        const handler = handlers.get(message.op)
        if (!handler)
          send({
            t: "err",
            id: message.id,
            error: { _tag: "UnknownOperation", message: `no operation ${message.op}` },
          })
        else answer(message.id, () => handler(message.args))
        return
      }
      case "part":
        if (pending.has(message.id) && Array.isArray(message.entries)) takePart(parts, message)
        return
      case "res":
      case "err": {
        const got = parts.get(message.id)
        parts.delete(message.id)
        const waiter = pending.get(message.id)
        if (!waiter) return
        pending.delete(message.id)
        if (message.t === "err") waiter.reject(new ChannelError(message.error))
        else waiter.resolve(message.parts ? withParts(message.value, message.parts, got) : message.value)
        return
      }
      case "note":
        noteHandlers.get(message.op)?.(message.args)
        return
      case "open":
        startServing(
          server,
          message.sid,
          message.op,
          message.args,
          streamHandlers.get(message.op),
          byteStreams.has(message.op),
        )
        return
      case "credit":
        grantCredit(served, message)
        return
      case "close":
        stopServing(served, message.sid)
        return
      case "items":
        takeItems(reading, message)
        return
      case "end":
        takeEnd(reading, message)
        return
    }
  }

  port.listen((batch) => {
    for (const message of batch) receive(message)
  })
  port.listenBytes?.((sid, piece) => takeLanePiece(reading, sid, piece))

  return {
    request: (op, args) =>
      new Promise<unknown>((resolve, reject) => {
        if (closedWith) return reject(new ChannelError(closedWith))
        const id = ++nextId
        pending.set(id, { resolve, reject })
        send({ t: "req", id, op, args })
      }),
    note: (op, args) => send({ t: "note", op, args }),
    open: (op, args, options) => openReader(reader, op, args, options),
    handle: (op, handler) => void handlers.set(op, handler),
    onNote: (op, handler) => void noteHandlers.set(op, handler),
    serve: (op, handler, options) => {
      streamHandlers.set(op, handler)
      if (options?.bytes) byteStreams.add(op)
      else byteStreams.delete(op)
    },
    close: (reason) => {
      if (closedWith) return
      closedWith = reason
      outbox.drop()
      const waiting = [...pending.values()]
      pending.clear()
      parts.clear()
      for (const w of waiting) w.reject(new ChannelError(reason))
      for (const sid of [...served.keys()]) stopServing(served, sid)
      for (const r of reading.values()) {
        r.ended = true
        r.error = reason
        r.wake?.()
      }
      reading.clear()
    },
    closed: () => closedWith,
  }
}

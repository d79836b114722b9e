/**
 * The producer's end of a stream: the handler runs with a sink that sends
 * while credit is left and waits when it runs out; byte items go on the
 * port's byte lane where the stream may take it.
 */
import { joinBytes } from "../bytes.ts"
import {
  type Message,
  type Port,
  STREAM_WINDOW,
  type StreamHandler,
  type StreamSink,
  toWireError,
} from "./types.ts"

export interface Served {
  credit: number
  wake: (() => void) | null
  readonly abort: AbortController
}

export const weightOf = (items: ReadonlyArray<unknown>): number => {
  let w = 0
  for (const item of items) w += item instanceof Uint8Array ? item.byteLength : 1
  return w
}

/** Byte items of one batch as one array (one copy here instead of one message per chunk). */
export const coalesce = (items: unknown[]): unknown[] => {
  if (items.length < 2 || !items.every((i) => i instanceof Uint8Array)) return items
  return [joinBytes(items as Uint8Array[])]
}

/** What serving a stream needs of its peer. */
export interface Server {
  readonly served: Map<number, Served>
  readonly send: (message: Message) => void
  /** Its byte lane, for a stream served with `{ bytes: true }`. */
  readonly sendBytes: Port["sendBytes"]
  /** Its byte lane that says when a chunk is written, for `StreamSink.lend`. */
  readonly lendBytes: Port["lendBytes"]
}

/** Run `handler` (undefined: no such stream) for stream `sid`, then send its end unless it was closed. */
export const startServing = (
  server: Server,
  sid: number,
  op: string,
  args: unknown,
  handler: StreamHandler | undefined,
  bytes: boolean,
) => {
  const { served, send } = server
  if (!handler) {
    send({ t: "end", sid, error: { _tag: "UnknownOperation", message: `no stream ${op}` } })
    return
  }
  const state: Served = { credit: STREAM_WINDOW, wake: null, abort: new AbortController() }
  served.set(sid, state)
  const lane = bytes ? server.sendBytes : undefined
  let laneBytes = 0
  const spend = async (weight: number) => {
    state.credit -= weight
    while (state.credit <= 0 && !state.abort.signal.aborted)
      await new Promise<void>((resolve) => (state.wake = resolve))
  }
  const lendBytes = lane && server.lendBytes
  const sink: StreamSink = {
    signal: state.abort.signal,
    emit: async (items, weight = weightOf(items)) => {
      if (state.abort.signal.aborted || items.length === 0) return
      if (lane) {
        for (const item of items) {
          if (!(item instanceof Uint8Array))
            throw new TypeError(`${op}: a byte stream emitted a non-byte item`)
          if (item.byteLength === 0) continue
          lane(sid, item)
          laneBytes += item.byteLength
        }
      } else send({ t: "items", sid, items: [...items], weight })
      await spend(weight)
    },
    ...(lendBytes && {
      lend: async (bytes: Uint8Array, release: () => void) => {
        if (state.abort.signal.aborted || bytes.byteLength === 0) return release()
        lendBytes(sid, bytes, release)
        laneBytes += bytes.byteLength
        await spend(bytes.byteLength)
      },
    }),
  }
  Promise.resolve()
    .then(() => handler(args, sink))
    .then(
      () => undefined,
      (error: unknown) => toWireError(error),
    )
    .then((error) => {
      if (served.get(sid) !== state) return
      served.delete(sid)
      if (state.abort.signal.aborted) return
      send({ t: "end", sid, ...(error && { error }), ...(lane && { laneBytes }) })
    })
}

export const stopServing = (served: Map<number, Served>, sid: number) => {
  const state = served.get(sid)
  if (!state) return
  served.delete(sid)
  state.abort.abort()
  state.wake?.()
}

/** Credit granted back: a producer that waited goes on once it has some. */
export const grantCredit = (served: Map<number, Served>, message: Extract<Message, { t: "credit" }>) => {
  const state = served.get(message.sid)
  if (!state) return
  state.credit += message.weight
  if (state.credit > 0) {
    const wake = state.wake
    state.wake = null
    wake?.()
  }
}

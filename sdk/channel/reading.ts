/**
 * The consumer's end of a stream: batches as they come on the channel or
 * the byte lane, taken one per pull, credit granted back a step at a time,
 * and the end held back until the lane has brought every byte it counts.
 */
import {
  ChannelError,
  CREDIT_STEP,
  type Message,
  type OpenOptions,
  type PieceFate,
  type Port,
  type StreamReader,
  type WireError,
} from "./types.ts"

export interface Reading {
  /** Its lane pieces are given back to the port once taken and done with. */
  readonly lent: boolean
  readonly batches: unknown[][]
  /** Each batch's weight, granted back when the reader takes the batch. */
  readonly weights: number[]
  wake: (() => void) | null
  ended: boolean
  error: WireError | null
  /** Bytes the lane brought so far. */
  laneBytes: number
  /** An end that came on the channel before the lane's last bytes. */
  endAt: { readonly laneBytes: number; readonly error: WireError | null } | null
}

export const finish = (r: Reading, error: WireError | null) => {
  r.ended = true
  r.error = error
  r.wake?.()
}

/** A batch that came on the channel. */
export const takeItems = (reading: Map<number, Reading>, message: Extract<Message, { t: "items" }>) => {
  const r = reading.get(message.sid)
  if (!r) return
  r.batches.push(message.items)
  r.weights.push(message.weight)
  r.wake?.()
}

/** The stream's end: now, or once the lane has brought the bytes it counts. */
export const takeEnd = (reading: Map<number, Reading>, message: Extract<Message, { t: "end" }>) => {
  const r = reading.get(message.sid)
  if (!r) return
  const error = message.error ?? null
  if (message.laneBytes !== undefined && r.laneBytes < message.laneBytes)
    r.endAt = { laneBytes: message.laneBytes, error }
  else finish(r, error)
}

/** A piece that came on the byte lane: what the reader does with it. */
export const takeLanePiece = (reading: Map<number, Reading>, sid: number, piece: Uint8Array): PieceFate => {
  const r = reading.get(sid)
  if (!r || r.ended) return "dropped"
  // Pieces not yet taken join the last batch: one credit message per take, not per piece.
  const last = r.batches.length - 1
  if (last >= 0) {
    ;(r.batches[last] as unknown[]).push(piece)
    r.weights[last] = (r.weights[last] ?? 0) + piece.byteLength
  } else {
    r.batches.push([piece])
    r.weights.push(piece.byteLength)
  }
  r.laneBytes += piece.byteLength
  if (r.endAt !== null && r.laneBytes >= r.endAt.laneBytes) finish(r, r.endAt.error)
  else r.wake?.()
  return r.lent ? "lent" : "kept"
}

/** What opening a stream needs of its peer. */
export interface Reader {
  readonly reading: Map<number, Reading>
  readonly send: (message: Message) => void
  readonly releaseBytes: Port["releaseBytes"]
  /** The next id of a request or stream. */
  readonly nextId: () => number
  readonly closed: () => WireError | null
}

/** Open stream `op`: the request goes out at the first pull. */
export const openReader = (peer: Reader, op: string, args?: unknown, options?: OpenOptions): StreamReader => {
  const { reading, send, releaseBytes } = peer
  const sid = peer.nextId()
  const lent = options?.lend === true && releaseBytes !== undefined
  const r: Reading = {
    lent,
    batches: [],
    weights: [],
    wake: null,
    ended: false,
    error: null,
    laneBytes: 0,
    endAt: null,
  }
  let started = false
  let cancelled = false
  /** Weight taken and not yet granted back (under CREDIT_STEP). */
  let owed = 0
  /** The batch handed out last, given back at the next pull (lent readers only). */
  let handed: unknown[] | undefined
  const giveBack = () => {
    if (handed !== undefined) releaseBytes?.(handed as Uint8Array[])
    handed = undefined
  }
  const cancel = () => {
    if (lent) {
      giveBack()
      for (const batch of r.batches.splice(0)) releaseBytes?.(batch as Uint8Array[])
      r.weights.length = 0
    }
    if (cancelled) return
    cancelled = true
    if (reading.get(sid) === r) {
      reading.delete(sid)
      if (!r.ended) send({ t: "close", sid })
    }
    r.ended = true
    r.wake?.()
  }
  return {
    cancel,
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<unknown>> => {
        if (lent) giveBack()
        if (!started && !cancelled) {
          started = true
          const closedWith = peer.closed()
          if (closedWith) throw new ChannelError(closedWith)
          reading.set(sid, r)
          send({ t: "open", sid, op, args })
        }
        while (r.batches.length === 0 && !r.ended) await new Promise<void>((w) => (r.wake = w))
        r.wake = null
        const batch = r.batches.shift()
        if (batch !== undefined) {
          owed += r.weights.shift() ?? 0
          if (!r.ended && owed >= CREDIT_STEP) {
            send({ t: "credit", sid, weight: owed })
            owed = 0
          }
          if (lent) handed = batch
          return { value: batch, done: false }
        }
        reading.delete(sid)
        if (r.error && !cancelled) throw new ChannelError(r.error)
        return { value: undefined, done: true }
      },
      return: async (): Promise<IteratorResult<unknown>> => {
        cancel()
        return { value: undefined, done: true }
      },
    }),
  }
}

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
 * - An answer with a top-level array that looks larger than four parts
 *   (`PART_BYTES`, judged from a sample of its entries as JSON) crosses in
 *   parts where the port can say when a batch is written
 *   (`postWhenWritten`): each such array a slice of about `PART_BYTES` at a
 *   time, the next slice sent once the last is written, then the rest of
 *   the answer, which names the arrays that came in parts. (By count, a
 *   list's small summaries paid for parts they did not need: the isolated
 *   warm list of 10,000 sessions +20%.) Neither side then holds the whole answer
 *   serialized (a 1 GB transcript's history is ~113 MB so: the plugin
 *   process held it beside its objects, the host its pieces and their join).
 * - One close path: `close` fails every pending request and ends every stream.
 * - No Node module: the plugin side of this file runs inside the sandbox.
 */

/** An error as it crosses: its tag, its message and its own plain fields. */
export interface WireError {
  readonly _tag: string
  readonly message: string
  readonly fields?: Readonly<Record<string, unknown>>
}

export type Message =
  | { readonly t: "req"; readonly id: number; readonly op: string; readonly args: unknown }
  | {
      readonly t: "res"
      readonly id: number
      readonly value: unknown
      readonly parts?: ReadonlyArray<string>
    }
  | {
      readonly t: "part"
      readonly id: number
      readonly key: string
      readonly entries: ReadonlyArray<unknown>
    }
  | { readonly t: "err"; readonly id: number; readonly error: WireError }
  | { readonly t: "note"; readonly op: string; readonly args: unknown }
  | { readonly t: "open"; readonly sid: number; readonly op: string; readonly args: unknown }
  | { t: "items"; readonly sid: number; items: unknown[]; weight: number }
  | { readonly t: "end"; readonly sid: number; readonly error?: WireError; readonly laneBytes?: number }
  | { readonly t: "credit"; readonly sid: number; readonly weight: number }
  | { readonly t: "close"; readonly sid: number }

/** How messages travel: `post` hands one batch over, `listen` hears the other side's batches. */
export interface Port {
  readonly post: (batch: ReadonlyArray<Message>) => void
  /**
   * Hand one batch over and resolve once it is written (rejects when it
   * cannot be): where a port has it, a large answer crosses in parts, each
   * sent when the last was written.
   */
  readonly postWhenWritten?: (batch: ReadonlyArray<Message>) => Promise<void>
  readonly listen: (receive: (batch: ReadonlyArray<Message>) => void) => void
  /** Run `flush` soon, after the work already queued (a host: setImmediate). */
  readonly later: (flush: () => void) => void
  /** The producer's byte lane: write one chunk of stream `sid` (in order with the lane's other chunks). */
  readonly sendBytes?: (sid: number, chunk: Uint8Array) => void
  /**
   * As `sendBytes`, and call `written` once the chunk's bytes are out of it
   * (written, or dropped with a lane that is gone), so its buffer may be
   * filled again: a lane that can say so (StreamSink.lend).
   */
  readonly lendBytes?: (sid: number, chunk: Uint8Array, written: () => void) => void
  /**
   * The reader's byte lane: hear each piece of each stream's bytes, in the
   * order sent; `receive` says whether the piece is lent (given back through
   * `releaseBytes`), kept, or dropped.
   */
  readonly listenBytes?: (receive: (sid: number, piece: Uint8Array) => PieceFate) => void
  /** Lent pieces given back: their reader will not look at them again. */
  readonly releaseBytes?: (pieces: ReadonlyArray<Uint8Array>) => void
}

/** What a reader did with a lane piece: lent (given back later), kept for good, or dropped (no reader). */
export type PieceFate = "lent" | "kept" | "dropped"

export interface OpenOptions {
  /**
   * The reader is done with each batch before it pulls the next (it decodes
   * or copies what it keeps): the port may read into the batch's bytes again
   * after that pull (plugin-api.ts `StreamOptions.lend`).
   */
  readonly lend?: boolean
}

export interface ServeOptions {
  /** Every item is a Uint8Array: the stream may take the byte lane. */
  readonly bytes?: boolean
}

/** A request the other side refused or failed: its WireError kept. */
export class ChannelError extends Error {
  override readonly name = "ChannelError"
  constructor(readonly wire: WireError) {
    super(wire.message)
  }
}

/** About how much of an answer's array one part carries (see the rules). */
export const PART_BYTES = 4 * 1024 * 1024

/** Entries of an array sampled to judge its size, evenly spread. */
const SAMPLED = 16

/** An array's JSON size judged from a sample of its entries (an entry JSON cannot write counts as empty). */
const judgedBytes = (entries: ReadonlyArray<unknown>): number => {
  const step = Math.max(1, Math.floor(entries.length / SAMPLED))
  let bytes = 0
  let sampled = 0
  for (let i = 0; i < entries.length && sampled < SAMPLED; i += step, sampled++) {
    try {
      bytes += JSON.stringify(entries[i])?.length ?? 0
    } catch {
      // A cycle or a BigInt: the serializer will say what it makes of it.
    }
  }
  return sampled === 0 ? 0 : (bytes / sampled) * entries.length
}

/** The arrays of `value` (a plain object) that cross in parts, each with its entries a part. */
const partedArrays = (value: unknown, partBytes: number): Array<{ key: string; perPart: number }> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return []
  if (Object.getPrototypeOf(value) !== Object.prototype) return []
  const parted: Array<{ key: string; perPart: number }> = []
  for (const key of Object.keys(value)) {
    const entries = (value as Record<string, unknown>)[key]
    if (!Array.isArray(entries) || key === "__proto__" || entries.length < 2) continue
    const bytes = judgedBytes(entries)
    if (bytes <= 4 * partBytes) continue
    parted.push({ key, perPart: Math.max(1, Math.floor((partBytes * entries.length) / bytes)) })
  }
  return parted
}

/** Credit a consumer keeps open per stream: the producer's lead over the reader. */
export const STREAM_WINDOW = 1 << 20

/**
 * Credit is granted back in steps of at least this much (a quarter window):
 * one message per step rather than per batch taken. Never a deadlock: what
 * is taken and not yet granted stays under the step, so a producer that
 * waits has more than that in flight, and its arrival completes a step.
 */
export const CREDIT_STEP = STREAM_WINDOW / 4

export interface StreamSink {
  /** Send items; resolves once credit allows more. `weight` defaults to the bytes of byte items, else 1 each. */
  readonly emit: (items: ReadonlyArray<unknown>, weight?: number) => Promise<void>
  /**
   * A byte stream on a lane that says when it has written (Port.lendBytes)
   * only: send `bytes` that stay the producer's, `release` called once the
   * lane is done with them (their buffer may then be filled again; at once
   * for a stream already closed); resolves as `emit` does.
   */
  readonly lend?: (bytes: Uint8Array, release: () => void) => Promise<void>
  /** Aborted when the consumer closes the stream or the channel closes. */
  readonly signal: AbortSignal
}

export type RequestHandler = (args: unknown) => unknown
export type NoteHandler = (args: unknown) => void
export type StreamHandler = (args: unknown, sink: StreamSink) => Promise<void>

/** The consumer's end of a stream: batches of items, in order. */
export interface StreamReader extends AsyncIterable<unknown> {
  readonly cancel: () => void
}

export interface Peer {
  readonly request: (op: string, args?: unknown) => Promise<unknown>
  readonly note: (op: string, args?: unknown) => void
  readonly open: (op: string, args?: unknown, options?: OpenOptions) => StreamReader
  readonly handle: (op: string, handler: RequestHandler) => void
  readonly onNote: (op: string, handler: NoteHandler) => void
  readonly serve: (op: string, handler: StreamHandler, options?: ServeOptions) => void
  /** Fail every pending request, end every stream; later calls fail with `reason`. */
  readonly close: (reason: WireError) => void
  readonly closed: () => WireError | null
}

export const toWireError = (error: unknown): WireError => {
  if (error instanceof ChannelError) return error.wire
  if (error !== null && typeof error === "object") {
    const e = error as Record<string, unknown>
    const fields: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(e))
      if (k !== "_tag" && k !== "message" && k !== "stack" && isPlain(v)) fields[k] = v
    return {
      _tag: typeof e._tag === "string" ? e._tag : error instanceof Error ? error.name : "Error",
      message: typeof e.message === "string" ? e.message : String(error),
      ...(Object.keys(fields).length > 0 && { fields }),
    }
  }
  return { _tag: "Error", message: String(error) }
}

const isPlain = (v: unknown): boolean =>
  v === null || ["string", "number", "boolean"].includes(typeof v) || (Array.isArray(v) && v.every(isPlain))

const weightOf = (items: ReadonlyArray<unknown>): number => {
  let w = 0
  for (const item of items) w += item instanceof Uint8Array ? item.byteLength : 1
  return w
}

/** Byte items of one batch as one array (one copy here instead of one message per chunk). */
const coalesce = (items: unknown[]): unknown[] => {
  if (items.length < 2 || !items.every((i) => i instanceof Uint8Array)) return items
  const chunks = items as Uint8Array[]
  const out = new Uint8Array(weightOf(chunks))
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return [out]
}

interface Served {
  credit: number
  wake: (() => void) | null
  readonly abort: AbortController
}

interface Reading {
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

export interface PeerOptions {
  /** About how much of a large answer's array one part carries (PART_BYTES; tests make it small). */
  readonly partBytes?: number
}

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
  const sendBytes = port.sendBytes
  const lendBytes = port.lendBytes
  const releaseBytes = port.releaseBytes
  const served = new Map<number, Served>()
  const reading = new Map<number, Reading>()

  let outbox: Message[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    const batch = outbox
    outbox = []
    for (const m of batch) if (m.t === "items") m.items = coalesce(m.items)
    if (batch.length > 0 && closedWith === null) port.post(batch)
  }
  const send = (message: Message) => {
    const last = outbox[outbox.length - 1]
    if (message.t === "items" && last?.t === "items" && last.sid === message.sid) {
      last.items.push(...message.items)
      last.weight += message.weight
    } else outbox.push(message)
    if (!scheduled) {
      scheduled = true
      port.later(flush)
    }
  }

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
        else void answerInParts(id, value as Record<string, unknown>, parted)
      },
      (error) => send({ t: "err", id, error: toWireError(error) }),
    )
  }

  /** A large answer (see the rules): its long arrays a slice at a time, each once the last was written, then the rest. */
  const answerInParts = async (
    id: number,
    value: Record<string, unknown>,
    parted: ReadonlyArray<{ key: string; perPart: number }>,
  ) => {
    const post = port.postWhenWritten as NonNullable<Port["postWhenWritten"]>
    // What was queued before the answer goes before its parts.
    flush()
    try {
      for (const { key, perPart } of parted) {
        const entries = value[key] as unknown[]
        for (let at = 0; at < entries.length; at += perPart) {
          if (closedWith !== null) return
          await post([{ t: "part", id, key, entries: entries.slice(at, at + perPart) }])
        }
      }
    } catch (error) {
      send({ t: "err", id, error: toWireError(error) })
      return
    }
    const rest: Record<string, unknown> = { ...value }
    for (const { key } of parted) rest[key] = []
    send({ t: "res", id, value: rest, parts: parted.map(({ key }) => key) })
  }

  /** An answer whose arrays came in parts, put back together (only keys the answer holds an array under). */
  const withParts = (
    value: unknown,
    keys: ReadonlyArray<string>,
    got: Map<string, unknown[]> | undefined,
  ) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) return value
    const whole: Record<string, unknown> = { ...value }
    for (const key of keys)
      if (key !== "__proto__" && Array.isArray(whole[key]) && Object.hasOwn(whole, key))
        whole[key] = got?.get(key) ?? []
    return whole
  }

  const startServing = (sid: number, op: string, args: unknown) => {
    const handler = streamHandlers.get(op)
    if (!handler) {
      send({ t: "end", sid, error: { _tag: "UnknownOperation", message: `no stream ${op}` } })
      return
    }
    const state: Served = { credit: STREAM_WINDOW, wake: null, abort: new AbortController() }
    served.set(sid, state)
    const lane = byteStreams.has(op) ? sendBytes : undefined
    let laneBytes = 0
    const spend = async (weight: number) => {
      state.credit -= weight
      while (state.credit <= 0 && !state.abort.signal.aborted)
        await new Promise<void>((resolve) => (state.wake = resolve))
    }
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
      ...(lane &&
        lendBytes && {
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

  const stopServing = (sid: number) => {
    const state = served.get(sid)
    if (!state) return
    served.delete(sid)
    state.abort.abort()
    state.wake?.()
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
      case "part": {
        if (!pending.has(message.id) || !Array.isArray(message.entries)) return
        const byKey = parts.get(message.id) ?? new Map<string, unknown[]>()
        parts.set(message.id, byKey)
        const entries = byKey.get(message.key)
        if (entries === undefined) byKey.set(message.key, [...message.entries])
        else for (const entry of message.entries) entries.push(entry)
        return
      }
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
        startServing(message.sid, message.op, message.args)
        return
      case "credit": {
        const state = served.get(message.sid)
        if (!state) return
        state.credit += message.weight
        if (state.credit > 0) {
          const wake = state.wake
          state.wake = null
          wake?.()
        }
        return
      }
      case "close":
        stopServing(message.sid)
        return
      case "items": {
        const r = reading.get(message.sid)
        if (!r) return
        r.batches.push(message.items)
        r.weights.push(message.weight)
        r.wake?.()
        return
      }
      case "end": {
        const r = reading.get(message.sid)
        if (!r) return
        const error = message.error ?? null
        if (message.laneBytes !== undefined && r.laneBytes < message.laneBytes)
          r.endAt = { laneBytes: message.laneBytes, error }
        else finish(r, error)
        return
      }
    }
  }

  const finish = (r: Reading, error: WireError | null) => {
    r.ended = true
    r.error = error
    r.wake?.()
  }

  port.listen((batch) => {
    for (const message of batch) receive(message)
  })
  port.listenBytes?.((sid, piece): PieceFate => {
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
  })

  const open = (op: string, args?: unknown, options?: OpenOptions): StreamReader => {
    const sid = ++nextId
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

  return {
    request: (op, args) =>
      new Promise<unknown>((resolve, reject) => {
        if (closedWith) return reject(new ChannelError(closedWith))
        const id = ++nextId
        pending.set(id, { resolve, reject })
        send({ t: "req", id, op, args })
      }),
    note: (op, args) => send({ t: "note", op, args }),
    open,
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
      outbox = []
      const waiting = [...pending.values()]
      pending.clear()
      parts.clear()
      for (const w of waiting) w.reject(new ChannelError(reason))
      for (const sid of [...served.keys()]) stopServing(sid)
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

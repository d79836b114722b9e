/**
 * The channel's messages, its port, the peer it gives each side and the
 * errors that cross it (channel.ts keeps the rules).
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

export interface PeerOptions {
  /** About how much of a large answer's array one part carries (PART_BYTES; tests make it small). */
  readonly partBytes?: number
}

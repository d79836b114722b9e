/**
 * The byte lane between a host and its plugin process: a raw pipe (the
 * child's fd 4) that carries the bytes of the host's byte streams (a CLI's
 * stdout and stderr, `fs.stream`) to the plugin, beside the IPC channel,
 * with no serializer. A frame is an 8-byte header, the stream id and the
 * length (both u32, big-endian), then that many bytes.
 *
 * Rules it keeps:
 * - One direction only, host to plugin; the child reads fd 4 with `fs.read`
 *   (a blocking read on the thread pool), so no socket object, which plugin
 *   code could reach through a patched prototype, ever exists in the child.
 * - The reader hands out views of its read buffer (no copy): a frame split
 *   across reads arrives as several pieces, in order; a header split across
 *   reads is put together first.
 * - The read loop (`readLane`) reads into 1 MiB buffers. A buffer is read
 *   into again only once every piece of it was lent and given back
 *   (`release`): a piece the consumer keeps (a stream that does not lend)
 *   retires its buffer for good, so a kept view is never overwritten; an
 *   idle lane holds no buffer waiting (`LANE_IDLE_MS`).
 * - No flow control here: the channel's credit (sdk/channel.ts) bounds what
 *   each stream may have in flight, the lane only carries it.
 */

import { Buffer } from "node:buffer"
import type { PieceFate } from "../../sdk/channel.ts"

/** The lane's file descriptor in the plugin process (after stdin, stdout, stderr and the IPC channel). */
export const LANE_FD = 4

export const HEADER_BYTES = 8

/** The header of one frame: stream id and payload length. */
export const frameHeader = (sid: number, length: number): Uint8Array => {
  const header = new Uint8Array(HEADER_BYTES)
  const view = new DataView(header.buffer)
  view.setUint32(0, sid)
  view.setUint32(4, length)
  return header
}

const nativeIndexOf = Buffer.prototype.indexOf

/**
 * A piece the lane delivers: a Uint8Array whose search for one byte is
 * Node's native one (a Buffer's, memchr), not V8's element loop, since a
 * plugin splits what the lane carries into lines with `indexOf(10)`, as it
 * does the host's Buffers in-process. Everything else is a Uint8Array's own
 * (a `slice` copies, as a Buffer's would not), and what it makes is plain.
 */
export class LaneBytes extends Uint8Array {
  static get [Symbol.species](): Uint8ArrayConstructor {
    return Uint8Array
  }

  override indexOf(value: number, from?: number): number {
    return (value & 255) === value && (from === undefined || (from >= 0 && Number.isInteger(from)))
      ? nativeIndexOf.call(this, value, from ?? 0)
      : super.indexOf(value, from)
  }
}

/**
 * A parser of the lane's bytes as they are read: `push` each read, `deliver`
 * hears every piece of every frame's payload (never empty), as a view of the
 * pushed bytes (`LaneBytes`).
 */
export const makeLaneReader = (deliver: (sid: number, piece: Uint8Array) => void) => {
  const header = new Uint8Array(HEADER_BYTES)
  const headerView = new DataView(header.buffer)
  let headerHave = 0
  let sid = 0
  let left = 0
  return {
    push: (bytes: Uint8Array): void => {
      let at = 0
      while (at < bytes.byteLength) {
        if (left === 0) {
          const take = Math.min(HEADER_BYTES - headerHave, bytes.byteLength - at)
          header.set(bytes.subarray(at, at + take), headerHave)
          headerHave += take
          at += take
          if (headerHave < HEADER_BYTES) return
          headerHave = 0
          sid = headerView.getUint32(0)
          left = headerView.getUint32(4)
          continue
        }
        const take = Math.min(left, bytes.byteLength - at)
        deliver(sid, new LaneBytes(bytes.buffer as ArrayBuffer, bytes.byteOffset + at, take))
        left -= take
        at += take
      }
    },
  }
}

/** Read buffers of this size; a new one when less than a pipe's read is left. */
export const LANE_BUFFER = 1 << 20
export const LANE_MIN_READ = 64 * 1024
/** Buffers whose pieces all came back wait here for reuse (more are left to the collector). */
export const LANE_POOL = 8
/** A lane without a read for this long lets its waiting buffers go (an idle plugin process holds none). */
export const LANE_IDLE_MS = 1_000

/** One read into `buffer` at `at`, at most `length` bytes; `done(0)` (or an error) ends the lane. */
export type ReadInto = (
  buffer: Uint8Array,
  at: number,
  length: number,
  done: (error: unknown, bytes: number) => void,
) => void

interface Slot {
  readonly bytes: Uint8Array
  /** Lent pieces not given back yet. */
  lent: number
  /** A piece of it was kept: never read into again. */
  kept: boolean
  /** The loop still reads into it. */
  filling: boolean
}

/** A timer that does not keep the process alive (where timers have `unref`). */
const unref = (timer: ReturnType<typeof setTimeout>) => {
  ;(timer as { unref?: () => void }).unref?.()
  return timer
}

/**
 * Read the lane until `readInto` ends, each read's frames handed to
 * `deliver`, whose answer says whether the buffer may be read into again.
 * Fresh buffers come from the collector; buffers whose lent pieces all came
 * back are read into again (fresh 1 MiB buffers a read fill the young
 * generation with survivors on a live stdout); after a second without a
 * read the waiting ones are let go.
 */
export const readLane = (readInto: ReadInto, deliver: (sid: number, piece: Uint8Array) => PieceFate) => {
  // Weak: a buffer whose lent piece is never given back (a reader dropped mid-stream) is just collected.
  const slots = new WeakMap<ArrayBufferLike, Slot>()
  const free: Slot[] = []
  let lastRead = 0
  let idleArmed = false
  const dropWhenIdle = () => {
    const quiet = Date.now() - lastRead
    if (quiet < LANE_IDLE_MS) return void unref(setTimeout(dropWhenIdle, LANE_IDLE_MS - quiet))
    free.length = 0
    idleArmed = false
  }
  const reuse = (slot: Slot) => {
    if (slot.filling || slot.kept || slot.lent > 0 || free.length >= LANE_POOL) return
    free.push(slot)
    if (idleArmed) return
    idleArmed = true
    unref(setTimeout(dropWhenIdle, LANE_IDLE_MS))
  }
  const take = (): Slot => {
    const slot = free.pop() ?? { bytes: new Uint8Array(LANE_BUFFER), lent: 0, kept: false, filling: false }
    slot.filling = true
    slots.set(slot.bytes.buffer, slot)
    return slot
  }
  let slot = take()
  const parser = makeLaneReader((sid, piece) => {
    const fate = deliver(sid, piece)
    if (fate === "lent") slot.lent++
    else if (fate === "kept") slot.kept = true
  })
  let at = 0
  const next = () => {
    if (slot.bytes.byteLength - at < LANE_MIN_READ) {
      slot.filling = false
      reuse(slot)
      slot = take()
      at = 0
    }
    readInto(slot.bytes, at, slot.bytes.byteLength - at, (error, n) => {
      // The host closed its end, or is gone (its disconnect ends this process).
      if (error || n === 0) return
      lastRead = Date.now()
      const bytes = slot.bytes.subarray(at, at + n)
      at += n
      parser.push(bytes)
      next()
    })
  }
  next()
  return {
    /** Give lent pieces back: the consumer will not look at them again. */
    release: (pieces: ReadonlyArray<Uint8Array>): void => {
      for (const piece of pieces) {
        const owner = slots.get(piece.buffer)
        if (owner === undefined || owner.lent === 0) continue
        owner.lent--
        reuse(owner)
      }
    },
  }
}

/**
 * How `fs.readEnds` batches cross to a plugin process: as plain bytes, so
 * they take the channel's byte lane (a raw pipe) instead of the structured
 * serializer, whose copy in, copy out and fresh buffer per batch cost the
 * isolated list more than the bytes themselves.
 *
 * Each file is one record, back to back: a 40-byte header (little-endian:
 * u32 index, u32 head length, u32 tail length, u32 flags, f64 size, f64
 * mtimeMs, f64 birthtimeMs), then the head's bytes and the tail's. Flag 1:
 * no file (`visit(index, null)`), lengths 0. Flag 2 (`listEnds`, first of
 * its stream): the folder's listing, its "head" the UTF-8 JSON of
 * `[name, kind][]` and its index whether the ends were read (1) or only
 * sizes and times (0).
 *
 * Rules it keeps:
 * - The reader takes the stream in pieces cut anywhere (a pipe's reads do
 *   not keep records whole): a record inside one piece is visited as views
 *   of it, no copy; only a record split across pieces is put together, in
 *   one buffer of the largest record's size, reused.
 * - Nothing from the other side is trusted: a length past what the call
 *   asked for, or bytes left over at the end, is an error, never a read
 *   out of bounds.
 * - No Node module: the reader runs inside the sandbox.
 */
import type { DirEntry, FileEnds } from "./plugin-api.ts"

export const ENDS_HEADER_BYTES = 40
const NO_FILE = 1
const LISTING = 2
/** The most bytes a listing record may take: 100,000 entries of long names. */
export const LISTING_MAX_BYTES = 64 * 1024 * 1024

/** Bytes one record can take when the call asked for `headBytes` and `tailBytes`. */
export const endsRecordBytes = (headBytes: number, tailBytes: number): number =>
  ENDS_HEADER_BYTES + Math.max(0, Math.floor(headBytes)) + Math.max(0, Math.floor(tailBytes))

/**
 * Write one file's record into `out` at `at` (room for endsRecordBytes
 * checked by the caller); the offset after it.
 */
export const writeEndsRecord = (
  out: Uint8Array,
  at: number,
  index: number,
  ends: FileEnds | null,
): number => {
  const view = new DataView(out.buffer, out.byteOffset + at, ENDS_HEADER_BYTES)
  view.setUint32(0, index, true)
  if (ends === null) {
    view.setUint32(4, 0, true)
    view.setUint32(8, 0, true)
    view.setUint32(12, NO_FILE, true)
    view.setFloat64(16, 0, true)
    view.setFloat64(24, 0, true)
    view.setFloat64(32, 0, true)
    return at + ENDS_HEADER_BYTES
  }
  const head = ends.head.byteLength
  const tail = ends.tail.byteLength
  view.setUint32(4, head, true)
  view.setUint32(8, tail, true)
  view.setUint32(12, 0, true)
  view.setFloat64(16, ends.size, true)
  view.setFloat64(24, ends.mtimeMs, true)
  view.setFloat64(32, ends.birthtimeMs, true)
  out.set(ends.head, at + ENDS_HEADER_BYTES)
  out.set(ends.tail, at + ENDS_HEADER_BYTES + head)
  return at + ENDS_HEADER_BYTES + head + tail
}

/** A listing record (see the header) into a fresh buffer: the stream's first. */
export const listingRecord = (entries: ReadonlyArray<DirEntry>, withEnds: boolean): Uint8Array => {
  const json = new TextEncoder().encode(JSON.stringify(entries.map((e) => [e.name, e.kind])))
  const out = new Uint8Array(ENDS_HEADER_BYTES + json.byteLength)
  const view = new DataView(out.buffer, 0, ENDS_HEADER_BYTES)
  view.setUint32(0, withEnds ? 1 : 0, true)
  view.setUint32(4, json.byteLength, true)
  view.setUint32(12, LISTING, true)
  out.set(json, ENDS_HEADER_BYTES)
  return out
}

const KINDS: ReadonlySet<string> = new Set(["file", "directory", "link", "other"])

/** A listing record's JSON back to entries; throws on anything else. */
const entriesOf = (json: Uint8Array): DirEntry[] => {
  const raw = JSON.parse(new TextDecoder().decode(json)) as unknown
  if (!Array.isArray(raw)) throw new Error("listEnds: a listing that is not an array")
  return raw.map((pair: unknown): DirEntry => {
    if (!Array.isArray(pair) || typeof pair[0] !== "string" || !KINDS.has(pair[1]))
      throw new Error("listEnds: a listing entry that is not [name, kind]")
    return { name: pair[0], kind: pair[1] as DirEntry["kind"] }
  })
}

export interface EndsReader {
  /** One piece of the stream, cut anywhere; every record it completes is visited before it returns. */
  readonly push: (piece: Uint8Array) => void
  /** The stream ended: throws when it ended inside a record. */
  readonly end: () => void
}

/**
 * A reader of one `readEnds` stream of records (see the header), for a call
 * that asked `headBytes`/`tailBytes`; with `listing`, of a `listEnds` stream,
 * whose listing record is handed to it.
 */
export const makeEndsReader = (
  headBytes: number,
  tailBytes: number,
  visit: (index: number, ends: FileEnds | null) => void,
  listing?: (entries: ReadonlyArray<DirEntry>, withEnds: boolean) => void,
): EndsReader => {
  const maxHead = Math.max(0, Math.floor(headBytes))
  const maxTail = Math.max(0, Math.floor(tailBytes))
  /** A record split across pieces, put together here (grown once for a long listing). */
  let carry = new Uint8Array(endsRecordBytes(headBytes, tailBytes))
  let carried = 0
  /** The carried record's whole length, once its header is in (0: not yet). */
  let carryLength = 0

  /** The record at `bytes[at…]` whose header is there: its length, checked against what was asked. */
  const lengthAt = (bytes: Uint8Array, at: number): number => {
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, ENDS_HEADER_BYTES)
    const head = view.getUint32(4, true)
    const tail = view.getUint32(8, true)
    if ((view.getUint32(12, true) & LISTING) !== 0) {
      if (listing === undefined || head > LISTING_MAX_BYTES || tail !== 0)
        throw new Error(`readEnds: a listing record of ${head} bytes where none belongs`)
      return ENDS_HEADER_BYTES + head
    }
    if (head > maxHead || tail > maxTail)
      throw new Error(`readEnds: a record of ${head} + ${tail} bytes, past the ${maxHead} + ${maxTail} asked`)
    return ENDS_HEADER_BYTES + head + tail
  }

  /** Visit the whole record at `bytes[at, at + length)`, its ends as views. */
  const visitAt = (bytes: Uint8Array, at: number) => {
    const view = new DataView(bytes.buffer, bytes.byteOffset + at, ENDS_HEADER_BYTES)
    const index = view.getUint32(0, true)
    const flags = view.getUint32(12, true)
    if ((flags & LISTING) !== 0) {
      const length = view.getUint32(4, true)
      const json = bytes.subarray(at + ENDS_HEADER_BYTES, at + ENDS_HEADER_BYTES + length)
      return listing?.(entriesOf(json), index === 1)
    }
    if ((flags & NO_FILE) !== 0) return visit(index, null)
    const head = view.getUint32(4, true)
    const tail = view.getUint32(8, true)
    const from = at + ENDS_HEADER_BYTES
    visit(index, {
      head: bytes.subarray(from, from + head),
      tail: bytes.subarray(from + head, from + head + tail),
      size: view.getFloat64(16, true),
      mtimeMs: view.getFloat64(24, true),
      birthtimeMs: view.getFloat64(32, true),
    })
  }

  /** Feed `piece[at…]` into the carried record; the offset after what it took. */
  const fill = (piece: Uint8Array, at: number): number => {
    if (carryLength === 0) {
      const take = Math.min(ENDS_HEADER_BYTES - carried, piece.byteLength - at)
      carry.set(piece.subarray(at, at + take), carried)
      carried += take
      at += take
      if (carried < ENDS_HEADER_BYTES) return at
      carryLength = lengthAt(carry, 0)
      if (carryLength > carry.byteLength) {
        const longer = new Uint8Array(carryLength)
        longer.set(carry.subarray(0, carried))
        carry = longer
      }
    }
    const take = Math.min(carryLength - carried, piece.byteLength - at)
    carry.set(piece.subarray(at, at + take), carried)
    carried += take
    at += take
    if (carried === carryLength) {
      visitAt(carry, 0)
      carried = 0
      carryLength = 0
    }
    return at
  }

  return {
    push: (piece) => {
      let at = carried > 0 ? fill(piece, 0) : 0
      while (at < piece.byteLength) {
        const left = piece.byteLength - at
        if (left >= ENDS_HEADER_BYTES) {
          const length = lengthAt(piece, at)
          if (left >= length) {
            visitAt(piece, at)
            at += length
            continue
          }
        }
        at = fill(piece, at)
      }
    },
    end: () => {
      if (carried > 0) throw new Error(`readEnds: the stream ended inside a record (${carried} bytes of it)`)
    },
  }
}

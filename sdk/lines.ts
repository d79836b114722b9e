/**
 * Line transport: a child's stdout bytes as text lines, and JSON frames
 * written one per line. Splitting is done here, decoding per line by the
 * caller, so one bad line is one diagnostic and never ends the stream.
 *
 * `boundedLines` is the reader for output nobody vouches for (a CLI's
 * stdout and stderr). Its rules:
 * - a line ends at LF only (a CR before the LF is dropped with it); a CR
 *   anywhere else stays in the line, so a raw CR is one bad line, never two;
 * - a line longer than `maxLineBytes` is not kept: its bytes are counted and
 *   dropped up to its newline, and it arrives as its first bytes with a
 *   `too_long` problem (memory holds at most one line of the cap);
 * - each line is decoded as strict UTF-8; one that is not arrives decoded
 *   with U+FFFD in place of the bad bytes and an `invalid_utf8` problem.
 * A caller may also give `LineSplitter` a cutter (`LineCutting`): from its
 * size on, a line is cut as it streams instead of held whole (the plugin's
 * live reader, live-lines.ts, gives it long-line.ts).
 * `lines` (Effect's own splitter) remains for output the caller trusts.
 */
import { Stream } from "effect"
import { joinBytes } from "./bytes.ts"

/** UTF-8 bytes → lines (handles chunk boundaries, `\r\n`, a last unterminated line). */
export const lines = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<string, E, R> =>
  bytes.pipe(Stream.decodeText(), Stream.splitLines)

/** What made a line unusable as it came (the text is still given: see `Line`). */
export type LineProblem =
  | { readonly kind: "too_long"; readonly bytes: number; readonly maxBytes: number }
  | { readonly kind: "invalid_utf8" }

/** One line; with a problem, `text` is the line as far as it could be read (too long: its head). */
export interface Line {
  readonly text: string
  readonly problem?: LineProblem
}

/** How many bytes of a line over the cap are kept to show what it was. */
export const TOO_LONG_HEAD_BYTES = 200

const LF = 0x0a
const CR = 0x0d
const strict = new TextDecoder("utf-8", { fatal: true })
const lenient = new TextDecoder("utf-8")

/** A CRLF line end is a line end: the CR goes with the LF. */
const withoutCr = (bytes: Uint8Array): Uint8Array =>
  bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes

const decodeLineBytes = (bytes: Uint8Array): Line => {
  try {
    return { text: strict.decode(bytes) }
  } catch {
    return { text: lenient.decode(bytes), problem: { kind: "invalid_utf8" } }
  }
}

/**
 * What cuts a line too long to hold whole, as it streams (the plugin's
 * long-line.ts): fed the line's bytes in order, it holds `heldBytes` and
 * gives the cut line at `finish`. sdk/ knows only this shape.
 */
export interface LineCutter {
  push(bytes: Uint8Array): void
  readonly heldBytes: number
  finish(): Uint8Array
}

/** From `fromBytes` on, a line goes through a fresh `cutter()` instead of being held whole. */
export interface LineCutting {
  readonly fromBytes: number
  readonly cutter: () => LineCutter
}

/**
 * Splits a byte stream into `Line`s, chunk by chunk: `push` each chunk, then
 * `end` once for a last line with no newline. Holds at most `maxLineBytes`
 * of a line at any time. With `cutting` (below the cap), a line past its
 * size is cut as it arrives; if even the cut line passes the cap it is
 * skipped after all.
 */
export class LineSplitter {
  private parts: Uint8Array[] = []
  private size = 0
  /** The line past `cutting.fromBytes`, being cut as it arrives. */
  private long: LineCutter | undefined = undefined
  /** Bytes of the line as it came (a cut one counts what was cut away too). */
  private lineBytes = 0
  /** Bytes of the line being skipped (over the cap), or -1 when not skipping. */
  private skipped = -1
  private head: Uint8Array = new Uint8Array(0)
  private most = 0
  private readonly cutFrom: number

  constructor(
    private readonly maxLineBytes: number,
    private readonly cutting?: LineCutting,
  ) {
    this.cutFrom = cutting !== undefined && cutting.fromBytes < maxLineBytes ? cutting.fromBytes : Infinity
  }

  /** Bytes of the current line held now (at most the cap). */
  get heldBytes(): number {
    return this.size + this.head.length + (this.long?.heldBytes ?? 0)
  }

  /** The most bytes of one line this splitter ever held at once (a test's bound on memory). */
  get mostHeldBytes(): number {
    return this.most
  }

  push(chunk: Uint8Array): Line[] {
    const out: Line[] = []
    let at = 0
    while (at < chunk.length) {
      const nl = chunk.indexOf(LF, at)
      const end = nl === -1 ? chunk.length : nl
      if (nl !== -1 && this.idle() && end - at <= Math.min(this.maxLineBytes, this.cutFrom)) {
        // The common case, a whole short line inside one chunk: decoded in place, never copied.
        out.push(decodeLineBytes(withoutCr(chunk.subarray(at, end))))
        at = nl + 1
        continue
      }
      this.take(chunk.subarray(at, end))
      if (nl === -1) break
      out.push(this.finish())
      at = nl + 1
    }
    return out
  }

  end(): Line[] {
    return this.idle() ? [] : [this.finish()]
  }

  private idle(): boolean {
    return this.size === 0 && this.long === undefined && this.skipped === -1
  }

  private take(piece: Uint8Array): void {
    if (piece.length === 0) return
    if (this.skipped !== -1) {
      this.skipped += piece.length
      return
    }
    this.lineBytes += piece.length
    if (this.long !== undefined) {
      this.long.push(piece)
      this.held(this.long.heldBytes, piece)
      return
    }
    const total = this.size + piece.length
    if (total > this.cutFrom && this.cutting !== undefined) {
      // From here on the line is cut as it arrives: what was held goes through the cutter first.
      const cutter = this.cutting.cutter()
      for (const part of this.parts) cutter.push(part)
      cutter.push(piece)
      this.long = cutter
      this.parts = []
      this.size = 0
      this.held(cutter.heldBytes, piece)
      return
    }
    if (total > this.maxLineBytes) {
      this.skip(this.joined(), piece)
      return
    }
    // The chunk's buffer may be reused by its producer: keep a copy of what outlives this call
    // (a copy: a Buffer's `slice` is a view).
    this.parts.push(new Uint8Array(piece))
    this.size += piece.length
    this.most = Math.max(this.most, this.size)
  }

  /** The cut line holds `bytes` now: past the cap, the line is skipped after all. */
  private held(bytes: number, piece: Uint8Array): void {
    this.most = Math.max(this.most, bytes)
    if (bytes <= this.maxLineBytes) return
    const cut = (this.long as LineCutter).finish()
    this.long = undefined
    this.skip(cut, piece, this.lineBytes - piece.length)
  }

  /** Stop holding the line: keep its first bytes to show, count the rest. */
  private skip(before: Uint8Array, piece: Uint8Array, beforeBytes = before.length): void {
    const head = new Uint8Array(Math.min(TOO_LONG_HEAD_BYTES, before.length + piece.length))
    head.set(before.subarray(0, head.length))
    if (before.length < head.length) head.set(piece.subarray(0, head.length - before.length), before.length)
    this.head = head
    this.skipped = beforeBytes + piece.length
    this.parts = []
    this.size = 0
  }

  private joined(): Uint8Array {
    return joinBytes(this.parts, this.size)
  }

  private finish(): Line {
    this.lineBytes = 0
    if (this.skipped !== -1) {
      const line: Line = {
        text: lenient.decode(this.head),
        problem: { kind: "too_long", bytes: this.skipped, maxBytes: this.maxLineBytes },
      }
      this.skipped = -1
      this.head = new Uint8Array(0)
      return line
    }
    if (this.long !== undefined) {
      const cut = this.long.finish()
      this.long = undefined
      return decodeLineBytes(withoutCr(cut))
    }
    const bytes = this.joined()
    this.parts = []
    this.size = 0
    return decodeLineBytes(withoutCr(bytes))
  }
}

/** Bytes → `Line`s by the rules above. */
export const boundedLines = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  maxLineBytes: number,
): Stream.Stream<Line, E, R> =>
  bytes.pipe(
    Stream.mapAccum(
      () => new LineSplitter(maxLineBytes),
      (splitter, chunk: Uint8Array) => [splitter, splitter.push(chunk)] as const,
      { onHalt: (splitter) => splitter.end() },
    ),
  )

/** One JSON value as one line of stream-json input. */
export const frameLine = (frame: unknown): string => `${JSON.stringify(frame)}\n`

/** Parse one line; null for a blank line; a thrown error for bad JSON. */
export const parseLine = (line: string): unknown => {
  const trimmed = line.trim()
  return trimmed === "" ? null : JSON.parse(trimmed)
}

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
 * `lines` (Effect's own splitter) remains for output the caller trusts.
 */
import { Stream } from "effect"

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
 * Splits a byte stream into `Line`s, chunk by chunk: `push` each chunk, then
 * `end` once for a last line with no newline. Holds at most `maxLineBytes`
 * of a line at any time.
 */
export class LineSplitter {
  private parts: Uint8Array[] = []
  private size = 0
  /** Bytes of the line being skipped (over the cap), or -1 when not skipping. */
  private skipped = -1
  private head: Uint8Array = new Uint8Array(0)

  constructor(private readonly maxLineBytes: number) {}

  /** Bytes of the current line held now (at most the cap). */
  get heldBytes(): number {
    return this.size + this.head.length
  }

  push(chunk: Uint8Array): Line[] {
    const out: Line[] = []
    let at = 0
    while (at < chunk.length) {
      const nl = chunk.indexOf(LF, at)
      const end = nl === -1 ? chunk.length : nl
      if (nl !== -1 && this.size === 0 && this.skipped === -1 && end - at <= this.maxLineBytes) {
        // The common case, a whole line inside one chunk: decoded in place, never copied.
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
    return this.size === 0 && this.skipped === -1 ? [] : [this.finish()]
  }

  private take(piece: Uint8Array): void {
    if (piece.length === 0) return
    if (this.skipped !== -1) {
      this.skipped += piece.length
      return
    }
    if (this.size + piece.length > this.maxLineBytes) {
      this.head = this.joined().subarray(0, TOO_LONG_HEAD_BYTES)
      if (this.head.length < TOO_LONG_HEAD_BYTES) {
        const more = piece.subarray(0, TOO_LONG_HEAD_BYTES - this.head.length)
        const head = new Uint8Array(this.head.length + more.length)
        head.set(this.head)
        head.set(more, this.head.length)
        this.head = head
      }
      this.skipped = this.size + piece.length
      this.parts = []
      this.size = 0
      return
    }
    // The chunk's buffer may be reused by its producer: keep a copy of what outlives this call.
    this.parts.push(new Uint8Array(piece))
    this.size += piece.length
  }

  private joined(): Uint8Array {
    if (this.parts.length === 1) return this.parts[0] as Uint8Array
    const all = new Uint8Array(this.size)
    let at = 0
    for (const part of this.parts) {
      all.set(part, at)
      at += part.length
    }
    return all
  }

  private finish(): Line {
    if (this.skipped !== -1) {
      const line: Line = {
        text: lenient.decode(this.head),
        problem: { kind: "too_long", bytes: this.skipped, maxBytes: this.maxLineBytes },
      }
      this.skipped = -1
      this.head = new Uint8Array(0)
      return line
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

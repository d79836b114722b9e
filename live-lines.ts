/**
 * A live `claude` stdout as `Line`s (sdk/lines.ts's shape and rules), with
 * one rule more: a line past `longLineBytes` is never held whole. From that
 * size on it is cut as it streams (long-line.ts, as the stored transcript's
 * reader does, files.ts): every JSON string value past `longStringBytes` is
 * shortened at a character boundary and closed with a note of its full size,
 * so the line is still one valid frame and is delivered. A 100 MB tool
 * result arriving live costs what its cut line weighs (about
 * `longStringBytes` per long string), not its size, several times over.
 *
 * Rules it keeps, as sdk/lines.ts's `boundedLines`:
 * - a line ends at LF only (a CR before the LF goes with it);
 * - a line whose held bytes (whole, or cut) pass `maxLineBytes` is skipped to
 *   its newline, given as its first bytes with a `too_long` problem (a cap
 *   at or below `longLineBytes` means no line is cut: past the cap it is
 *   skipped, as before);
 * - each line is decoded as strict UTF-8; one that is not arrives with U+FFFD
 *   in place of the bad bytes and an `invalid_utf8` problem.
 */
import { Stream } from "effect"
import { LONG_LINE_BYTES, LONG_STRING_BYTES } from "./files.ts"
import { LongLineCompactor } from "./long-line.ts"
import { type Line, TOO_LONG_HEAD_BYTES } from "./sdk/lines.ts"

const LF = 0x0a
const CR = 0x0d
const strict = new TextDecoder("utf-8", { fatal: true })
const lenient = new TextDecoder("utf-8")

const withoutCr = (bytes: Uint8Array): Uint8Array =>
  bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.subarray(0, bytes.length - 1) : bytes

const decodeLineBytes = (bytes: Uint8Array): Line => {
  try {
    return { text: strict.decode(bytes) }
  } catch {
    return { text: lenient.decode(bytes), problem: { kind: "invalid_utf8" } }
  }
}

export interface LiveLineLimits {
  /** The most bytes of one line held (whole or cut); past it the line is skipped. */
  readonly maxLineBytes: number
  /** From this size on a line is cut as it streams (default files.ts `LONG_LINE_BYTES`, 4 MiB). */
  readonly longLineBytes?: number
  /** What a cut line keeps of each string value (default files.ts `LONG_STRING_BYTES`, 256 KiB). */
  readonly longStringBytes?: number
}

/** Splits a live stdout's chunks into `Line`s by the rules above: `push` each chunk, `end` once. */
export class LiveLineSplitter {
  private parts: Uint8Array[] = []
  private size = 0
  /** The line past `longLineBytes`, being cut as it arrives. */
  private long: LongLineCompactor | undefined = undefined
  /** Bytes of the line as it came (a cut one counts what was cut away too). */
  private lineBytes = 0
  /** Bytes of the line being skipped (over the cap), or -1 when not skipping. */
  private skipped = -1
  private head: Uint8Array = new Uint8Array(0)
  private most = 0
  private readonly maxLineBytes: number
  private readonly longLineBytes: number
  private readonly longStringBytes: number

  constructor(limits: LiveLineLimits) {
    this.maxLineBytes = limits.maxLineBytes
    this.longLineBytes = limits.longLineBytes ?? LONG_LINE_BYTES
    this.longStringBytes = limits.longStringBytes ?? LONG_STRING_BYTES
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
      if (nl !== -1 && this.idle() && end - at <= Math.min(this.maxLineBytes, this.longLineBytes)) {
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
    if (total > this.longLineBytes && this.longLineBytes < this.maxLineBytes) {
      // From here on the line is cut as it arrives: what was held goes through the cutter first.
      const cutter = new LongLineCompactor(this.longStringBytes)
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
    // The chunk's buffer may be reused by its producer: keep a copy of what outlives this call.
    this.parts.push(piece.slice())
    this.size += piece.length
    this.most = Math.max(this.most, this.size)
  }

  /** The cut line holds `bytes` now: past the cap, the line is skipped after all. */
  private held(bytes: number, piece: Uint8Array): void {
    this.most = Math.max(this.most, bytes)
    if (bytes <= this.maxLineBytes) return
    const cut = (this.long as LongLineCompactor).finish()
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

/** A live stdout's bytes → `Line`s by the rules above. */
export const liveLines = <E, R>(
  bytes: Stream.Stream<Uint8Array, E, R>,
  limits: LiveLineLimits,
): Stream.Stream<Line, E, R> =>
  bytes.pipe(
    Stream.mapAccum(
      () => new LiveLineSplitter(limits),
      (splitter, chunk: Uint8Array) => [splitter, splitter.push(chunk)] as const,
      { onHalt: (splitter) => splitter.end() },
    ),
  )

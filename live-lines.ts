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
import { type Line, LineSplitter } from "./sdk/lines.ts"

export interface LiveLineLimits {
  /** The most bytes of one line held (whole or cut); past it the line is skipped. */
  readonly maxLineBytes: number
  /** From this size on a line is cut as it streams (default files.ts `LONG_LINE_BYTES`, 4 MiB). */
  readonly longLineBytes?: number
  /** What a cut line keeps of each string value (default files.ts `LONG_STRING_BYTES`, 256 KiB). */
  readonly longStringBytes?: number
}

/** sdk/lines.ts's splitter with long-line.ts as its cutter: `push` each chunk, `end` once. */
export class LiveLineSplitter extends LineSplitter {
  constructor(limits: LiveLineLimits) {
    const longStringBytes = limits.longStringBytes ?? LONG_STRING_BYTES
    super(limits.maxLineBytes, {
      fromBytes: limits.longLineBytes ?? LONG_LINE_BYTES,
      cutter: () => new LongLineCompactor(longStringBytes),
    })
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

/**
 * Line transport: a child's stdout bytes as text lines, and JSON frames
 * written one per line. Splitting is done here, decoding per line by the
 * caller, so one bad line is one diagnostic and never ends the stream.
 */
import { Stream } from "effect"

/** UTF-8 bytes → lines (handles chunk boundaries, `\r\n`, a last unterminated line). */
export const lines = <E, R>(bytes: Stream.Stream<Uint8Array, E, R>): Stream.Stream<string, E, R> =>
  bytes.pipe(Stream.decodeText(), Stream.splitLines)

/** One JSON value as one line of stream-json input. */
export const frameLine = (frame: unknown): string => `${JSON.stringify(frame)}\n`

/** Parse one line; null for a blank line; a thrown error for bad JSON. */
export const parseLine = (line: string): unknown => {
  const trimmed = line.trim()
  return trimmed === "" ? null : JSON.parse(trimmed)
}

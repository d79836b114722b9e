/**
 * Reads through the broker's `Fs` service. A missing or ungranted file is
 * null, never an error. Transcripts are large (1-2 MB for a short session,
 * tens of MB for a long one), so besides whole reads there are byte ranges
 * (a head and a tail) and a line scanner that streams the file and lets the
 * caller skip a line by its first bytes without ever decoding it.
 */
import { Effect, Stream } from "effect"
import { LongLineCompactor } from "./long-line.ts"
import { endsOfWhole, planEnds } from "./sdk/file-ends.ts"
import { type FileEnds, Fs, type FsShape } from "./sdk/plugin-api.ts"

const lenient = new TextDecoder()
/** Strict decoding is faster on valid input; bad bytes fall back. */
const strict = new TextDecoder("utf-8", { fatal: true })

/** UTF-8 bytes as text; a character split at either end (a byte range cut) or a bad byte becomes U+FFFD. */
export const decodeText = (bytes: Uint8Array): string => {
  try {
    return strict.decode(bytes)
  } catch {
    return lenient.decode(bytes)
  }
}

/** Whole file as text, or null. */
export const readText = (path: string): Effect.Effect<string | null, never, Fs> =>
  Effect.gen(function* () {
    return yield* (yield* Fs).read(path)
  })

/** A JSON file parsed, or null when missing, ungranted or not JSON. */
export const readJson = (path: string): Effect.Effect<unknown, never, Fs> =>
  Effect.map(readText(path), (text) => {
    if (text === null) return null
    try {
      return JSON.parse(text) as unknown
    } catch {
      return null
    }
  })

/** The first `bytes` bytes of a file as text (a split character at the cut is replaced), or null. */
export const readHead = (path: string, bytes: number): Effect.Effect<string | null, never, Fs> =>
  Effect.gen(function* () {
    const data = yield* (yield* Fs).readRange(path, 0, bytes)
    return data === null ? null : decodeText(data)
  })

/**
 * The last `bytes` bytes of a file as text, or null. Pass `size` when it is
 * already known (from `stat`) to save a call.
 */
export const readTail = (
  path: string,
  bytes: number,
  size?: number,
): Effect.Effect<string | null, never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const total = size ?? (yield* fs.stat(path))?.size
    if (total === undefined) return null
    const data = yield* fs.readRange(path, Math.max(0, total - bytes), total)
    return data === null ? null : decodeText(data)
  })

/** Both ends of many files, each visited once (in any order) with bytes lent for that visit (FsShape.readEnds). */
export type EndsReader = (
  paths: ReadonlyArray<string>,
  headBytes: number,
  tailBytes: number,
  visit: (index: number, ends: FileEnds | null) => void,
) => Effect.Effect<void>

/** Files read at once by the fallback: enough to keep an asynchronous broker's I/O busy. */
const FALLBACK_CONCURRENCY = 16

/**
 * A reader of files' two ends: the broker's one-open-per-file `readEnds`
 * when it has one, else `stat` and one or two byte ranges per file.
 */
export const endsReader = (fs: FsShape): EndsReader =>
  fs.readEnds ??
  ((paths, headBytes, tailBytes, visit) =>
    Effect.forEach(
      paths,
      (path, i) =>
        Effect.map(endsByRanges(fs, path, headBytes, tailBytes), (ends) => {
          visit(i, ends)
        }),
      { concurrency: FALLBACK_CONCURRENCY, discard: true },
    ))

const NO_BYTES = new Uint8Array(0)

const endsByRanges = (
  fs: FsShape,
  path: string,
  headBytes: number,
  tailBytes: number,
): Effect.Effect<FileEnds | null> =>
  Effect.gen(function* () {
    const stat = yield* fs.stat(path)
    if (stat === null || stat.kind !== "file") return null
    const { size, mtimeMs, birthtimeMs } = stat
    if (headBytes <= 0 && tailBytes <= 0)
      return { head: NO_BYTES, tail: NO_BYTES, size, mtimeMs, birthtimeMs }
    const plan = planEnds(size, headBytes, tailBytes)
    if (plan.whole) {
      const whole = yield* fs.readRange(path, 0, size)
      return whole === null ? null : { ...endsOfWhole(whole, plan), size, mtimeMs, birthtimeMs }
    }
    const head = yield* fs.readRange(path, 0, plan.headLength)
    const tail = yield* fs.readRange(path, size - plan.tailLength, size)
    if (head === null || tail === null) return null
    return { head, tail, size, mtimeMs, birthtimeMs }
  })

/** One file's head and tail with its size and times (see endsReader), or null; its bytes are the caller's. */
export const readEnds = (
  path: string,
  headBytes: number,
  tailBytes: number,
): Effect.Effect<FileEnds | null, never, Fs> =>
  Fs.use((fs) => {
    let found: FileEnds | null = null
    const keep = (_: number, ends: FileEnds | null) => {
      found = ends && { ...ends, head: ends.head.slice(), tail: ends.tail.slice() }
    }
    return Effect.map(endsReader(fs)([path], headBytes, tailBytes, keep), () => found)
  })

/**
 * Decides from a line's first bytes (at most `LinePrefix` of them) whether
 * the line is wanted. A line it refuses is never copied or decoded.
 */
export type LineFilter = (prefix: Uint8Array) => boolean

/** How many leading bytes of a line a `LineFilter` sees (fewer when the line is shorter). */
export const LinePrefix = 512

/**
 * A kept line longer than this is never held whole: it is cut as it streams
 * (long-line.ts), each string value past `LONG_STRING_BYTES` shortened with
 * its size said. The CLI stores a tool's whole output on one line (a 100 MB
 * command output is one 200 MB record: content and toolUseResult).
 */
export const LONG_LINE_BYTES = 4 * 1024 * 1024
export const LONG_STRING_BYTES = 256 * 1024

export interface SplitLimits {
  readonly longLineBytes: number
  readonly longStringBytes: number
}

/**
 * Splits byte chunks into lines, handing over only those the filter keeps
 * (as bytes; `\r` before `\n` dropped; valid only during the call). `end()`
 * gives the last line when the data did not end with a newline: a torn line
 * of a file still being written, which the caller parses like any other and
 * drops if it fails.
 */
export class LineSplitter {
  /**
   * The part of a line that spans chunks, copied into one buffer the
   * splitter owns and reuses line after line (grown by doubling up to
   * `CARRY_BYTES`): one copy per byte, no fresh array per piece or per join
   * (those wait for a collection and copy every byte twice). A line longer
   * than that (rare: a huge tool result) keeps the rest as copied pieces, joined at its end or handed to
   * the cutter, so no buffer grown for one line outlives it.
   */
  private carry = new Uint8Array(0)
  private carried = 0
  private pieces: Uint8Array[] = []
  private pendingLength = 0
  /** The current line's fate: undefined while fewer than LinePrefix bytes are known. */
  private keep: boolean | undefined = undefined
  /** A kept line past the long-line limit, being cut as it arrives. */
  private long: LongLineCompactor | undefined = undefined
  private most = 0

  constructor(
    private readonly onLine: (line: Uint8Array) => void,
    private readonly filter?: LineFilter,
    private readonly limits: SplitLimits = {
      longLineBytes: LONG_LINE_BYTES,
      longStringBytes: LONG_STRING_BYTES,
    },
  ) {}

  /** The most bytes of one line this splitter ever held at once (a test's bound on memory). */
  get mostHeldBytes(): number {
    return this.most
  }

  push(chunk: Uint8Array): void {
    let at = 0
    while (at < chunk.length) {
      const nl = chunk.indexOf(10, at)
      const stop = nl < 0 ? chunk.length : nl
      if (this.pendingLength === 0 && this.keep === undefined && nl >= 0) {
        // The whole line lies in this chunk: decide and decode it without copying.
        const line = chunk.subarray(at, stop)
        if (this.wanted(line)) this.emit(line.length > this.limits.longLineBytes ? this.cutWhole(line) : line)
      } else {
        this.feed(chunk.subarray(at, stop))
        if (nl >= 0) this.finishLine()
      }
      at = nl < 0 ? chunk.length : nl + 1
    }
  }

  /** Flush a last line that had no newline. */
  end(): void {
    if (this.pendingLength > 0 || this.keep !== undefined) this.finishLine()
  }

  private wanted(line: Uint8Array): boolean {
    if (line.length === 0) return false
    return (
      this.filter === undefined || this.filter(line.length > LinePrefix ? line.subarray(0, LinePrefix) : line)
    )
  }

  /** Part of a line that spans chunks. */
  private feed(part: Uint8Array): void {
    if (this.keep === false || part.length === 0) return
    if (this.long !== undefined) {
      this.long.push(part)
      this.most = Math.max(this.most, this.long.heldBytes)
      return
    }
    // Own the bytes: the chunk may be reused by its producer.
    this.append(part)
    this.most = Math.max(this.most, this.pendingLength)
    if (this.keep === undefined && this.pendingLength >= LinePrefix) {
      this.keep = this.wanted(this.joined(LinePrefix))
      if (!this.keep) this.reset(false)
    }
    if (this.keep === true && this.pendingLength > this.limits.longLineBytes) {
      // From here on the line is cut as it arrives: what was held goes through the cutter first.
      this.long = new LongLineCompactor(this.limits.longStringBytes)
      this.long.push(this.carry.subarray(0, this.carried))
      for (const piece of this.pieces) this.long.push(piece)
      this.pieces = []
      this.carried = 0
      this.pendingLength = 0
    }
  }

  private append(part: Uint8Array): void {
    if (this.pieces.length === 0 && this.carried + part.length <= CARRY_BYTES) {
      const need = this.carried + part.length
      if (need > this.carry.length) {
        const grown = new Uint8Array(Math.min(CARRY_BYTES, Math.max(need, 2 * this.carry.length, 64 * 1024)))
        grown.set(this.carry.subarray(0, this.carried))
        this.carry = grown
      }
      this.carry.set(part, this.carried)
      this.carried = need
    } else this.pieces.push(new Uint8Array(part)) // a copy: a Buffer's `slice` is a view
    this.pendingLength += part.length
  }

  /** The first `length` pending bytes as one array (valid until the next push). */
  private joined(length: number): Uint8Array {
    if (length <= this.carried) return this.carry.subarray(0, length)
    const out = new Uint8Array(length)
    out.set(this.carry.subarray(0, this.carried))
    let at = this.carried
    for (const piece of this.pieces) {
      const take = Math.min(piece.length, length - at)
      out.set(piece.subarray(0, take), at)
      at += take
      if (at === length) break
    }
    return out
  }

  /** A whole long line that arrived in one chunk, cut. */
  private cutWhole(line: Uint8Array): Uint8Array {
    const cutter = new LongLineCompactor(this.limits.longStringBytes)
    cutter.push(line)
    return cutter.finish()
  }

  private finishLine(): void {
    if (this.long !== undefined) {
      this.emit(this.long.finish())
      this.long = undefined
    } else if (this.keep !== false && this.pendingLength > 0) {
      const line = this.joined(this.pendingLength)
      if (this.keep === true || this.wanted(line)) this.emit(line)
    }
    this.reset(undefined)
  }

  private reset(keep: boolean | undefined): void {
    this.long = undefined
    this.pendingLength = 0
    this.carried = 0
    this.pieces = []
    this.keep = keep
  }

  private emit(line: Uint8Array): void {
    const end = line.length > 0 && line[line.length - 1] === 13 ? line.length - 1 : line.length
    this.onLine(line.subarray(0, end))
  }
}

/** The most a splitter's carry buffer grows to (a longer line's rest is kept in pieces). */
const CARRY_BYTES = 1024 * 1024

/**
 * Stream a file's lines as bytes into `onLine`, keeping only lines `filter`
 * accepts. Returns false when the file is missing or ungranted. A read error
 * mid-file ends the scan where it got to.
 */
export const forEachLineBytes = (
  path: string,
  onLine: (line: Uint8Array) => void,
  filter?: LineFilter,
  start = 0,
): Effect.Effect<boolean, never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    // Lent chunks: the splitter copies every byte it keeps past a push, and `onLine` uses its line at once.
    const bytes = yield* fs.stream(path, start, { lend: true })
    if (bytes === null) return false
    const splitter = new LineSplitter(onLine, filter)
    yield* bytes.pipe(
      Stream.runForEach((chunk) => Effect.sync(() => splitter.push(chunk))),
      Effect.catchCause(() => Effect.void),
    )
    splitter.end()
    return true
  })

/** Stream a file's lines as text into `onLine` (see forEachLineBytes). */
export const forEachLine = (
  path: string,
  onLine: (line: string) => void,
  filter?: LineFilter,
  start = 0,
): Effect.Effect<boolean, never, Fs> =>
  forEachLineBytes(path, (bytes) => onLine(decodeText(bytes)), filter, start)

/** Every line of a file (whole lines, a torn last line included), or null. */
export const readLines = (path: string, filter?: LineFilter): Effect.Effect<string[] | null, never, Fs> =>
  Effect.gen(function* () {
    const lines: string[] = []
    const found = yield* forEachLine(path, (line) => lines.push(line), filter)
    return found ? lines : null
  })

/**
 * Every line of a JSONL file parsed, in order; a line that is not JSON (a
 * torn last line, a stray write) is left out. Null when the file is missing.
 */
export const readJsonl = (path: string, filter?: LineFilter): Effect.Effect<unknown[] | null, never, Fs> =>
  Effect.gen(function* () {
    const records: unknown[] = []
    const found = yield* forEachLine(
      path,
      (line) => {
        try {
          records.push(JSON.parse(line))
        } catch {
          // torn or foreign line
        }
      },
      filter,
    )
    return found ? records : null
  })

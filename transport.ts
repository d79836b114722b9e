/**
 * The line transport of one `claude` process, acquired and stopped in a
 * Scope: spawned through the broker's Process service, stdout split into
 * lines and decoded one by one, writes serialized, the last lines of stderr
 * kept for the exit notice. Closing the scope ends the process and lets the
 * reader finish the output still queued before it lets go.
 *
 * Rules:
 * - a line past 4 MiB (files.ts `LONG_LINE_BYTES`: a huge tool result) is
 *   never held whole: it is cut as it streams, each string past 256 KiB
 *   shortened with its size said, and delivered as the frame it still is
 *   (live-lines.ts, the stored transcript's rule);
 * - a bad line is exactly one diagnostic (`onBadLine`), never the end of the
 *   stream: not JSON, a frame its schema rejects, a line over the cap even
 *   cut (skipped to its newline, never held: bounds.ts), invalid UTF-8, two
 *   frames glued on one line (both delivered), a field dropped from a frame
 *   (the rest delivered), a handler that failed;
 * - stderr is read with its own smaller cap and kept as a bounded tail.
 */
import { Deferred, Effect, Fiber, type Scope, Semaphore, Stream } from "effect"
import {
  MAX_LINE_BYTES,
  MAX_STDERR_LINE_BYTES,
  STDERR_LINE_CHARS,
  STDERR_TAIL_LINES,
  excerpt,
} from "./bounds.ts"
import { ProcessExited } from "./errors.ts"
import { liveLines } from "./live-lines.ts"
import { boundedLines, frameLine, type Line } from "./sdk/lines.ts"
import { type BrokerError, Process, type ProcessExit } from "./sdk/plugin-api.ts"

/** What a decoder makes of one stdout line (wire.decodeLine has this shape). */
export type DecodedLine<F> =
  /** `problem`: the frame was kept but something in it was dropped (one diagnostic). */
  | { readonly kind: "frame"; readonly frame: F; readonly problem?: string }
  /** Several frames glued on one line: each delivered, the gluing (and any bad piece) one diagnostic. */
  | {
      readonly kind: "frames"
      readonly frames: ReadonlyArray<F>
      readonly problem: string
      readonly requestId?: string
    }
  | { readonly kind: "blank" }
  /** `requestId`: the line was a control request the peer waits on (passed along, never read here). */
  | { readonly kind: "error"; readonly message: string; readonly requestId?: string }

export interface TransportOptions<F> {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd?: string
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly decode: (line: string) => DecodedLine<F>
  /** Called for each frame, in order, on the reader fiber. */
  readonly onFrame: (frame: F) => Effect.Effect<void>
  /** Called once per line that is not a valid frame (or whose handling died). */
  readonly onBadLine: (message: string, line: string, requestId?: string) => Effect.Effect<void>
  /** How many stderr lines to keep (default 20). */
  readonly stderrLines?: number
  /** The longest stdout line held, whole or cut (default bounds.ts `MAX_LINE_BYTES`). */
  readonly maxLineBytes?: number
  /** From this size on a stdout line is cut as it streams (default files.ts `LONG_LINE_BYTES`). */
  readonly longLineBytes?: number
  /** What a cut line keeps of each string (default files.ts `LONG_STRING_BYTES`). */
  readonly longStringBytes?: number
  /** How long closing waits for the reader to drain (default 2 s). */
  readonly drainMs?: number
}

export interface Transport {
  readonly pid: number | undefined
  /** Write one frame as one line. Writes never interleave. */
  readonly send: (frame: unknown) => Effect.Effect<void, ProcessExited>
  /** The last lines the process wrote to stderr. */
  readonly stderrTail: () => string
  /** Completes once the process has exited and its stdout has been read to the end. */
  readonly closed: Effect.Effect<ProcessExit>
  readonly kill: Effect.Effect<void>
}

const MAX_LINE_CHARS_IN_DIAGNOSTIC = 200

/** What one stdout line gives: the frames to deliver, and at most one diagnostic for the line. */
export interface ReadLine<F> {
  readonly frames: ReadonlyArray<F>
  readonly diagnostic?: { readonly message: string; readonly requestId?: string }
}

const invalidUtf8 = "invalid UTF-8 (read with U+FFFD)"

/**
 * One line read by the rules above: a line over the cap gives only its
 * diagnostic; invalid UTF-8 is said once, with whatever else the line had.
 */
export const readLine = <F>(line: Line, decode: (text: string) => DecodedLine<F>): ReadLine<F> => {
  const { text, problem } = line
  if (problem?.kind === "too_long")
    return {
      frames: [],
      diagnostic: {
        message: `a line of ${problem.bytes} bytes is over the ${problem.maxBytes}-byte cap: skipped to its newline`,
      },
    }
  const withUtf8 = (message: string | undefined): string | undefined =>
    problem === undefined ? message : message === undefined ? invalidUtf8 : `${invalidUtf8}; ${message}`
  const decoded = decode(text)
  const said = (frames: ReadonlyArray<F>, message: string | undefined, requestId?: string): ReadLine<F> =>
    message === undefined
      ? { frames }
      : { frames, diagnostic: requestId === undefined ? { message } : { message, requestId } }
  switch (decoded.kind) {
    case "blank":
      return said([], withUtf8(undefined))
    case "error":
      return said([], withUtf8(decoded.message), decoded.requestId)
    case "frame":
      return said([decoded.frame], withUtf8(decoded.problem))
    case "frames":
      return said(decoded.frames, withUtf8(decoded.problem), decoded.requestId)
  }
}

export const openTransport = <F>(
  options: TransportOptions<F>,
): Effect.Effect<Transport, BrokerError, Scope.Scope | Process> =>
  Effect.gen(function* () {
    const process = yield* Process
    // Lent: the line splitter copies what it keeps past each chunk (live-lines.ts, sdk/lines.ts).
    const handle = yield* process.spawn(options.command, options.args, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
      stdout: { lend: true },
    })
    const keep = options.stderrLines ?? STDERR_TAIL_LINES
    const stderr: string[] = []
    const writes = yield* Semaphore.make(1)
    const drained = yield* Deferred.make<void>()
    const stderrDrained = yield* Deferred.make<void>()

    const bad = (message: string, line: string, requestId?: string) =>
      options.onBadLine(message, line.slice(0, MAX_LINE_CHARS_IN_DIAGNOSTIC), requestId)

    const deliver = (frame: F, line: string): Effect.Effect<void> =>
      options
        .onFrame(frame)
        .pipe(Effect.catchCause((cause) => bad(`handling a frame failed: ${excerpt(String(cause))}`, line)))

    const handleLine = (line: Line): Effect.Effect<void> => {
      const { diagnostic, frames } = readLine(line, options.decode)
      const deliverAll =
        frames.length === 0
          ? Effect.void
          : Effect.forEach(frames, (frame) => deliver(frame, line.text), { discard: true })
      return diagnostic === undefined
        ? deliverAll
        : bad(diagnostic.message, line.text, diagnostic.requestId).pipe(Effect.andThen(deliverAll))
    }

    const reader = yield* liveLines(handle.stdout, {
      maxLineBytes: options.maxLineBytes ?? MAX_LINE_BYTES,
      ...(options.longLineBytes === undefined ? {} : { longLineBytes: options.longLineBytes }),
      ...(options.longStringBytes === undefined ? {} : { longStringBytes: options.longStringBytes }),
    }).pipe(
      Stream.runForEach(handleLine),
      Effect.ensuring(Deferred.succeed(drained, undefined)),
      Effect.forkScoped,
    )
    yield* boundedLines(handle.stderr, MAX_STDERR_LINE_BYTES).pipe(
      Stream.runForEach(({ text, problem }) =>
        Effect.sync(() => {
          if (text.trim() === "") return
          const shown = problem?.kind === "too_long" ? `${text}… (a line of ${problem.bytes} bytes)` : text
          stderr.push(excerpt(shown, STDERR_LINE_CHARS))
          if (stderr.length > keep) stderr.shift()
        }),
      ),
      Effect.ensuring(Deferred.succeed(stderrDrained, undefined)),
      Effect.forkScoped,
    )

    const stderrTail = () => stderr.join("\n")
    const drainMs = options.drainMs ?? 2_000

    // Added after the reader fork, so it runs first: stop the process, then let
    // the reader finish what the process already wrote.
    yield* Effect.addFinalizer(() =>
      handle
        .kill()
        .pipe(
          Effect.andThen(
            Fiber.await(reader).pipe(Effect.timeoutOrElse({ duration: drainMs, orElse: () => Effect.void })),
          ),
          Effect.ignore,
        ),
    )

    const closed = handle.exit.pipe(
      // The exit notice needs the last stderr lines and the run its last frames: read both to the end.
      Effect.tap(() =>
        Effect.all([Deferred.await(drained), Deferred.await(stderrDrained)]).pipe(
          Effect.timeoutOrElse({ duration: drainMs, orElse: () => Effect.void }),
        ),
      ),
    )

    const send = (frame: unknown): Effect.Effect<void, ProcessExited> =>
      writes.withPermits(1)(
        handle
          .write(frameLine(frame))
          .pipe(
            Effect.mapError(
              (error) =>
                new ProcessExited({ code: null, signal: null, stderr: stderrTail() || error.detail }),
            ),
          ),
      )

    return {
      pid: handle.pid,
      send,
      stderrTail,
      closed,
      kill: handle.kill(),
    } satisfies Transport
  })

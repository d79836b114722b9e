/**
 * The line transport of one `claude` process, acquired and stopped in a
 * Scope: spawned through the broker's Process service, stdout split into
 * lines and decoded one by one (a bad line is one diagnostic, never the end
 * of the stream), writes serialized, the last lines of stderr kept for the
 * exit notice. Closing the scope ends the process and lets the reader finish
 * the output still queued before it lets go.
 */
import { Deferred, Effect, Fiber, type Scope, Semaphore, Stream } from "effect"
import { ProcessExited } from "./errors.ts"
import { frameLine, lines } from "./sdk/lines.ts"
import { type BrokerError, Process, type ProcessExit } from "./sdk/plugin-api.ts"

/** What a decoder makes of one stdout line (wire.decodeLine has this shape). */
export type DecodedLine<F> =
  | { readonly kind: "frame"; readonly frame: F }
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

export const openTransport = <F>(
  options: TransportOptions<F>,
): Effect.Effect<Transport, BrokerError, Scope.Scope | Process> =>
  Effect.gen(function* () {
    const process = yield* Process
    const handle = yield* process.spawn(options.command, options.args, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      ...(options.env !== undefined ? { env: options.env } : {}),
    })
    const keep = options.stderrLines ?? 20
    const stderr: string[] = []
    const writes = yield* Semaphore.make(1)
    const drained = yield* Deferred.make<void>()
    const stderrDrained = yield* Deferred.make<void>()

    const handleLine = (line: string): Effect.Effect<void> => {
      const decoded = options.decode(line)
      switch (decoded.kind) {
        case "blank":
          return Effect.void
        case "error":
          return options.onBadLine(
            decoded.message,
            line.slice(0, MAX_LINE_CHARS_IN_DIAGNOSTIC),
            decoded.requestId,
          )
        case "frame":
          return options
            .onFrame(decoded.frame)
            .pipe(
              Effect.catchCause((cause) =>
                options.onBadLine(
                  `handling a frame failed: ${String(cause)}`,
                  line.slice(0, MAX_LINE_CHARS_IN_DIAGNOSTIC),
                ),
              ),
            )
      }
    }

    const reader = yield* lines(handle.stdout).pipe(
      Stream.runForEach(handleLine),
      Effect.ensuring(Deferred.succeed(drained, undefined)),
      Effect.forkScoped,
    )
    yield* lines(handle.stderr).pipe(
      Stream.runForEach((line) =>
        Effect.sync(() => {
          if (line.trim() === "") return
          stderr.push(line)
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

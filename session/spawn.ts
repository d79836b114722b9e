/**
 * One launch of a session's `claude` process: its launch read (arguments,
 * environment, the silence bound), the spawn, the reader, the silence watch
 * and `initialize`. The keeper (session/process.ts) decides when to launch
 * and what a process's end means; this file only starts one.
 *
 * The reader runs before `initialize` is written, because the CLI's MCP
 * `initialize` for our server arrives before its answer. An initialize
 * answer that fails its schema is one warning; the process stays. An
 * unreadable line is one warning; if it was a control request, the CLI gets
 * an error answer to it rather than waiting for ever. A launch the session's
 * close overtakes fails with a clear error and leaves no process.
 */
import { type Context, Deferred, Effect, Exit, Scope } from "effect"
import { LaunchFailed, ProcessExited } from "../errors.ts"
import { type Broker, type BrokerError, Env, type ProcessExit } from "../sdk/plugin-api.ts"
import { type DecodedLine, openTransport, type Transport } from "../transport.ts"
import type { StartMode } from "../types.ts"
import type { Frame, InitializeResponse } from "../wire.ts"
import type { SessionContext } from "./context.ts"
import { type ControlChannel, makeControlChannel } from "./control.ts"
import { initializeRequest } from "./launch.ts"
import type { RunLedger } from "./runs.ts"
import { apiTimeoutOf, makeSilenceWatch, silenceBound } from "./silence.ts"

/** What one launch runs: computed by the agent at every launch (knobs are read fresh). */
export interface PreparedLaunch {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly appendSystemPrompt?: string | undefined
}

export interface LiveProcess {
  readonly scope: Scope.Closeable
  readonly channel: ControlChannel
  /** Write one frame (a user message) to its stdin. */
  readonly send: (frame: unknown) => Effect.Effect<void, ProcessExited>
  exited: boolean
  /** Closed on purpose (close, restart, abort): its exit is not news. */
  stopping: boolean
  /** How long a run on this process may stay silent (session/silence.ts). */
  readonly silenceMs: number
  /** Frames read from it so far (a write it never answered: none after it). */
  heard: number
  /** It answered `initialize`: its launch succeeded. */
  initialized: boolean
}

/** What a launch needs from the session. */
export interface SpawnOptions {
  readonly ctx: SessionContext
  readonly sessionScope: Scope.Scope
  /** The broker services the reader carries (it runs outside any caller). */
  readonly services: Context.Context<Broker>
  readonly cwd: string
  /** The launch declares the host's plugin tools (its MCP server). */
  readonly hasTools: () => boolean
  readonly initializeMs: number
  readonly controlMs: number
  /** How the next process joins its conversation. */
  readonly start: () => StartMode
  readonly prepare: (start: StartMode) => Effect.Effect<PreparedLaunch, LaunchFailed, Broker>
  readonly decodeLine: (line: string) => DecodedLine<Frame>
  readonly route: (channel: ControlChannel) => (frame: Frame) => Effect.Effect<void, never, Broker>
  readonly runs: RunLedger
  readonly initialized: ((answer: InitializeResponse) => Effect.Effect<void, never, Broker>) | undefined
  /** A fixed silence bound (tests); otherwise it comes from the CLI's `API_TIMEOUT_MS`. */
  readonly silenceMs: number | undefined
  /** An approval or question waits for the user (the CLI is not silent then: it waits too). */
  readonly awaitingUser: () => boolean
}

/** What the keeper and its launches share: the process in charge and what a close marks. */
export interface ProcessSlot {
  proc: LiveProcess | undefined
  /** The session is closing: no launch may start or finish from now on. */
  closing: boolean
  /** A spawn waiting for its answer: a close waits for it, then the launch kills what it got. */
  spawning: Deferred.Deferred<void> | undefined
}

/** The keeper's answers to a launched process's end. */
export interface ProcessEnds {
  /** Its exit, seen on the session's fiber. */
  readonly exited: (
    state: LiveProcess,
    exit: ProcessExit,
    stderr: string,
  ) => Effect.Effect<void, never, Broker>
  /** It stopped answering (silent past its bound). */
  readonly abort: (state: LiveProcess, why: string) => Effect.Effect<void, never, Broker>
  /** Stop it on purpose (its `initialize` failed). */
  readonly stop: (state: LiveProcess) => Effect.Effect<void>
}

/** The process's silence watch; a silent turn aborts it on the session's fiber (the abort closes the loop's own scope). */
const watchSilence = (
  options: SpawnOptions,
  silenceMs: number,
  abort: (why: string) => Effect.Effect<void, never, Broker>,
) =>
  makeSilenceWatch({
    silenceMs,
    watching: () => options.runs.current() !== undefined && !options.awaitingUser(),
    onSilent: (silentMs) =>
      options.ctx
        .fork(
          Effect.provideContext(
            abort(`Claude Code sent nothing for ${Math.round(silentMs / 1000)} s during a turn`),
            options.services,
          ),
        )
        .pipe(Effect.asVoid),
  })

/**
 * The launch's own reads, and the login API_TIMEOUT_MS (the silence bound)
 * beside them: each is a broker round trip before the spawn.
 */
const prepareWithSilence = (options: SpawnOptions) =>
  Effect.all(
    [
      options.prepare(options.start()),
      options.silenceMs === undefined
        ? Effect.gen(function* () {
            return yield* (yield* Env).get("API_TIMEOUT_MS")
          })
        : Effect.succeed(undefined),
    ],
    { concurrency: "unbounded" },
  ).pipe(
    Effect.map(([prepared, loginTimeout]) => ({
      prepared,
      silenceMs: options.silenceMs ?? silenceBound(apiTimeoutOf(prepared.env.API_TIMEOUT_MS ?? loginTimeout)),
    })),
  )

/** What a launch the session's close overtook fails with. */
const closedWhileStarting = () =>
  new LaunchFailed({ detail: "the session was closed while Claude Code was starting" })

/** Launch one process; the keeper adopts it (`slot.proc`) once it is spawned. */
export const launchProcess = (options: SpawnOptions, slot: ProcessSlot, ends: ProcessEnds) =>
  Effect.fn("claude.session.launch")(function* () {
    const { ctx } = options
    const { prepared, silenceMs } = yield* prepareWithSilence(options)
    if (slot.closing) return yield* closedWhileStarting()
    const scope = yield* Scope.fork(options.sessionScope)
    // The channel writes through the transport opened just below.
    let transport: Transport | undefined
    const send = (frame: unknown): Effect.Effect<void, ProcessExited> =>
      transport && !state.exited
        ? transport.send(frame).pipe(
            // A write the pipe refused: the process is gone, whether or not its exit was seen yet.
            Effect.tapError(() =>
              Effect.sync(() => {
                state.exited = true
              }),
            ),
          )
        : Effect.fail(new ProcessExited({ code: null, signal: null, stderr: transport?.stderrTail() ?? "" }))
    const channel = makeControlChannel({ send, timeoutMs: options.controlMs })
    const state: LiveProcess = {
      scope,
      channel,
      send,
      exited: false,
      stopping: false,
      silenceMs,
      heard: 0,
      initialized: false,
    }
    const route = options.route(channel)
    const silence = watchSilence(options, silenceMs, (why) => ends.abort(state, why))
    const onFrame = (frame: Frame) => {
      state.heard++
      silence.onFrame(frame)
      return route(frame)
    }
    const spawned = Deferred.makeUnsafe<void>()
    slot.spawning = spawned
    const opened = yield* openTransport<Frame>({
      command: "claude",
      args: prepared.args,
      cwd: options.cwd,
      env: prepared.env,
      decode: options.decodeLine,
      onFrame: (frame) => Effect.provideContext(onFrame(frame), options.services),
      onBadLine: (message, line, requestId) =>
        ctx.log.warn(`claude session ${ctx.sid}: unreadable line from the CLI (${message})`, line).pipe(
          // An unreadable control request still gets its answer: the CLI waits for one.
          Effect.andThen(
            requestId === undefined
              ? Effect.void
              : channel.refuse(requestId, `convergence/claude could not read this request (${message})`),
          ),
        ),
    }).pipe(
      Scope.provide(scope),
      Effect.mapError((error: BrokerError) => new LaunchFailed({ detail: error.message })),
      Effect.tapError(() => Scope.close(scope, Exit.void)),
      Effect.ensuring(
        Effect.suspend(() => {
          if (slot.spawning === spawned) slot.spawning = undefined
          return Deferred.succeed(spawned, undefined)
        }),
      ),
      Effect.mapError((error) => (slot.closing ? closedWhileStarting() : error)),
    )
    transport = opened
    if (slot.closing) {
      yield* opened.kill
      yield* Scope.close(scope, Exit.void)
      return yield* closedWhileStarting()
    }
    slot.proc = state
    yield* ctx.fork(
      opened.closed.pipe(Effect.flatMap((exit) => ends.exited(state, exit, opened.stderrTail()))),
    )
    yield* silence.loop.pipe(Effect.forkIn(scope))
    // The reader already runs: the CLI's MCP initialize comes before this answer.
    const answer = yield* channel
      .request(
        "initialize",
        initializeRequest({ hasTools: options.hasTools(), appendSystemPrompt: prepared.appendSystemPrompt }),
        options.initializeMs,
      )
      .pipe(
        Effect.map((decoded): InitializeResponse | undefined => decoded),
        Effect.catchTag("ControlAnswerInvalid", (error) =>
          ctx.log.warn(`claude session ${ctx.sid}: ${error.message}`).pipe(Effect.as(undefined)),
        ),
        Effect.tapError(() => ends.stop(state)),
        Effect.mapError((error) => (slot.closing ? closedWhileStarting() : error)),
      )
    state.initialized = true
    if (answer !== undefined && options.initialized) yield* options.initialized(answer)
    return state
  })

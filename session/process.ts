/**
 * The process lifecycle of one session: at most one `claude` process at a
 * time, each in its own scope under the session's.
 *
 * - Launch: the arguments are computed at every launch (the agent reads its
 *   knobs fresh); the reader runs before `initialize` is written, because the
 *   CLI's MCP `initialize` for our server arrives before its answer. An
 *   initialize answer that fails its schema is one warning; the process stays.
 * - An unreadable line is one warning; if it was a control request, the CLI
 *   gets an error answer to it rather than waiting for ever.
 * - A process that exits fails every control request still waiting (its
 *   channel's `failAll`), drops the open approvals and questions, and fails
 *   the run in flight with the last lines of stderr (or ends it Cancelled
 *   when cancel was under way). An exit we caused (stop) is not news.
 * - A process that stopped answering (silent past the CLI's own bounds:
 *   session/silence.ts; or an `interrupt` left unanswered) is aborted: its
 *   run ends at once (Failed, or Cancelled when cancel was under way) with a
 *   notice saying why, the process is killed and a new one is started on
 *   the conversation. Its waiting inputs are reported unknown at the abort:
 *   its exit comes after the session moved on, and reports nothing.
 * - Inputs a process had and never showed the model took are reported
 *   unknown at its exit, except one a replay carries to the next process.
 * - Abandon (close): every waiter, `initialize` included, fails at once. A
 *   launch the close overtakes fails with a clear error and leaves no
 *   process: before its spawn it never spawns; during it, the close waits
 *   for the spawn's answer and the launch kills what it spawned.
 */
import { type Context, Deferred, Effect, Exit, Scope } from "effect"
import { LaunchFailed, ProcessExited, type SessionError } from "../errors.ts"
import { initializeRequest } from "./launch.ts"
import { type Broker, type BrokerError, Env, type ProcessExit } from "../sdk/plugin-api.ts"
import { type DecodedLine, openTransport, type Transport } from "../transport.ts"
import type { StartMode } from "../types.ts"
import type { Frame, InitializeResponse } from "../wire.ts"
import type { Approvals } from "./approvals.ts"
import type { SessionContext } from "./context.ts"
import { type ControlChannel, makeControlChannel } from "./control.ts"
import { deliveryEvent, type PickupTracker } from "./pickup.ts"
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

export interface ProcessKeeper {
  /** The process now running (not exited), if any. */
  readonly current: () => LiveProcess | undefined
  /** The running process, or a new one launched with `start()`; `fresh` says which. */
  readonly ensure: Effect.Effect<
    { readonly proc: LiveProcess; readonly fresh: boolean },
    SessionError,
    Broker
  >
  /** Stop the running process on purpose. */
  readonly stop: Effect.Effect<void>
  /** The session closes: the running process's exit is not news either. */
  readonly markStopping: () => void
  /** The process stopped answering: end its run now, kill it, start another (`why` says what happened). */
  readonly abort: (state: LiveProcess, why: string) => Effect.Effect<void, never, Broker>
  /** The session closes: every request still waiting (an `initialize` in flight) fails now. */
  readonly abandon: Effect.Effect<void>
}

export interface ProcessOptions {
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
  readonly approvals: Approvals
  readonly pickup: PickupTracker
  readonly notice: (level: "warning" | "error", text: string) => Effect.Effect<void>
  readonly initialized: ((answer: InitializeResponse) => Effect.Effect<void, never, Broker>) | undefined
  /** A fixed silence bound (tests); otherwise it comes from the CLI's `API_TIMEOUT_MS`. */
  readonly silenceMs: number | undefined
  /** An approval or question waits for the user (the CLI is not silent then: it waits too). */
  readonly awaitingUser: () => boolean
  /** Start a process again after an abort (the owner serializes it with prompts). */
  readonly relaunch: Effect.Effect<void>
  /** The process died: the owner's replay of a prompt it left unread, if any (started after the exit's reports). */
  readonly unread: (
    state: LiveProcess,
  ) => Effect.Effect<Effect.Effect<void, never, Broker> | undefined, never, Broker>
  /** The conversation's next try should the CLI refuse a launch's (session/conversation.ts). */
  readonly fallback: {
    readonly pending: () => boolean
    readonly refused: (stderr: string) => Effect.Effect<boolean, never, Broker>
    readonly launched: () => void
  }
}

/** The process's silence watch; a silent turn aborts it on the session's fiber (the abort closes the loop's own scope). */
const watchSilence = (
  options: ProcessOptions,
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

/** Inputs still waiting when their process ends: nothing can prove their delivery any more. */
export const reportUnknown = (
  options: Pick<ProcessOptions, "ctx" | "pickup" | "runs">,
  reason: string,
  alsoHeld = false,
): Effect.Effect<void> =>
  Effect.suspend(() =>
    options.ctx.emitAll(
      options.pickup
        .processEnded(reason, alsoHeld)
        .map((report) => deliveryEvent(options.ctx.sid, report, options.runs.current()?.id)),
    ),
  )

/**
 * The launch's own reads, and the login API_TIMEOUT_MS (the silence bound)
 * beside them: each is a broker round trip before the spawn.
 */
const prepareWithSilence = (options: ProcessOptions) =>
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

export const makeProcessKeeper = (options: ProcessOptions): ProcessKeeper => {
  const { ctx, runs } = options
  let proc: LiveProcess | undefined
  /** The session is closing: no launch may start or finish from now on. */
  let closing = false
  /** A spawn waiting for its answer: a close waits for it, then the launch kills what it got. */
  let spawning: Deferred.Deferred<void> | undefined

  const onExit = (state: LiveProcess, exit: ProcessExit, stderr: string) =>
    Effect.gen(function* () {
      state.exited = true
      const error = new ProcessExited({ code: exit.code, signal: exit.signal, stderr })
      yield* state.channel.failAll(error)
      if (proc !== state) return
      proc = undefined
      // A launch the CLI refused, with a next try to come: that launch goes on, this exit is no news.
      if (!state.initialized && options.fallback.pending()) return
      const run = runs.current()
      // A prompt the process died without reading: the owner writes it to a new one instead
      // (decided first, so its input is held back from this process's unknown reports).
      const replay = !state.stopping && run && !run.cancelling ? yield* options.unread(state) : undefined
      yield* reportUnknown(options, "the Claude Code process ended before it showed the model took it")
      runs.forgetSent()
      yield* options.approvals.settleAll("the Claude Code process ended")
      if (state.stopping) return
      const resumes = `${error.message}. The next prompt resumes the conversation.`
      if (replay) return yield* replay
      if (run) {
        const cancelled = run.cancelling
        yield* runs.end(run, cancelled ? "Cancelled" : "Failed", cancelled ? {} : { error: error.message })
        if (!cancelled) yield* options.notice("error", resumes)
      } else if (exit.code !== 0) yield* options.notice("warning", resumes)
    })

  const abort = (state: LiveProcess, why: string) =>
    Effect.gen(function* () {
      // Only the process in charge: an old one's late timeout must not end a newer one's run.
      if (state.stopping || state.exited || proc !== state) return
      state.stopping = true
      proc = undefined
      yield* reportUnknown(options, "Claude Code stopped answering before it showed the model took it")
      runs.forgetSent()
      yield* options.approvals.settleAll("the Claude Code process stopped answering")
      const run = runs.current()
      const text = `${why}: Claude Code was restarted on the conversation.`
      if (run) {
        const cancelled = run.cancelling
        yield* runs.end(run, cancelled ? "Cancelled" : "Failed", cancelled ? {} : { error: text })
      }
      yield* options.notice("error", text)
      yield* state.channel.failAll(new ProcessExited({ code: null, signal: "SIGKILL", stderr: why }))
      yield* Scope.close(state.scope, Exit.void)
      yield* options.relaunch
    })

  const stopProcess = (state: LiveProcess) =>
    Effect.suspend(() => {
      state.stopping = true
      if (proc === state) proc = undefined
      return Scope.close(state.scope, Exit.void)
    })

  const launch = Effect.fn("claude.session.launch")(function* () {
    const { prepared, silenceMs } = yield* prepareWithSilence(options)
    if (closing) return yield* closedWhileStarting()
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
    const silence = watchSilence(options, silenceMs, (why) => abort(state, why))
    const onFrame = (frame: Frame) => {
      state.heard++
      silence.onFrame(frame)
      return route(frame)
    }
    const spawned = Deferred.makeUnsafe<void>()
    spawning = spawned
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
          if (spawning === spawned) spawning = undefined
          return Deferred.succeed(spawned, undefined)
        }),
      ),
      Effect.mapError((error) => (closing ? closedWhileStarting() : error)),
    )
    transport = opened
    if (closing) {
      yield* opened.kill
      yield* Scope.close(scope, Exit.void)
      return yield* closedWhileStarting()
    }
    proc = state
    yield* ctx.fork(opened.closed.pipe(Effect.flatMap((exit) => onExit(state, exit, opened.stderrTail()))))
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
        Effect.tapError(() => stopProcess(state)),
        Effect.mapError((error) => (closing ? closedWhileStarting() : error)),
      )
    state.initialized = true
    if (answer !== undefined && options.initialized) yield* options.initialized(answer)
    return state
  })

  /** Launch; should the CLI refuse the conversation and a next try exist, launch that. */
  const launchTrying: Effect.Effect<LiveProcess, SessionError, Broker> = Effect.suspend(() =>
    launch().pipe(
      Effect.tap(() => Effect.sync(options.fallback.launched)),
      Effect.catchTag("ProcessExited", (exited) =>
        Effect.flatMap(options.fallback.refused(exited.stderr), (again) =>
          again ? launchTrying : Effect.fail(exited),
        ),
      ),
    ),
  )

  const ensure = Effect.suspend(() =>
    proc && !proc.exited
      ? Effect.succeed({ proc, fresh: false })
      : launchTrying.pipe(Effect.map((launched) => ({ proc: launched, fresh: true }))),
  )

  return {
    current: () => (proc && !proc.exited ? proc : undefined),
    ensure,
    stop: Effect.suspend(() => (proc ? stopProcess(proc) : Effect.void)),
    markStopping: () => {
      closing = true
      if (proc) proc.stopping = true
    },
    abort,
    abandon: Effect.suspend(() =>
      Effect.andThen(spawning ? Deferred.await(spawning) : Effect.void, () =>
        proc
          ? proc.channel.failAll(
              new ProcessExited({ code: null, signal: "SIGTERM", stderr: "the session closed" }),
            )
          : Effect.void,
      ),
    ),
  }
}

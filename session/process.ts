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
 */
import { type Context, Effect, Exit, Scope } from "effect"
import { LaunchFailed, ProcessExited, type SessionError } from "../errors.ts"
import { initializeRequest } from "../launch.ts"
import type { Broker, BrokerError, ProcessExit } from "../sdk/plugin-api.ts"
import { type DecodedLine, openTransport, type Transport } from "../transport.ts"
import type { StartMode } from "../types.ts"
import type { Frame, InitializeResponse } from "../wire.ts"
import type { Approvals } from "./approvals.ts"
import type { SessionContext } from "./context.ts"
import { type ControlChannel, makeControlChannel } from "./control.ts"
import type { RunLedger } from "./runs.ts"

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
  /** Closed on purpose (close, restart): its exit is not news. */
  stopping: boolean
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
}

export interface ProcessOptions {
  readonly ctx: SessionContext
  readonly sessionScope: Scope.Scope
  /** The broker services the reader carries (it runs outside any caller). */
  readonly services: Context.Context<Broker>
  readonly cwd: string
  readonly hasTools: boolean
  readonly initializeMs: number
  readonly controlMs: number
  /** How the next process joins its conversation. */
  readonly start: () => StartMode
  readonly prepare: (start: StartMode) => Effect.Effect<PreparedLaunch, LaunchFailed, Broker>
  readonly decodeLine: (line: string) => DecodedLine<Frame>
  readonly route: (channel: ControlChannel) => (frame: Frame) => Effect.Effect<void, never, Broker>
  readonly runs: RunLedger
  readonly approvals: Approvals
  readonly notice: (level: "warning" | "error", text: string) => Effect.Effect<void>
  readonly initialized: ((answer: InitializeResponse) => Effect.Effect<void, never, Broker>) | undefined
}

export const makeProcessKeeper = (options: ProcessOptions): ProcessKeeper => {
  const { ctx, runs } = options
  let proc: LiveProcess | undefined

  const onExit = (state: LiveProcess, exit: ProcessExit, stderr: string) =>
    Effect.gen(function* () {
      state.exited = true
      const error = new ProcessExited({ code: exit.code, signal: exit.signal, stderr })
      yield* state.channel.failAll(error)
      if (proc !== state) return
      proc = undefined
      runs.forgetSent()
      yield* options.approvals.settleAll("the Claude Code process ended")
      if (state.stopping) return
      const run = runs.current()
      const resumes = `${error.message}. The next prompt resumes the conversation.`
      if (run) {
        const cancelled = run.cancelling
        yield* runs.end(run, cancelled ? "Cancelled" : "Failed", cancelled ? {} : { error: error.message })
        if (!cancelled) yield* options.notice("error", resumes)
      } else if (exit.code !== 0) yield* options.notice("warning", resumes)
    })

  const stopProcess = (state: LiveProcess) =>
    Effect.suspend(() => {
      state.stopping = true
      if (proc === state) proc = undefined
      return Scope.close(state.scope, Exit.void)
    })

  const launch = Effect.fn("claude.session.launch")(function* () {
    const prepared = yield* options.prepare(options.start())
    const scope = yield* Scope.fork(options.sessionScope)
    // The channel writes through the transport opened just below.
    let transport: Transport | undefined
    const send = (frame: unknown): Effect.Effect<void, ProcessExited> =>
      transport && !state.exited
        ? transport.send(frame)
        : Effect.fail(new ProcessExited({ code: null, signal: null, stderr: transport?.stderrTail() ?? "" }))
    const channel = makeControlChannel({ send, timeoutMs: options.controlMs })
    const state: LiveProcess = { scope, channel, send, exited: false, stopping: false }
    const onFrame = options.route(channel)
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
    )
    transport = opened
    proc = state
    yield* ctx.fork(opened.closed.pipe(Effect.flatMap((exit) => onExit(state, exit, opened.stderrTail()))))
    // The reader already runs: the CLI's MCP initialize comes before this answer.
    const answer = yield* channel
      .request(
        "initialize",
        initializeRequest({ hasTools: options.hasTools, appendSystemPrompt: prepared.appendSystemPrompt }),
        options.initializeMs,
      )
      .pipe(
        Effect.map((decoded): InitializeResponse | undefined => decoded),
        Effect.catchTag("ControlAnswerInvalid", (error) =>
          ctx.log.warn(`claude session ${ctx.sid}: ${error.message}`).pipe(Effect.as(undefined)),
        ),
        Effect.tapError(() => stopProcess(state)),
      )
    if (answer !== undefined && options.initialized) yield* options.initialized(answer)
    return state
  })

  const ensure = Effect.suspend(() =>
    proc && !proc.exited
      ? Effect.succeed({ proc, fresh: false })
      : launch().pipe(Effect.map((launched) => ({ proc: launched, fresh: true }))),
  )

  return {
    current: () => (proc && !proc.exited ? proc : undefined),
    ensure,
    stop: Effect.suspend(() => (proc ? stopProcess(proc) : Effect.void)),
    markStopping: () => {
      if (proc) proc.stopping = true
    },
  }
}

/**
 * One live Claude session: one `claude` process at a time, spoken to over
 * stream-json and the control protocol. This file is the composition root:
 * it builds the parts in session/ and answers the agent's calls with them.
 *
 * - session/control.ts: typed control requests, one pending map, one close path.
 * - session/approvals.ts: approvals and questions (open, answer, withdraw, settle all).
 * - session/runs.ts: the run ledger (open, end once, cancel watchdog, fence, delivery ids).
 * - session/mcp-bridge.ts: the host's plugin tools as the CLI's SDK MCP server.
 * - session/process.ts: launch, exit, stop; session/frames.ts: every frame routed.
 * - session/pickup.ts: pickup evidence; session/undelivered.ts: its durable record.
 * - workflow/follow.ts: dynamic workflows' agent files, read while they run.
 *
 * Rules: a prompt during a run steers it (`priority: "next"`); cancel
 * interrupts, rejects the open approvals and questions, and ends the run
 * Cancelled at its `result` or after a watchdog; a process that does not
 * answer the `interrupt` in time is killed and started again; a process that
 * exits fails its run and the next prompt resumes the conversation it left
 * (`--resume`), but only a conversation the CLI stored (`recover`): one it
 * never wrote starts anew under the same id, and the host is told. A prompt
 * whose write finds the process gone is written once more to a new process
 * (same uuid and delivery id). Close settles every open approval and
 * question, fails an `initialize` in flight at once, and reports `unknown`
 * each input still waiting (its process's exit may be cut short by the
 * close), a replay's held one included. Every input is in the durable
 * record (session/undelivered.ts) from before its write to its report.
 * The owner's record of the session (`own`) is built from the LiveSession
 * before makeSession returns, so every hook is handed it: nothing is bound
 * late (no hook can run before: nothing launches until ensureProcess or prompt).
 */
import { Effect, Exit, Scope, Semaphore } from "effect"
import type { LaunchFailed, SessionError } from "./errors.ts"
import type { Mapper, Signal } from "./map.ts"
import { type Broker, Log } from "./sdk/plugin-api.ts"
import type {
  AgentEvent,
  ApprovalAnswer,
  PluginTool,
  PromptAccepted,
  PromptParams,
  QuestionAnswer,
  UsageLimits,
} from "./sdk/protocol.ts"
import { makeCancels } from "./session/cancel.ts"
import { makeConversationStart, type Recovery } from "./session/conversation.ts"
import { makeUnreadReplay } from "./session/replay.ts"
import { forgettingReported, makeUndeliveredRecord, undeliveredEntry } from "./session/undelivered.ts"
import { assembleParts } from "./session/parts.ts"
import { type PreparedLaunch, type ProcessKeeper, reportUnknown } from "./session/process.ts"
import type { DecodedLine } from "./transport.ts"
import type { StartMode } from "./types.ts"
import {
  type ControlAnswer,
  type ControlSubtype,
  decodeLine as decodeWireLine,
  type Frame,
  type InitializeResponse,
} from "./wire.ts"

export type { Frame } from "./wire.ts"
export type { PreparedLaunch } from "./session/process.ts"
export type { Recovery } from "./session/conversation.ts"
export { refusedConversation } from "./session/conversation.ts"
export { questionsOf } from "./session/approvals.ts"

/** The live mapper of one conversation (map.ts). */
export type SessionMapper = Mapper
export type MapSignal = Signal

export interface SessionTimeouts {
  /** A control request's answer (default 30 s). */
  readonly controlMs: number
  /** The answer to `initialize` (default 60 s). */
  readonly initializeMs: number
  /** Cancel's watchdog: the run ends Cancelled after this even if the CLI is silent (default 10 s). */
  readonly cancelMs: number
  /** The answer to `interrupt`; past it the process is killed and started again (default 3 s; 2.1.332 answers at once). */
  readonly interruptMs: number
  /** A fixed silence bound; unset, it comes from the CLI's `API_TIMEOUT_MS` (session/silence.ts). */
  readonly silenceMs?: number | undefined
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = {
  controlMs: 30_000,
  initializeMs: 60_000,
  cancelMs: 10_000,
  interruptMs: 3_000,
}

/** What the owner hears, each hook handed the owner's record `R` of this session. */
export interface SessionHooks<R> {
  /** The decoded answer to `initialize` of each launch (the catalog). */
  readonly initialized?: (answer: InitializeResponse, record: R) => Effect.Effect<void, never, Broker>
  /** A prompt was written: its host item id and the native UUID it went with. */
  readonly sent?: (
    input: { readonly itemId: string | undefined; readonly uuid: string; readonly cliId: string },
    record: R,
  ) => Effect.Effect<void, never, Broker>
  /** A run ended (skills are re-read here). */
  readonly runEnded?: (record: R) => Effect.Effect<void, never, Broker>
  /** A process is up (after initialize), on its own fiber. */
  readonly launched?: (record: R) => Effect.Effect<void, never, Broker>
  readonly usageLimits?: (limits: UsageLimits, record: R) => Effect.Effect<void, never, Broker>
  /**
   * Before a launch that would `--resume` a conversation only because a prompt was written
   * to it: is it stored? (The CLI may have died before writing it.) Absent: resume.
   */
  readonly recover?: (guess: StartMode, record: R) => Effect.Effect<Recovery, never, Broker>
  /** Does the conversation's transcript hold the prompt sent with `uuid`? (Absent: a dead process's unread prompt is never replayed.) */
  readonly stored?: (cliId: string, uuid: string, record: R) => Effect.Effect<boolean, never, Broker>
}

export interface SessionSetup<R = LiveSession> {
  /** The host's id for the chat (every event carries it). */
  readonly hostId: string
  readonly cwd: string
  readonly tools: ReadonlyArray<PluginTool>
  readonly instructions?: string | undefined
  /** How the first process joins its conversation. */
  readonly start: StartMode
  /** Arguments and environment of a launch, computed when it happens. */
  readonly prepareLaunch: (start: StartMode, record: R) => Effect.Effect<PreparedLaunch, LaunchFailed, Broker>
  readonly makeMapper: (cliId: string) => SessionMapper
  /** stdout line → frame (default: wire.ts `decodeLine`). */
  readonly decodeLine?: (line: string) => DecodedLine<Frame>
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  /** The content blocks of a prompt (images, text, a closing skill block). */
  readonly promptContent?: (params: PromptParams) => ReadonlyArray<unknown>
  /** How often and how far apart a finished workflow's record is looked for (the CLI writes it late). */
  readonly workflowRecord?: { readonly attempts?: number; readonly delayMs?: number }
  readonly hooks?: SessionHooks<R>
  readonly timeouts?: Partial<SessionTimeouts>
}

export interface LiveSession {
  readonly hostId: string
  /** The id the CLI files the conversation under. */
  readonly cliId: () => string
  /** The run in flight, if any. */
  readonly runId: () => string | undefined
  readonly isRunning: () => boolean
  /** Start the process now if none runs (create_session does this). */
  readonly ensureProcess: Effect.Effect<void, SessionError, Broker>
  readonly prompt: (params: PromptParams) => Effect.Effect<PromptAccepted, SessionError, Broker>
  readonly cancel: Effect.Effect<void, never, Broker>
  readonly cancelTask: (taskId: string) => Effect.Effect<void, SessionError, Broker>
  /** `modeFor`: given the approval's tool, a permission mode an allow also switches to (a plan accepted). */
  readonly answerApproval: (
    answer: ApprovalAnswer,
    modeFor?: (toolName: string) => string | undefined,
  ) => Effect.Effect<void, SessionError, Broker>
  readonly answerQuestion: (answer: QuestionAnswer) => Effect.Effect<void, SessionError, Broker>
  /** A control request to the running process, its answer decoded (none running: nothing is sent, undefined). */
  readonly request: <S extends ControlSubtype>(
    subtype: S,
    fields?: Readonly<Record<string, unknown>>,
    timeoutMs?: number,
  ) => Effect.Effect<ControlAnswer<S> | undefined, SessionError, Broker>
  /** Stop the process and start again in another mode (rewind). */
  readonly restart: (start: StartMode) => Effect.Effect<void, SessionError, Broker>
  /** The host's plugin tools from the next launch on (the running process keeps its own). */
  readonly setTools: (tools: ReadonlyArray<PluginTool>) => void
  /** Stop the process and release everything. */
  readonly close: Effect.Effect<void>
  readonly emitNotice: (level: "info" | "warning" | "error", text: string) => Effect.Effect<void>
  /** Frames of kinds this plugin does not read, counted by kind (`type` or `system/<subtype>`). */
  readonly unknownFrames: () => ReadonlyMap<string, number>
}

/** The stream-json user frame for one input. */
export const userFrame = (
  content: ReadonlyArray<unknown>,
  uuid: string,
  priority?: "next",
): Record<string, unknown> => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  uuid,
  session_id: "",
  ...(priority ? { priority } : {}),
})

const defaultContent = (params: PromptParams): ReadonlyArray<unknown> => [
  ...(params.images ?? []).map((image) => ({
    type: "image",
    source: { type: "base64", media_type: image.media_type, data: image.data },
  })),
  ...(params.text !== "" || !params.images?.length ? [{ type: "text", text: params.text }] : []),
]

/** A session whose hooks get the LiveSession itself. */
export const makeSession = (setup: SessionSetup): Effect.Effect<LiveSession, never, Scope.Scope | Broker> =>
  makeOwnedSession(setup, (live) => live)

/** A session whose owner keeps its own record `R`, built once from the LiveSession; hooks get it. */
/** A control request to the running process, its answer decoded (none running: nothing is sent, undefined). */
const requestOn =
  (processes: ProcessKeeper) =>
  <S extends ControlSubtype>(
    subtype: S,
    fields?: Readonly<Record<string, unknown>>,
    timeoutMs?: number,
  ): Effect.Effect<ControlAnswer<S> | undefined, SessionError, Broker> =>
    Effect.suspend(() => {
      const proc = processes.current()
      return proc ? proc.channel.request(subtype, fields, timeoutMs) : Effect.succeed(undefined)
    })

export const makeOwnedSession = <R>(
  setup: SessionSetup<R>,
  own: (live: LiveSession) => R,
): Effect.Effect<R, never, Scope.Scope | Broker> =>
  Effect.gen(function* () {
    const log = yield* Log
    const sessionScope = yield* Scope.fork(yield* Effect.scope)
    const timeouts: SessionTimeouts = { ...DEFAULT_TIMEOUTS, ...setup.timeouts }
    const admission = yield* Semaphore.make(1)
    const sid = setup.hostId
    // The reader runs outside any caller: it carries the broker services with it.
    const services = yield* Effect.context<Broker>()

    let closed = false
    /** The plugin tools the next launch declares, and those of the process launched last. */
    let tools = setup.tools
    let launchedTools = setup.tools
    /** After an abort: a new process on the conversation, on the session's fiber (set below). */
    let relaunch: Effect.Effect<void> = Effect.void
    const { launched, initialized, sent, runEnded, usageLimits, recover, stored } = setup.hooks ?? {}
    const undelivered = makeUndeliveredRecord(sid)
    const emit = forgettingReported(undelivered, setup.emit, services)
    const { ctx, runs, approvals, processes, unknown, pickup, notice } = yield* assembleParts({
      sid,
      log,
      emit,
      sessionScope,
      services,
      mapper: setup.makeMapper(setup.start.cliId),
      cwd: setup.cwd,
      tools: () => launchedTools,
      controlMs: timeouts.controlMs,
      initializeMs: timeouts.initializeMs,
      workflowRecord: setup.workflowRecord,
      start: () => conversation.current(),
      prepare: (): Effect.Effect<PreparedLaunch, LaunchFailed, Broker> =>
        Effect.flatMap(conversation.forLaunch, (start) => {
          launchedTools = tools
          return setup.prepareLaunch(start, record)
        }),
      decodeLine: setup.decodeLine ?? decodeWireLine,
      hooks: {
        initialized: initialized && ((answer) => initialized(answer, record)),
        runEnded: runEnded && (() => runEnded(record)),
        usageLimits: usageLimits && ((limits) => usageLimits(limits, record)),
      },
      silenceMs: timeouts.silenceMs,
      relaunch: Effect.suspend(() => relaunch),
      unread: (proc) => Effect.suspend(() => replays.unread(proc)),
      fallback: {
        pending: () => conversation.hasFallback(),
        refused: (stderr) => Effect.suspend(() => conversation.refused(stderr)),
        launched: () => conversation.launched(),
      },
    })
    const conversation = makeConversationStart(
      setup.start,
      recover && ((guess) => recover(guess, record)),
      (text) => notice("warning", text),
    )

    /** The owner's after-launch work (skills, the ultracode check): on its own fiber, never delaying a prompt. */
    const afterLaunch = (fresh: boolean) =>
      fresh && launched ? ctx.fork(launched(record)).pipe(Effect.asVoid) : Effect.void

    const replays = makeUnreadReplay({
      ctx,
      runs,
      pickup,
      processes: () => processes,
      admission,
      cliId: () => conversation.current().cliId,
      stored: stored && ((cliId, uuid) => stored(cliId, uuid, record)),
      afterLaunch,
      written: () => conversation.written(),
    })

    const ensureProcess = Effect.fn("claude.session.ensureProcess")(function* () {
      const { fresh } = yield* processes.ensure
      yield* afterLaunch(fresh)
    })

    relaunch = Effect.suspend(() =>
      closed
        ? Effect.void
        : ctx
            .fork(Effect.provideContext(admission.withPermits(1)(ensureProcess()), services))
            .pipe(Effect.asVoid),
    )

    const prompt = Effect.fn("claude.session.prompt")(function* (params: PromptParams) {
      const { proc, fresh } = yield* processes.ensure
      yield* afterLaunch(fresh)
      const uuid = crypto.randomUUID()
      const running = runs.current()
      const steering = running !== undefined && !running.cancelling
      const current = steering ? running : yield* runs.open(params.deliveryId ? [params.deliveryId] : [])
      // A steer's delivery id joins the run that reports consuming it (user_message_uuids).
      runs.sent({ uuid, deliveryId: params.deliveryId, runId: current.id })
      yield* undelivered.add(undeliveredEntry(uuid, params.deliveryId, current.id))
      pickup.written({ uuid, deliveryId: params.deliveryId, runId: current.id })
      const content = (setup.promptContent ?? defaultContent)(params)
      const input = { uuid, deliveryId: params.deliveryId, run: current, frame: userFrame(content, uuid) }
      yield* replays.write(proc, input, steering ? userFrame(content, uuid, "next") : undefined)
      const cliId = conversation.current().cliId
      conversation.written()
      if (sent) yield* sent({ itemId: params.itemId, uuid, cliId }, record)
      return { run_id: current.id, steered: steering, input_uuid: uuid } satisfies PromptAccepted
    })

    const request = requestOn(processes)

    const { cancel, cancelTask } = makeCancels({ ctx, runs, approvals, processes, timeouts })

    const restart = Effect.fn("claude.session.restart")(function* (next: StartMode) {
      const current = runs.current()
      if (current) yield* runs.end(current, "Cancelled")
      yield* approvals.settleAll("the conversation was rewound")
      yield* processes.stop
      yield* reportUnknown({ ctx, pickup, runs }, "the conversation was restarted before the model took it")
      runs.forgetSent()
      if (next.cliId !== conversation.current().cliId) ctx.mapper = setup.makeMapper(next.cliId)
      conversation.set(next)
      yield* processes.ensure
      yield* afterLaunch(true)
    })

    const close = Effect.fn("claude.session.close")(function* () {
      if (closed) return
      closed = true
      processes.markStopping()
      yield* approvals.settleAll("the session closed")
      // An initialize in flight fails now instead of waiting out its timeout.
      yield* processes.abandon
      // Closing lets the reader finish what the process already wrote (a last result).
      yield* Scope.close(sessionScope, Exit.void)
      yield* runs.closeCurrent
      yield* reportUnknown({ ctx, pickup, runs }, "the session closed before the model took it", true)
      yield* undelivered.settled
    })

    const session: LiveSession = {
      hostId: sid,
      cliId: () => conversation.current().cliId,
      runId: () => runs.current()?.id,
      isRunning: () => processes.current() !== undefined,
      ensureProcess: Effect.suspend(() => admission.withPermits(1)(ensureProcess())),
      prompt: (params) => admission.withPermits(1)(prompt(params)),
      cancel: Effect.suspend(() => cancel()),
      cancelTask,
      answerApproval: (answer, mode) => approvals.answerApproval(answer, processes.current()?.channel, mode),
      answerQuestion: (answer) => approvals.answerQuestion(answer, processes.current()?.channel),
      request,
      restart: (next) => admission.withPermits(1)(restart(next)),
      setTools: (next) => {
        tools = next
      },
      close: Effect.suspend(() => close()),
      emitNotice: notice,
      unknownFrames: unknown.counts,
    }
    const record = own(session)
    return record
  })

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
 * - workflow-follow.ts: dynamic workflows' agent files, read while they run.
 *
 * Rules: a prompt during a run steers it (`priority: "next"`); cancel
 * interrupts, rejects the open approvals and questions, and ends the run
 * Cancelled at its `result` or after a watchdog; a process that exits fails
 * its run and the next prompt resumes the conversation it left (`--resume`).
 * The owner's record of the session (`own`) is built from the LiveSession
 * before makeSession returns, so every hook is handed it: nothing is bound
 * late (no hook can run before: nothing launches until ensureProcess or prompt).
 */
import { Effect, Exit, Scope, Semaphore } from "effect"
import type { LaunchFailed, SessionError } from "./errors.ts"
import { TaskNotFound, TaskNotStoppable } from "./errors.ts"
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
import { assembleParts } from "./session/parts.ts"
import type { PreparedLaunch } from "./session/process.ts"
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
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { controlMs: 30_000, initializeMs: 60_000, cancelMs: 10_000 }

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
  readonly answerApproval: (answer: ApprovalAnswer) => Effect.Effect<void, SessionError, Broker>
  readonly answerQuestion: (answer: QuestionAnswer) => Effect.Effect<void, SessionError, Broker>
  /** A control request to the running process, its answer decoded (none running: nothing is sent, undefined). */
  readonly request: <S extends ControlSubtype>(
    subtype: S,
    fields?: Readonly<Record<string, unknown>>,
    timeoutMs?: number,
  ) => Effect.Effect<ControlAnswer<S> | undefined, SessionError, Broker>
  /** Stop the process and start again in another mode (rewind). */
  readonly restart: (start: StartMode) => Effect.Effect<void, SessionError, Broker>
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

/** Once a user message is written the conversation has a file: later launches resume it. */
const nextStartAfterWrite = (start: StartMode): StartMode => ({ kind: "resume", cliId: start.cliId })

/** A session whose hooks get the LiveSession itself. */
export const makeSession = (setup: SessionSetup): Effect.Effect<LiveSession, never, Scope.Scope | Broker> =>
  makeOwnedSession(setup, (live) => live)

/** A session whose owner keeps its own record `R`, built once from the LiveSession; hooks get it. */
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

    let start: StartMode = setup.start
    let closed = false
    const { launched, initialized, sent, runEnded, usageLimits } = setup.hooks ?? {}
    const { ctx, runs, approvals, processes, unknown, notice } = yield* assembleParts({
      sid,
      log,
      emit: setup.emit,
      sessionScope,
      services,
      mapper: setup.makeMapper(start.cliId),
      cwd: setup.cwd,
      tools: setup.tools,
      controlMs: timeouts.controlMs,
      initializeMs: timeouts.initializeMs,
      workflowRecord: setup.workflowRecord,
      start: () => start,
      prepare: (next) => setup.prepareLaunch(next, record),
      decodeLine: setup.decodeLine ?? decodeWireLine,
      hooks: {
        initialized: initialized && ((answer) => initialized(answer, record)),
        runEnded: runEnded && (() => runEnded(record)),
        usageLimits: usageLimits && ((limits) => usageLimits(limits, record)),
      },
    })

    /** The owner's after-launch work (skills, the ultracode check): on its own fiber, never delaying a prompt. */
    const afterLaunch = (fresh: boolean) =>
      fresh && launched ? ctx.fork(launched(record)).pipe(Effect.asVoid) : Effect.void

    const ensureProcess = Effect.fn("claude.session.ensureProcess")(function* () {
      const { fresh } = yield* processes.ensure
      yield* afterLaunch(fresh)
    })

    const prompt = Effect.fn("claude.session.prompt")(function* (params: PromptParams) {
      const { proc, fresh } = yield* processes.ensure
      yield* afterLaunch(fresh)
      const uuid = crypto.randomUUID()
      const running = runs.current()
      const steering = running !== undefined && !running.cancelling
      const current = steering ? running : yield* runs.open(params.deliveryId ? [params.deliveryId] : [])
      // A steer's delivery id joins the run that reports consuming it (user_message_uuids).
      runs.sent({ uuid, deliveryId: params.deliveryId, runId: current.id })
      const content = (setup.promptContent ?? defaultContent)(params)
      yield* proc
        .send(userFrame(content, uuid, steering ? "next" : undefined))
        .pipe(
          Effect.tapError((error) =>
            steering ? Effect.void : runs.end(current, "Failed", { error: error.message }),
          ),
        )
      const cliId = start.cliId
      start = nextStartAfterWrite(start)
      if (sent) yield* sent({ itemId: params.itemId, uuid, cliId }, record)
      return { run_id: current.id, steered: steering } satisfies PromptAccepted
    })

    const cancel = Effect.fn("claude.session.cancel")(function* () {
      const current = runs.current()
      if (!current || current.cancelling) return
      current.cancelling = true
      const proc = processes.current()
      yield* approvals.settleAll("cancelled", proc?.channel)
      if (!proc) return yield* runs.end(current, "Cancelled")
      yield* ctx.fork(proc.channel.request("interrupt"))
      yield* runs.armWatchdog(current, timeouts.cancelMs)
    })

    const request = <S extends ControlSubtype>(
      subtype: S,
      fields?: Readonly<Record<string, unknown>>,
      timeoutMs?: number,
    ): Effect.Effect<ControlAnswer<S> | undefined, SessionError, Broker> =>
      Effect.suspend(() => {
        const proc = processes.current()
        return proc ? proc.channel.request(subtype, fields, timeoutMs) : Effect.succeed(undefined)
      })

    const cancelTask = Effect.fn("claude.session.cancelTask")(function* (taskId: string) {
      const task = ctx.mapper.agentForTask(taskId)
      const proc = processes.current()
      if (!task || !proc) return yield* Effect.fail(new TaskNotFound({ taskId }))
      if (task.kind === "workflow_agent")
        return yield* Effect.fail(
          new TaskNotStoppable({
            taskId,
            reason: "A workflow agent cannot be stopped on its own: stop the whole workflow instead",
          }),
        )
      yield* proc.channel.request("stop_task", { task_id: task.agentId })
    })

    const restart = Effect.fn("claude.session.restart")(function* (next: StartMode) {
      const current = runs.current()
      if (current) yield* runs.end(current, "Cancelled")
      yield* approvals.settleAll("the conversation was rewound")
      yield* processes.stop
      runs.forgetSent()
      if (next.cliId !== start.cliId) ctx.mapper = setup.makeMapper(next.cliId)
      start = next
      yield* processes.ensure
      yield* afterLaunch(true)
    })

    const close = Effect.fn("claude.session.close")(function* () {
      if (closed) return
      closed = true
      processes.markStopping()
      // Closing lets the reader finish what the process already wrote (a last result).
      yield* Scope.close(sessionScope, Exit.void)
      yield* runs.closeCurrent
    })

    const session: LiveSession = {
      hostId: sid,
      cliId: () => start.cliId,
      runId: () => runs.current()?.id,
      isRunning: () => processes.current() !== undefined,
      ensureProcess: Effect.suspend(() => admission.withPermits(1)(ensureProcess())),
      prompt: (params) => admission.withPermits(1)(prompt(params)),
      cancel: Effect.suspend(() => cancel()),
      cancelTask,
      answerApproval: (answer) => approvals.answerApproval(answer, processes.current()?.channel),
      answerQuestion: (answer) => approvals.answerQuestion(answer, processes.current()?.channel),
      request,
      restart: (next) => admission.withPermits(1)(restart(next)),
      close: Effect.suspend(() => close()),
      emitNotice: notice,
      unknownFrames: unknown.counts,
    }
    const record = own(session)
    return record
  })

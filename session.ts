/**
 * One live Claude session: one `claude` process at a time, spoken to over
 * stream-json and the control protocol.
 *
 * - Launch: the arguments come from the agent (launch.ts + options + knobs),
 *   read fresh at every launch; `initialize` is sent once the reader runs
 *   (the CLI's MCP `initialize` arrives before its answer).
 * - Control requests both ways, correlated by request_id; everything still
 *   pending fails in one place when the process ends.
 * - Runs open at a prompt, or when the CLI begins a turn by itself
 *   (`session_state_changed running`, `system/init`, `can_use_tool`), and
 *   end exactly once. A prompt during a run steers it (`priority: "next"`).
 * - Cancel interrupts, rejects the open approvals and questions, and ends
 *   the run Cancelled at the `result` or after a watchdog.
 * - A process that exits fails its run; the next prompt resumes the
 *   conversation it left (`--resume`).
 */
import { Deferred, Effect, Exit, Fiber, Scope, Semaphore } from "effect"
import {
  ApprovalNotFound,
  ControlRefused,
  ControlTimeout,
  LaunchFailed,
  ProcessExited,
  type SessionError,
  TaskNotFound,
  TaskNotStoppable,
} from "./errors.ts"
import { initializeRequest, MCP_SERVER_NAME } from "./launch.ts"
import { type DecodedLine, openTransport, type Transport } from "./transport.ts"
import type { PendingRequest, RunState, SentInput, StartMode } from "./types.ts"
import type { Mapper, Signal } from "./map.ts"
import type { Frame as WireFrame } from "./wire.ts"
import { readWorkflowRecord, WorkflowTail } from "./workflow.ts"
import { handleMcp, type JsonRpcMessage } from "./sdk/mcp.ts"
import { type Broker, type BrokerError, Host, Log, type ProcessExit } from "./sdk/plugin-api.ts"
import type {
  AgentEvent,
  ApprovalAnswer,
  PluginTool,
  PromptAccepted,
  PromptParams,
  Question,
  QuestionAnswer,
  RunOutcome,
  RunUsage,
  UsageLimits,
} from "./sdk/protocol.ts"

// ---------------------------------------------------------------------------
// What the session needs from the mapper (map.ts) and the agent

/** A decoded stdout frame: at least a `type`. */
export type Frame = { readonly type: string } & Readonly<Record<string, unknown>>

/** The live mapper of one conversation (map.ts). */
export type SessionMapper = Mapper
export type MapSignal = Signal

/** What one launch runs: computed by the agent at every launch (knobs are read fresh). */
export interface PreparedLaunch {
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string | undefined>>
  readonly appendSystemPrompt?: string | undefined
}

export interface SessionTimeouts {
  /** A control request's answer (default 30 s). */
  readonly controlMs: number
  /** The answer to `initialize` (default 60 s). */
  readonly initializeMs: number
  /** Cancel's watchdog: the run ends Cancelled after this even if the CLI is silent (default 10 s). */
  readonly cancelMs: number
}

export const DEFAULT_TIMEOUTS: SessionTimeouts = { controlMs: 30_000, initializeMs: 60_000, cancelMs: 10_000 }

export interface SessionSetup {
  /** The host's id for the chat (every event carries it). */
  readonly hostId: string
  readonly cwd: string
  readonly tools: ReadonlyArray<PluginTool>
  readonly instructions?: string | undefined
  /** How the first process joins its conversation. */
  readonly start: StartMode
  /** Arguments and environment of a launch, computed when it happens. */
  readonly prepareLaunch: (start: StartMode) => Effect.Effect<PreparedLaunch, LaunchFailed, Broker>
  readonly makeMapper: (cliId: string) => SessionMapper
  readonly decodeLine: (line: string) => DecodedLine<Frame>
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  /** The content blocks of a prompt (images, text, a closing skill block). */
  readonly promptContent?: (params: PromptParams) => ReadonlyArray<unknown>
  /** How often and how far apart a finished workflow's record is looked for (the CLI writes it late). */
  readonly workflowRecord?: { readonly attempts?: number; readonly delayMs?: number }
  readonly hooks?: {
    /** The answer to `initialize` of each launch (the catalog). */
    readonly initialized?: (response: Readonly<Record<string, unknown>>) => Effect.Effect<void, never, Broker>
    /** A prompt was written: its host item id and the native UUID it went with. */
    readonly sent?: (input: {
      readonly itemId: string | undefined
      readonly uuid: string
      readonly cliId: string
    }) => Effect.Effect<void, never, Broker>
    /** A run ended (skills are re-read here). */
    readonly runEnded?: () => Effect.Effect<void, never, Broker>
    /** A process is up (after initialize). */
    readonly launched?: (session: LiveSession) => Effect.Effect<void, never, Broker>
    readonly usageLimits?: (limits: UsageLimits) => Effect.Effect<void, never, Broker>
  }
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
  /** A control request to the running process (none running: nothing is sent, undefined). */
  readonly request: (
    subtype: string,
    fields?: Readonly<Record<string, unknown>>,
    timeoutMs?: number,
  ) => Effect.Effect<Readonly<Record<string, unknown>> | undefined, SessionError, Broker>
  /** Stop the process and start again in another mode (rewind). */
  readonly restart: (start: StartMode) => Effect.Effect<void, SessionError, Broker>
  /** Stop the process and release everything. */
  readonly close: Effect.Effect<void>
  readonly emitNotice: (level: "info" | "warning" | "error", text: string) => Effect.Effect<void>
}

// ---------------------------------------------------------------------------
// Internal state

interface FollowedWorkflow {
  readonly taskId: string
  runId?: string
  outputFile?: string
  transcriptDir?: string
  tail: WorkflowTail | undefined
  /** Records of agents no snapshot has named yet. */
  readonly unrouted: Map<string, unknown[]>
  finished: boolean
}

interface ProcessState {
  readonly scope: Scope.Closeable
  transport: Transport | undefined
  readonly pending: Map<
    string,
    {
      readonly subtype: string
      readonly answer: Deferred.Deferred<Readonly<Record<string, unknown>>, SessionError>
    }
  >
  exited: boolean
  /** Closed on purpose (close, restart): its exit is not news. */
  stopping: boolean
}

const asRecord = (value: unknown): Readonly<Record<string, unknown>> =>
  value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

const asString = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** AskUserQuestion input → the protocol's questions. */
export const questionsOf = (input: Readonly<Record<string, unknown>>): Question[] => {
  const list = Array.isArray(input.questions) ? input.questions : []
  return list.map((raw) => {
    const q = asRecord(raw)
    const options = Array.isArray(q.options) ? q.options : []
    const header = asString(q.header)
    return {
      question: asString(q.question) ?? "",
      ...(header !== undefined ? { header } : {}),
      multi_select: q.multiSelect === true || q.multi_select === true,
      options: options.map((rawOption) => {
        const o = asRecord(rawOption)
        const description = asString(o.description)
        return { label: asString(o.label) ?? "", ...(description !== undefined ? { description } : {}) }
      }),
    }
  })
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

const nextStartAfterWrite = (start: StartMode): StartMode => ({ kind: "resume", cliId: start.cliId })

// ---------------------------------------------------------------------------

export const makeSession = (setup: SessionSetup): Effect.Effect<LiveSession, never, Scope.Scope | Broker> =>
  Effect.gen(function* () {
    const log = yield* Log
    const host = yield* Host
    const sessionScope = yield* Scope.fork(yield* Effect.scope)
    const timeouts: SessionTimeouts = { ...DEFAULT_TIMEOUTS, ...setup.timeouts }
    const admission = yield* Semaphore.make(1)
    const sid = setup.hostId
    // The reader runs outside any caller: it carries the broker services with it.
    const services = yield* Effect.context<Broker>()

    let start: StartMode = setup.start
    let mapper = setup.makeMapper(start.cliId)
    let proc: ProcessState | undefined
    let run: RunState | undefined
    let requestCounter = 0
    let closed = false
    const requests = new Map<string, PendingRequest>()
    /** Inputs written whose consumption the CLI has not reported yet. */
    const sent = new Map<string, SentInput>()
    /** Runs that ended Cancelled, whose late results must not end a later run (the last few). */
    const cancelledRuns = new Set<string>()
    const rememberCancelled = (runId: string) => {
      cancelledRuns.add(runId)
      if (cancelledRuns.size > 16) cancelledRuns.delete(cancelledRuns.values().next().value as string)
    }

    const emit = (event: AgentEvent) => setup.emit(event)
    const emitAll = (events: ReadonlyArray<AgentEvent>) => Effect.forEach(events, emit, { discard: true })
    const emitNotice = (level: "info" | "warning" | "error", text: string) =>
      emit({ type: "Notice", session_id: sid, ...(run ? { run_id: run.id } : {}), level, text })

    /** Workflow runs followed while they last: their agents' transcript files. */
    const workflows = new Map<string, FollowedWorkflow>()

    /** Run `effect` on its own fiber, owned by the session. */
    const fork = <A, E>(effect: Effect.Effect<A, E, Broker>) =>
      effect.pipe(
        Effect.catchCause((cause) =>
          log.warn(`claude session ${sid}: background work failed`, String(cause)),
        ),
        Effect.forkIn(sessionScope),
      )

    // -- runs -----------------------------------------------------------------

    const openRun = (deliveryIds: ReadonlyArray<string>): Effect.Effect<RunState> =>
      Effect.gen(function* () {
        const opened: RunState = {
          id: crypto.randomUUID(),
          deliveryIds: [...deliveryIds],
          cancelling: false,
          watchdog: undefined,
          ended: false,
        }
        run = opened
        yield* emit({
          type: "RunStarted",
          session_id: sid,
          run_id: opened.id,
          ...(deliveryIds.length > 0 ? { delivery_ids: [...deliveryIds] } : {}),
        })
        return opened
      })

    /** End a run exactly once. */
    const endRun = (
      target: RunState,
      outcome: RunOutcome,
      extra: { readonly usage?: RunUsage | undefined; readonly error?: string | undefined } = {},
    ): Effect.Effect<void, never, Broker> =>
      Effect.gen(function* () {
        if (target.ended) return
        target.ended = true
        if (outcome === "Cancelled") rememberCancelled(target.id)
        if (run === target) run = undefined
        const watchdog = target.watchdog
        target.watchdog = undefined
        yield* emit({
          type: "RunEnded",
          session_id: sid,
          run_id: target.id,
          outcome,
          ...(extra.usage ? { usage: extra.usage } : {}),
          ...(extra.error ? { error: extra.error } : {}),
          ...(target.deliveryIds.length > 0 ? { delivery_ids: [...target.deliveryIds] } : {}),
        })
        if (setup.hooks?.runEnded) yield* fork(setup.hooks.runEnded())
        // Last: the watchdog may be the fiber running this very code.
        if (watchdog) yield* Fiber.interrupt(watchdog).pipe(Effect.forkDetach)
      })

    // -- control requests to the CLI -------------------------------------------

    const sendOn = (state: ProcessState, frame: unknown): Effect.Effect<void, ProcessExited> =>
      state.transport && !state.exited
        ? state.transport.send(frame)
        : Effect.fail(
            new ProcessExited({ code: null, signal: null, stderr: state.transport?.stderrTail() ?? "" }),
          )

    const requestOn = (
      state: ProcessState,
      subtype: string,
      fields: Readonly<Record<string, unknown>> = {},
      timeoutMs: number = timeouts.controlMs,
    ): Effect.Effect<Readonly<Record<string, unknown>>, SessionError> =>
      Effect.gen(function* () {
        const requestId = `req_${++requestCounter}_${crypto.randomUUID().slice(0, 8)}`
        const answer = yield* Deferred.make<Readonly<Record<string, unknown>>, SessionError>()
        state.pending.set(requestId, { subtype, answer })
        return yield* sendOn(state, {
          type: "control_request",
          request_id: requestId,
          request: { ...fields, subtype },
        }).pipe(
          Effect.andThen(Deferred.await(answer)),
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () => Effect.fail(new ControlTimeout({ subtype, requestId, timeoutMs })),
          }),
          Effect.ensuring(Effect.sync(() => state.pending.delete(requestId))),
        )
      })

    const respond = (state: ProcessState, requestId: string, response: unknown) =>
      sendOn(state, {
        type: "control_response",
        response: { subtype: "success", request_id: requestId, response },
      }).pipe(Effect.ignore)

    const respondError = (state: ProcessState, requestId: string, error: string) =>
      sendOn(state, {
        type: "control_response",
        response: { subtype: "error", request_id: requestId, error },
      }).pipe(Effect.ignore)

    // -- approvals and questions ------------------------------------------------

    const resolvedEvent = (pending: PendingRequest, reason: string): AgentEvent =>
      pending.kind === "question"
        ? {
            type: "question_resolved",
            session_id: sid,
            question_id: pending.requestId,
            reason,
            ...(pending.runId ? { run_id: pending.runId } : {}),
            ...(pending.taskId ? { task_id: pending.taskId } : {}),
          }
        : {
            type: "approval_resolved",
            session_id: sid,
            approval_id: pending.requestId,
            reason,
            ...(pending.runId ? { run_id: pending.runId } : {}),
            ...(pending.taskId ? { task_id: pending.taskId } : {}),
          }

    /** Forget a request; its task stops waiting unless another of its requests is open. */
    const release = (pending: PendingRequest) =>
      Effect.gen(function* () {
        requests.delete(pending.requestId)
        if (pending.taskId && ![...requests.values()].some((other) => other.taskId === pending.taskId))
          yield* emitAll(mapper.setTaskWaiting(pending.taskId, false, run?.id))
      })

    const onCanUseTool = (
      state: ProcessState,
      requestId: string,
      request: Readonly<Record<string, unknown>>,
    ) =>
      Effect.gen(function* () {
        const current = run ?? (yield* openRun([]))
        const toolName = asString(request.tool_name) ?? "tool"
        const input = asRecord(request.input)
        const agentId = asString(request.agent_id)
        const taskId = agentId ? mapper.taskForAgent(agentId) : undefined
        const suggestions = Array.isArray(request.permission_suggestions)
          ? request.permission_suggestions
          : undefined
        const pending: PendingRequest = {
          requestId,
          kind: toolName === "AskUserQuestion" ? "question" : "approval",
          toolName,
          toolUseId: asString(request.tool_use_id),
          input,
          suggestions,
          taskId,
          runId: current.id,
        }
        requests.set(requestId, pending)
        void state
        const base = { session_id: sid, run_id: current.id, ...(taskId ? { task_id: taskId } : {}) }
        if (taskId) yield* emitAll(mapper.setTaskWaiting(taskId, true, current.id))
        if (pending.kind === "question") {
          yield* emit({
            ...base,
            type: "QuestionAsked",
            question_id: requestId,
            questions: questionsOf(input),
          })
          return
        }
        const description = asString(request.description)
        yield* emit({
          ...base,
          type: "ApprovalRequested",
          approval_id: requestId,
          ...(pending.toolUseId ? { tool_call_id: pending.toolUseId } : {}),
          tool_name: toolName,
          title: asString(request.title) ?? asString(request.display_name) ?? description ?? toolName,
          input,
          ...(description ? { description } : {}),
          can_always: (suggestions?.length ?? 0) > 0,
        })
      })

    const answerRequest = (
      requestId: string,
      kind: PendingRequest["kind"],
      response: (p: PendingRequest) => unknown,
    ) =>
      Effect.gen(function* () {
        const pending = requests.get(requestId)
        if (!pending || pending.kind !== kind || !proc)
          return yield* Effect.fail(new ApprovalNotFound({ approvalId: requestId }))
        yield* release(pending)
        yield* respond(proc, requestId, response(pending))
      })

    /** Deny every open request (cancel) or drop them (process gone), telling the host. */
    const settleAllRequests = (reason: string, answerCli: boolean) =>
      Effect.gen(function* () {
        for (const pending of [...requests.values()]) {
          yield* release(pending)
          if (answerCli && proc)
            yield* respond(proc, pending.requestId, { behavior: "deny", message: "The user cancelled." })
          yield* emit(resolvedEvent(pending, reason))
        }
      })

    // -- frames from the CLI ----------------------------------------------------

    const mcpSpec = {
      name: MCP_SERVER_NAME,
      version: "0.2.0",
      tools: setup.tools,
      callTool: (name: string, input: unknown) => host.callTool(sid, name, input),
    }

    const onControlRequest = (state: ProcessState, frame: Frame) =>
      Effect.gen(function* () {
        const requestId = asString(frame.request_id) ?? ""
        const request = asRecord(frame.request)
        switch (request.subtype) {
          case "can_use_tool":
            return yield* onCanUseTool(state, requestId, request)
          case "mcp_message": {
            // Each message on its own fiber: a slow tools/call never holds the reader.
            const message = asRecord(request.message) as JsonRpcMessage
            yield* fork(
              handleMcp(mcpSpec, message).pipe(
                Effect.flatMap((answer) => respond(state, requestId, { mcp_response: answer })),
              ),
            )
            return
          }
          case "hook_callback":
            return yield* respond(state, requestId, { continue: true })
          default:
            // request_user_dialog, elicitation and anything newer: this plugin renders no such thing.
            return yield* respondError(
              state,
              requestId,
              `convergence/claude does not handle ${String(request.subtype)} requests`,
            )
        }
      })

    const onControlResponse = (state: ProcessState, frame: Frame) =>
      Effect.gen(function* () {
        const response = asRecord(frame.response)
        const requestId = asString(response.request_id) ?? ""
        const pending = state.pending.get(requestId)
        if (!pending) return
        if (response.subtype === "error")
          yield* Deferred.fail(
            pending.answer,
            new ControlRefused({
              subtype: pending.subtype,
              requestId,
              error: asString(response.error) ?? "unknown error",
            }),
          )
        else yield* Deferred.succeed(pending.answer, asRecord(response.response))
      })

    const onCancelRequest = (frame: Frame) =>
      Effect.gen(function* () {
        const pending = requests.get(asString(frame.request_id) ?? "")
        if (!pending) return
        yield* release(pending)
        yield* emit(resolvedEvent(pending, "withdrawn"))
      })

    /** Does this frame begin a turn the CLI started by itself? */
    const beginsTurn = (frame: Frame) =>
      frame.type === "system" &&
      ((frame.subtype === "session_state_changed" && frame.state === "running") || frame.subtype === "init")

    const onResult = (signal: Extract<MapSignal, { type: "result" }>) =>
      Effect.gen(function* () {
        const uuids = signal.userMessageUuids ?? []
        const current = run
        // The late result of a run cancel already ended stays fenced to it. (An input steered
        // into a run that finished first is answered in a continuation: that result counts.)
        const owners = uuids.map((uuid) => sent.get(uuid)?.runId)
        const fenced =
          owners.length > 0 && owners.every((owner) => owner !== undefined && cancelledRuns.has(owner))
        if (!current || (fenced && !owners.includes(current.id))) {
          for (const uuid of uuids) sent.delete(uuid)
          return
        }
        // No UUIDs reported (an older CLI): everything sent into this run counts as consumed by it.
        const consumed =
          uuids.length > 0
            ? uuids
            : [...sent.values()].filter((i) => i.runId === current.id).map((i) => i.uuid)
        for (const uuid of consumed) {
          const input = sent.get(uuid)
          sent.delete(uuid)
          if (input?.deliveryId && !current.deliveryIds.includes(input.deliveryId))
            current.deliveryIds.push(input.deliveryId)
        }
        const outcome: RunOutcome = current.cancelling ? "Cancelled" : signal.isError ? "Failed" : "Completed"
        const error =
          outcome === "Failed"
            ? signal.errors?.filter((e) => e.trim() !== "").join("; ") || signal.text || signal.subtype
            : undefined
        yield* endRun(current, outcome, { usage: signal.usage, error })
      })

    const onSignal = (signal: MapSignal) =>
      Effect.gen(function* () {
        switch (signal.type) {
          case "result":
            return yield* onResult(signal)
          case "workflow":
            return yield* onWorkflow(signal)
          case "init":
            mapper.setModel(signal.model)
            return
          case "usage_limits":
            if (setup.hooks?.usageLimits) yield* setup.hooks.usageLimits(signal.limits)
            // A native rejection blocks the run; only its own result ends it.
            if (signal.rejected && run)
              yield* emit({
                type: "usage_blocked",
                session_id: sid,
                run_id: run.id,
                ...(signal.rejected.window ? { window: signal.rejected.window } : {}),
                ...(signal.rejected.resetsAt ? { resets_at: signal.rejected.resetsAt } : {}),
                message: signal.rejected.message,
              })
            return
        }
      })

    // -- workflows ---------------------------------------------------------------

    /** Map what a followed run's agent files gained since the last look. */
    const pollWorkflow = (followed: FollowedWorkflow) =>
      Effect.gen(function* () {
        if (!followed.tail) return
        for (const { agentId, records } of yield* followed.tail.poll) {
          const held = followed.unrouted.get(agentId)
          if (held) held.push(...records)
          else followed.unrouted.set(agentId, [...records])
        }
        // An agent's file can appear before the snapshot that names it: hold its records until then.
        for (const [agentId, records] of followed.unrouted) {
          const taskId = mapper.taskForAgent(agentId)
          if (!taskId) continue
          followed.unrouted.delete(agentId)
          yield* emitAll(mapper.mapAgentRecords(taskId, records, run?.id))
        }
      })

    const pollWorkflows = Effect.gen(function* () {
      for (const followed of workflows.values()) if (!followed.finished) yield* pollWorkflow(followed)
    })

    const onWorkflow = (signal: Extract<MapSignal, { type: "workflow" }>) =>
      Effect.gen(function* () {
        const followed: FollowedWorkflow = workflows.get(signal.taskId) ?? {
          taskId: signal.taskId,
          finished: false,
          tail: undefined,
          unrouted: new Map(),
        }
        workflows.set(signal.taskId, followed)
        if (signal.runId) followed.runId = signal.runId
        if (signal.outputFile) followed.outputFile = signal.outputFile
        if (signal.transcriptDir && !followed.tail) {
          followed.transcriptDir = signal.transcriptDir
          followed.tail = new WorkflowTail(signal.transcriptDir)
        }
        if (!signal.finished || followed.finished) return
        followed.finished = true
        // The CLI writes the record without waiting: read it (with retries) off the reader
        // fiber, then every agent file one last time.
        yield* fork(
          Effect.gen(function* () {
            const record = yield* readWorkflowRecord(
              {
                ...(followed.outputFile ? { outputFile: followed.outputFile } : {}),
                ...(followed.transcriptDir ? { transcriptDir: followed.transcriptDir } : {}),
                ...(followed.runId ? { runId: followed.runId } : {}),
              },
              setup.workflowRecord ?? {},
            )
            yield* emitAll(mapper.finishWorkflow(followed.taskId, record, run?.id))
            yield* pollWorkflow(followed)
          }),
        )
      })

    const onFrame = (state: ProcessState) => (frame: Frame) =>
      Effect.gen(function* () {
        switch (frame.type) {
          case "control_response":
            return yield* onControlResponse(state, frame)
          case "control_request":
            return yield* onControlRequest(state, frame)
          case "control_cancel_request":
            return yield* onCancelRequest(frame)
        }
        if (!run && beginsTurn(frame)) yield* openRun([])
        const out = mapper.map(frame as unknown as WireFrame, run?.id)
        yield* emitAll(out.events)
        for (const signal of out.signals) yield* onSignal(signal)
        if (workflows.size > 0 && (frame.type === "system" || frame.type === "user")) yield* pollWorkflows
      })

    // -- process lifecycle -----------------------------------------------------

    const onExit = (state: ProcessState, exit: ProcessExit) =>
      Effect.gen(function* () {
        state.exited = true
        const stderr = state.transport?.stderrTail() ?? ""
        const error = new ProcessExited({ code: exit.code, signal: exit.signal, stderr })
        for (const { answer } of state.pending.values()) yield* Deferred.fail(answer, error)
        state.pending.clear()
        if (proc !== state) return
        proc = undefined
        // A new process never reports this one's inputs.
        sent.clear()
        yield* settleAllRequests("the Claude Code process ended", false)
        if (state.stopping) return
        const current = run
        if (current) {
          const cancelled = current.cancelling
          yield* endRun(
            current,
            cancelled ? "Cancelled" : "Failed",
            cancelled ? {} : { error: error.message },
          )
          if (!cancelled)
            yield* emitNotice("error", `${error.message}. The next prompt resumes the conversation.`)
        } else if (exit.code !== 0) {
          yield* emitNotice("warning", `${error.message}. The next prompt resumes the conversation.`)
        }
      })

    const stopProcess = (state: ProcessState) =>
      Effect.gen(function* () {
        state.stopping = true
        if (proc === state) proc = undefined
        yield* Scope.close(state.scope, Exit.void)
      })

    const launch: Effect.Effect<ProcessState, SessionError, Broker> = Effect.gen(function* () {
      const launchStart = start
      const prepared = yield* setup.prepareLaunch(launchStart)
      const scope = yield* Scope.fork(sessionScope)
      const state: ProcessState = {
        scope,
        transport: undefined,
        pending: new Map(),
        exited: false,
        stopping: false,
      }
      const transport = yield* openTransport<Frame>({
        command: "claude",
        args: prepared.args,
        cwd: setup.cwd,
        env: prepared.env,
        decode: setup.decodeLine,
        onFrame: (frame) => Effect.provideContext(onFrame(state)(frame), services),
        onBadLine: (message, line) =>
          log.warn(`claude session ${sid}: unreadable line from the CLI (${message})`, line),
      }).pipe(
        Scope.provide(scope),
        Effect.mapError((error: BrokerError) => new LaunchFailed({ detail: error.message })),
        Effect.tapError(() => Scope.close(scope, Exit.void)),
      )
      state.transport = transport
      proc = state
      yield* fork(transport.closed.pipe(Effect.flatMap((exit) => onExit(state, exit))))
      // The reader already runs: the CLI's MCP initialize comes before this answer.
      const response = yield* requestOn(
        state,
        "initialize",
        initializeRequest({
          hasTools: setup.tools.length > 0,
          appendSystemPrompt: prepared.appendSystemPrompt,
        }),
        timeouts.initializeMs,
      ).pipe(Effect.tapError(() => stopProcess(state)))
      if (setup.hooks?.initialized) yield* setup.hooks.initialized(response)
      return state
    })

    const ensureLive: Effect.Effect<ProcessState, SessionError, Broker> = Effect.suspend(() =>
      proc && !proc.exited ? Effect.succeed(proc) : launch,
    )

    /** Skills and the ultracode check after a launch: on their own fiber, never delaying a prompt. */
    const afterLaunch = (fresh: boolean) =>
      fresh && setup.hooks?.launched ? fork(setup.hooks.launched(session)).pipe(Effect.asVoid) : Effect.void

    const ensureProcess: Effect.Effect<void, SessionError, Broker> = admission.withPermits(1)(
      Effect.gen(function* () {
        const fresh = !proc || proc.exited
        yield* ensureLive
        yield* afterLaunch(fresh)
      }),
    )

    // -- the methods ---------------------------------------------------------

    const prompt = (params: PromptParams): Effect.Effect<PromptAccepted, SessionError, Broker> =>
      admission.withPermits(1)(
        Effect.gen(function* () {
          const fresh = !proc || proc.exited
          const state = yield* ensureLive
          yield* afterLaunch(fresh)
          const uuid = crypto.randomUUID()
          const steering = run !== undefined && !run.cancelling
          const current = steering && run ? run : yield* openRun(params.deliveryId ? [params.deliveryId] : [])
          // A steer's delivery id joins the run that reports consuming it (user_message_uuids).
          sent.set(uuid, { uuid, deliveryId: params.deliveryId, runId: current.id })
          const content = (setup.promptContent ?? defaultContent)(params)
          yield* sendOn(state, userFrame(content, uuid, steering ? "next" : undefined)).pipe(
            Effect.tapError((error) =>
              steering ? Effect.void : endRun(current, "Failed", { error: error.message }),
            ),
          )
          const cliId = start.cliId
          start = nextStartAfterWrite(start)
          if (setup.hooks?.sent) yield* setup.hooks.sent({ itemId: params.itemId, uuid, cliId })
          return { run_id: current.id, steered: steering }
        }),
      )

    const cancel: Effect.Effect<void, never, Broker> = Effect.gen(function* () {
      const current = run
      if (!current || current.cancelling) return
      current.cancelling = true
      yield* settleAllRequests("cancelled", true)
      const state = proc
      if (!state) return yield* endRun(current, "Cancelled")
      yield* fork(requestOn(state, "interrupt"))
      current.watchdog = yield* fork(
        Effect.sleep(timeouts.cancelMs).pipe(Effect.andThen(endRun(current, "Cancelled"))),
      )
    })

    const request = (
      subtype: string,
      fields?: Readonly<Record<string, unknown>>,
      timeoutMs?: number,
    ): Effect.Effect<Readonly<Record<string, unknown>> | undefined, SessionError, Broker> =>
      Effect.suspend(() =>
        proc && !proc.exited ? requestOn(proc, subtype, fields, timeoutMs) : Effect.succeed(undefined),
      )

    const cancelTask = (taskId: string): Effect.Effect<void, SessionError, Broker> =>
      Effect.gen(function* () {
        const task = mapper.agentForTask(taskId)
        if (!task || !proc) return yield* Effect.fail(new TaskNotFound({ taskId }))
        if (task.kind === "workflow_agent")
          return yield* Effect.fail(
            new TaskNotStoppable({
              taskId,
              reason: "A workflow agent cannot be stopped on its own: stop the whole workflow instead",
            }),
          )
        yield* requestOn(proc, "stop_task", { task_id: task.agentId })
      })

    const answerApproval = (answer: ApprovalAnswer) =>
      answerRequest(answer.approvalId, "approval", (pending) =>
        answer.decision === "deny"
          ? { behavior: "deny", message: answer.message ?? "The user declined this action." }
          : {
              behavior: "allow",
              updatedInput: answer.updatedInput ?? pending.input,
              ...(answer.decision === "allow_always" && pending.suggestions?.length
                ? { updatedPermissions: pending.suggestions }
                : {}),
            },
      )

    const answerQuestion = (answer: QuestionAnswer) =>
      answerRequest(answer.questionId, "question", (pending) => ({
        behavior: "allow",
        // `questions` must survive untouched: the CLI validates updatedInput against the tool's schema.
        updatedInput: {
          ...pending.input,
          answers: answer.answers,
          ...(answer.response !== undefined ? { response: answer.response } : {}),
        },
      }))

    const restart = (next: StartMode): Effect.Effect<void, SessionError, Broker> =>
      admission.withPermits(1)(
        Effect.gen(function* () {
          const current = run
          if (current) yield* endRun(current, "Cancelled")
          yield* settleAllRequests("the conversation was rewound", false)
          if (proc) yield* stopProcess(proc)
          sent.clear()
          if (next.cliId !== start.cliId) mapper = setup.makeMapper(next.cliId)
          start = next
          yield* launch
          yield* afterLaunch(true)
        }),
      )

    const close: Effect.Effect<void> = Effect.gen(function* () {
      if (closed) return
      closed = true
      if (proc) proc.stopping = true
      // Closing lets the reader finish what the process already wrote (a last result).
      yield* Scope.close(sessionScope, Exit.void)
      const current = run
      if (current && !current.ended) {
        current.ended = true
        run = undefined
        yield* emit({ type: "RunEnded", session_id: sid, run_id: current.id, outcome: "Cancelled" })
      }
    })

    const session: LiveSession = {
      hostId: sid,
      cliId: () => start.cliId,
      runId: () => run?.id,
      isRunning: () => proc !== undefined && !proc.exited,
      ensureProcess,
      prompt,
      cancel,
      cancelTask,
      answerApproval,
      answerQuestion,
      request,
      restart,
      close,
      emitNotice,
    }
    return session
  })

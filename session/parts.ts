/**
 * The parts of one session, built and wired to each other once: the shared
 * context, the run ledger, approvals, the workflow follower, the frame
 * router and the process keeper. The owner's hooks arrive here already
 * handed the owner's record (session.ts binds them), so no part knows the
 * owner.
 */
import { type Context, Effect, type Scope } from "effect"
import type { LaunchFailed } from "../errors.ts"
import type { Mapper } from "../map.ts"
import type { Broker, Host, LogShape } from "../sdk/plugin-api.ts"
import type { AgentEvent, PluginTool, UsageLimits } from "../sdk/protocol.ts"
import type { DecodedLine } from "../transport.ts"
import type { StartMode } from "../types.ts"
import type { Frame, InitializeResponse } from "../wire.ts"
import { makeWorkflowFollower } from "../workflow/follow.ts"
import { type Approvals, makeApprovals } from "./approvals.ts"
import { makeSessionContext, type SessionContext } from "./context.ts"
import { makeFrameRouter } from "./frames.ts"
import { makeMcpBridge } from "./mcp-bridge.ts"
import { makeProcessKeeper, type PreparedLaunch, type ProcessKeeper, type ProcessOptions } from "./process.ts"
import { makeRunLedger, type RunLedger } from "./runs.ts"
import { makePickupTracker, type PickupTracker } from "./pickup.ts"
import { makeUnknownFrames, type UnknownFrames } from "./unknown-frames.ts"

export type NoticeLevel = "info" | "warning" | "error"

/** The owner's hooks the parts call, each already bound to the owner's record. */
export interface BoundHooks {
  readonly initialized?: ((answer: InitializeResponse) => Effect.Effect<void, never, Broker>) | undefined
  readonly runEnded?: (() => Effect.Effect<void, never, Broker>) | undefined
  readonly usageLimits?: ((limits: UsageLimits) => Effect.Effect<void, never, Broker>) | undefined
}

export interface PartsInput {
  readonly sid: string
  readonly log: LogShape
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  readonly sessionScope: Scope.Scope
  /** The broker services the reader carries (it runs outside any caller). */
  readonly services: Context.Context<Broker>
  readonly mapper: Mapper
  readonly cwd: string
  /** The host's plugin tools of the process running (or being launched). */
  readonly tools: () => ReadonlyArray<PluginTool>
  readonly controlMs: number
  readonly initializeMs: number
  readonly workflowRecord: { readonly attempts?: number; readonly delayMs?: number } | undefined
  /** How the next process joins its conversation. */
  readonly start: () => StartMode
  readonly prepare: (start: StartMode) => Effect.Effect<PreparedLaunch, LaunchFailed, Broker>
  readonly decodeLine: (line: string) => DecodedLine<Frame>
  readonly hooks: BoundHooks
  /** A fixed silence bound (tests); otherwise the CLI's `API_TIMEOUT_MS` decides it. */
  readonly silenceMs: number | undefined
  /** Start a process again after an abort. */
  readonly relaunch: Effect.Effect<void>
  /** A dead process's unread prompt: replayed by the owner? */
  readonly unread: ProcessOptions["unread"]
  /** The conversation's next try should the CLI refuse a launch's. */
  readonly fallback: ProcessOptions["fallback"]
}

export interface SessionParts {
  readonly ctx: SessionContext
  readonly runs: RunLedger
  readonly approvals: Approvals
  readonly processes: ProcessKeeper
  readonly unknown: UnknownFrames
  /** Pickup evidence per written input (session/pickup.ts). */
  readonly pickup: PickupTracker
  /** A notice to the host, under the run in flight if any. */
  readonly notice: (level: NoticeLevel, text: string) => Effect.Effect<void>
}

export const assembleParts = (input: PartsInput): Effect.Effect<SessionParts, never, Host> =>
  Effect.gen(function* () {
    const { sid, log } = input
    const ctx = makeSessionContext({
      sid,
      log,
      emit: input.emit,
      scope: input.sessionScope,
      mapper: input.mapper,
    })
    const runs = makeRunLedger(ctx, input.hooks.runEnded)
    const notice = (level: NoticeLevel, text: string) => {
      const run = runs.current()
      return ctx.emit({ type: "Notice", session_id: sid, ...(run ? { run_id: run.id } : {}), level, text })
    }
    const approvals = makeApprovals(ctx, () => runs.current()?.id)
    const workflows = makeWorkflowFollower({
      mapper: () => ctx.mapper,
      runId: () => runs.current()?.id,
      emitAll: ctx.emitAll,
      fork: ctx.fork,
      ...(input.workflowRecord ? { record: input.workflowRecord } : {}),
    })
    const unknown = makeUnknownFrames(log, sid)
    const pickup = makePickupTracker()
    const route = makeFrameRouter({
      ctx,
      runs,
      approvals,
      mcp: yield* makeMcpBridge(ctx, input.tools),
      workflows,
      unknown,
      pickup,
      usageLimits: input.hooks.usageLimits,
    })
    const processes = makeProcessKeeper({
      ctx,
      sessionScope: input.sessionScope,
      services: input.services,
      cwd: input.cwd,
      hasTools: () => input.tools().length > 0,
      initializeMs: input.initializeMs,
      controlMs: input.controlMs,
      start: input.start,
      prepare: input.prepare,
      decodeLine: input.decodeLine,
      route,
      runs,
      approvals,
      pickup,
      notice,
      initialized: input.hooks.initialized,
      silenceMs: input.silenceMs,
      awaitingUser: () => approvals.openCount() > 0,
      relaunch: input.relaunch,
      unread: input.unread,
      fallback: input.fallback,
    })
    return { ctx, runs, approvals, processes, unknown, pickup, notice }
  })

/**
 * Every stdout frame of a process, routed: control frames to the control
 * channel, the approvals and the MCP bridge; everything else to the mapper,
 * whose events go to the host and whose signals end runs, follow workflows
 * and report limits. Frames arrive typed from wire.ts `decodeLine`; control
 * requests are narrowed by `isKnownControlRequest` and their subtype.
 *
 * A turn the CLI begins by itself (`session_state_changed running`,
 * `system/init`, a `can_use_tool` with no run open) opens a run.
 */
import { Effect } from "effect"
import type { Signal } from "../map.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { UsageLimits } from "../sdk/protocol.ts"
import type { WorkflowFollower } from "../workflow/follow.ts"
import { type ControlRequestFrame, type Frame, isKnownControlRequest, isKnownFrame } from "../wire.ts"
import type { Approvals } from "./approvals.ts"
import type { SessionContext } from "./context.ts"
import type { ControlChannel } from "./control.ts"
import type { McpBridge } from "./mcp-bridge.ts"
import { failedMcpServers, mcpFailureText } from "./mcp-status.ts"
import { deliveryEvent, type PickupTracker } from "./pickup.ts"
import type { RunLedger } from "./runs.ts"
import type { UnknownFrames } from "./unknown-frames.ts"

export interface FrameRoutes {
  readonly ctx: SessionContext
  readonly runs: RunLedger
  readonly approvals: Approvals
  readonly mcp: McpBridge
  readonly workflows: WorkflowFollower
  readonly unknown: UnknownFrames
  readonly pickup: PickupTracker
  readonly usageLimits: ((limits: UsageLimits) => Effect.Effect<void, never, Broker>) | undefined
}

/** Does this frame begin a turn the CLI started by itself? */
const beginsTurn = (frame: Frame): boolean =>
  isKnownFrame(frame) &&
  frame.type === "system" &&
  ((frame.subtype === "session_state_changed" && frame.state === "running") || frame.subtype === "init")

const absurd = (value: never): never => {
  throw new Error(`unhandled case ${JSON.stringify(value)}`)
}

const unhandled = (subtype: string) => `convergence/claude does not handle ${subtype} requests`

/** The handler of one process's frames, on its reader fiber. */
export const makeFrameRouter =
  (routes: FrameRoutes) =>
  (channel: ControlChannel) =>
  (frame: Frame): Effect.Effect<void, never, Broker> => {
    const { ctx, runs, approvals, workflows } = routes
    /** Failed MCP servers this process has named already (every turn's init lists them again). */
    const mcpNamed = new Set<string>()

    const onControlRequest = (request: ControlRequestFrame) =>
      Effect.gen(function* () {
        const body = request.request
        if (!isKnownControlRequest(body))
          return yield* channel.refuse(request.request_id, unhandled(body.subtype))
        switch (body.subtype) {
          case "can_use_tool": {
            const run = runs.current() ?? (yield* runs.open([], "cli"))
            return yield* approvals.open(request.request_id, body, run.id)
          }
          case "mcp_message":
            return yield* routes.mcp.onMessage(channel, request.request_id, body)
          case "hook_callback":
            return yield* channel.respond(request.request_id, { continue: true })
          case "elicitation":
          case "request_user_dialog":
            // This plugin renders no such dialog.
            return yield* channel.refuse(request.request_id, unhandled(body.subtype))
          default:
            // A subtype added to wire.ts's known requests fails to compile here until it has a decision.
            return absurd(body)
        }
      })

    const onSignal = (signal: Signal) =>
      Effect.gen(function* () {
        switch (signal.type) {
          case "result":
            return yield* runs.onResult(signal)
          case "workflow":
            return yield* workflows.onSignal(signal)
          case "init":
            ctx.mapper.setModel(signal.model)
            return
          case "usage_limits": {
            if (routes.usageLimits) yield* routes.usageLimits(signal.limits)
            const run = runs.current()
            // A native rejection blocks the run; only its own result ends it.
            if (signal.rejected && run)
              yield* ctx.emit({
                type: "usage_blocked",
                session_id: ctx.sid,
                run_id: run.id,
                ...(signal.rejected.window ? { window: signal.rejected.window } : {}),
                ...(signal.rejected.resetsAt ? { resets_at: signal.rejected.resetsAt } : {}),
                reason: signal.rejected.reason,
                ...(signal.rejected.entry ? { window_usage: signal.rejected.entry } : {}),
                message: signal.rejected.message,
              })
            return
          }
          case "state":
          case "compact_failed":
            return
          default:
            return absurd(signal)
        }
      })

    return Effect.gen(function* () {
      if (isKnownFrame(frame)) {
        switch (frame.type) {
          case "control_response":
            return yield* channel.onResponse(frame)
          case "control_request":
            return yield* onControlRequest(frame)
          case "control_cancel_request":
            return yield* approvals.withdraw(frame.request_id)
        }
      } else yield* routes.unknown.note(frame)
      if (!runs.current() && beginsTurn(frame)) yield* runs.open([], "cli")
      // Pickups first: the host learns an input was taken before the result that ends its run.
      for (const report of routes.pickup.onFrame(frame))
        yield* ctx.emit(deliveryEvent(ctx.sid, report, runs.current()?.id))
      const failed = failedMcpServers(frame).filter((name) => !mcpNamed.has(name))
      if (failed.length > 0) {
        for (const name of failed) mcpNamed.add(name)
        yield* ctx.emit({
          type: "Notice",
          session_id: ctx.sid,
          level: "warning",
          text: mcpFailureText(failed),
          ...(runs.current() ? { run_id: runs.current()!.id } : {}),
        })
      }
      const out = ctx.mapper.map(frame, runs.current()?.id)
      yield* ctx.emitAll(out.events)
      for (const signal of out.signals) yield* onSignal(signal)
      if (workflows.active() && (frame.type === "system" || frame.type === "user")) yield* workflows.poll
    })
  }

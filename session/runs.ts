/**
 * The run ledger of one session: the run in flight, the inputs sent into it,
 * and the runs cancel already ended.
 *
 * - A run opens at a prompt or when the CLI begins a turn by itself, and ends
 *   exactly once (RunEnded carries every delivery id it consumed).
 * - Cancel arms a watchdog: the run ends Cancelled at its `result`, or when
 *   the watchdog fires if the CLI stays silent.
 * - The cancelled-run fence: a late `result` whose inputs all belonged to
 *   runs cancel ended never ends a later run.
 * - Delivery attribution: every uuid in `user_message_uuids` adds the
 *   delivery id it was sent with to the run that reports consuming it (a
 *   steer joins the run it steered).
 */
import { Effect, Fiber } from "effect"
import type { Signal } from "../map.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { RunOutcome, RunUsage } from "../sdk/protocol.ts"
import type { RunState, SentInput } from "../types.ts"
import type { SessionContext } from "./context.ts"

/** How many cancelled runs the fence remembers. */
const FENCE_SIZE = 16

export interface RunEnd {
  readonly usage?: RunUsage | undefined
  readonly error?: string | undefined
}

export interface RunLedger {
  readonly current: () => RunState | undefined
  readonly open: (deliveryIds: ReadonlyArray<string>) => Effect.Effect<RunState>
  /** End `run` once; later calls do nothing. */
  readonly end: (run: RunState, outcome: RunOutcome, extra?: RunEnd) => Effect.Effect<void, never, Broker>
  /** End a cancelling run Cancelled after `ms` unless its result comes first. */
  readonly armWatchdog: (run: RunState, ms: number) => Effect.Effect<void, never, Broker>
  /** An input written to the CLI, waiting for a result to report it. */
  readonly sent: (input: SentInput) => void
  /** A new process never reports the old one's inputs. */
  readonly forgetSent: () => void
  /** A `result`: attribute its inputs and end the run it belongs to. */
  readonly onResult: (signal: Extract<Signal, { type: "result" }>) => Effect.Effect<void, never, Broker>
  /** The session closed: end the run in flight Cancelled, without the ended hook. */
  readonly closeCurrent: Effect.Effect<void>
}

export const makeRunLedger = (
  ctx: SessionContext,
  /** After every end but close's (skills are re-read there), on its own fiber. */
  onEnded: (() => Effect.Effect<void, never, Broker>) | undefined,
): RunLedger => {
  let run: RunState | undefined
  const sentInputs = new Map<string, SentInput>()
  const cancelledRuns = new Set<string>()

  const fence = (runId: string) => {
    cancelledRuns.add(runId)
    if (cancelledRuns.size <= FENCE_SIZE) return
    const oldest = cancelledRuns.values().next()
    if (!oldest.done) cancelledRuns.delete(oldest.value)
  }

  const open = (deliveryIds: ReadonlyArray<string>): Effect.Effect<RunState> =>
    Effect.suspend(() => {
      const opened: RunState = {
        id: crypto.randomUUID(),
        deliveryIds: [...deliveryIds],
        cancelling: false,
        watchdog: undefined,
        ended: false,
      }
      run = opened
      return ctx
        .emit({
          type: "RunStarted",
          session_id: ctx.sid,
          run_id: opened.id,
          ...(deliveryIds.length > 0 ? { delivery_ids: [...deliveryIds] } : {}),
        })
        .pipe(Effect.as(opened))
    })

  const end = (
    target: RunState,
    outcome: RunOutcome,
    extra: RunEnd = {},
  ): Effect.Effect<void, never, Broker> =>
    Effect.gen(function* () {
      if (target.ended) return
      target.ended = true
      if (outcome === "Cancelled") fence(target.id)
      if (run === target) run = undefined
      const watchdog = target.watchdog
      target.watchdog = undefined
      yield* ctx.emit({
        type: "RunEnded",
        session_id: ctx.sid,
        run_id: target.id,
        outcome,
        ...(extra.usage ? { usage: extra.usage } : {}),
        ...(extra.error ? { error: extra.error } : {}),
        ...(target.deliveryIds.length > 0 ? { delivery_ids: [...target.deliveryIds] } : {}),
      })
      if (onEnded) yield* ctx.fork(onEnded())
      // Last: the watchdog may be the fiber running this very code.
      if (watchdog) yield* Fiber.interrupt(watchdog).pipe(Effect.forkDetach)
    })

  const armWatchdog = (target: RunState, ms: number) =>
    Effect.gen(function* () {
      target.watchdog = yield* ctx.fork(Effect.sleep(ms).pipe(Effect.andThen(end(target, "Cancelled"))))
    })

  const onResult = (signal: Extract<Signal, { type: "result" }>) =>
    Effect.gen(function* () {
      const uuids = signal.userMessageUuids ?? []
      const current = run
      // The late result of a run cancel already ended stays fenced to it. (An input steered
      // into a run that finished first is answered in a continuation: that result counts.)
      const owners = uuids.map((uuid) => sentInputs.get(uuid)?.runId)
      const fenced =
        owners.length > 0 && owners.every((owner) => owner !== undefined && cancelledRuns.has(owner))
      if (!current || (fenced && !owners.includes(current.id))) {
        for (const uuid of uuids) sentInputs.delete(uuid)
        return
      }
      // No UUIDs reported (an older CLI): everything sent into this run counts as consumed by it.
      const consumed =
        uuids.length > 0
          ? uuids
          : [...sentInputs.values()].filter((i) => i.runId === current.id).map((i) => i.uuid)
      for (const uuid of consumed) {
        const input = sentInputs.get(uuid)
        sentInputs.delete(uuid)
        if (input?.deliveryId && !current.deliveryIds.includes(input.deliveryId))
          current.deliveryIds.push(input.deliveryId)
      }
      const outcome: RunOutcome = current.cancelling ? "Cancelled" : signal.isError ? "Failed" : "Completed"
      const error =
        outcome === "Failed"
          ? signal.errors?.filter((e) => e.trim() !== "").join("; ") || signal.text || signal.subtype
          : undefined
      yield* end(current, outcome, { usage: signal.usage, error })
    })

  const closeCurrent = Effect.suspend(() => {
    const current = run
    if (!current || current.ended) return Effect.void
    current.ended = true
    run = undefined
    return ctx.emit({ type: "RunEnded", session_id: ctx.sid, run_id: current.id, outcome: "Cancelled" })
  })

  return {
    current: () => run,
    open,
    end,
    armWatchdog,
    sent: (input) => void sentInputs.set(input.uuid, input),
    forgetSent: () => sentInputs.clear(),
    onResult,
    closeCurrent,
  }
}

/**
 * The run ledger of one session: the run in flight, the inputs sent into it,
 * and the runs cancel already ended.
 *
 * - A run opens at a prompt or when the CLI begins a turn by itself, and ends
 *   exactly once (RunEnded carries every delivery id it consumed).
 * - Cancel arms a watchdog: the run ends Cancelled at its `result`, or when
 *   the watchdog fires if the CLI stays silent.
 * - The cancelled-run fence: a late `result` whose inputs all belonged to
 *   runs cancel ended never ends a later prompt's run. A run the CLI began
 *   by itself (a steer answered after a cancel, a background task's turn)
 *   ends at the next result whatever inputs it reports: it is that turn's.
 * - A prompt sent while a run is being cancelled opens its own run; the
 *   cancelled run waits apart for its own result (or its watchdog), so the
 *   interrupted turn's error result ends the cancelled run, never the new one
 *   (2.1.332 answers the interrupt with that result, then the new prompt's
 *   turn, with no `session_state_changed` between them).
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
  /** Why the model stopped (the result's, else its last message's): `RunEnded.stop_reason`. */
  readonly stopReason?: string | undefined
}

export interface RunLedger {
  readonly current: () => RunState | undefined
  /** A run for a prompt (`origin: "prompt"`), or for a turn the CLI began by itself. */
  readonly open: (deliveryIds: ReadonlyArray<string>, origin?: RunOrigin) => Effect.Effect<RunState>
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
  /** The session closed: end the run in flight (and any still being cancelled) Cancelled, without the ended hook. */
  readonly closeCurrent: Effect.Effect<void>
}

export type RunOrigin = "prompt" | "cli"

export const makeRunLedger = (
  ctx: SessionContext,
  /** After every end but close's (skills are re-read there), on its own fiber. */
  onEnded: (() => Effect.Effect<void, never, Broker>) | undefined,
): RunLedger => {
  let run: RunState | undefined
  const sentInputs = new Map<string, SentInput>()
  const cancelledRuns = new Set<string>()
  /** Runs cancel is ending while a newer prompt's run is current. */
  const cancelling = new Set<RunState>()
  /** Runs opened for a turn the CLI began by itself. */
  const selfOpened = new Set<string>()

  const fence = (runId: string) => {
    cancelledRuns.add(runId)
    if (cancelledRuns.size <= FENCE_SIZE) return
    const oldest = cancelledRuns.values().next()
    if (!oldest.done) cancelledRuns.delete(oldest.value)
  }

  const open = (deliveryIds: ReadonlyArray<string>, origin: RunOrigin = "prompt"): Effect.Effect<RunState> =>
    Effect.suspend(() => {
      if (run && !run.ended && run.cancelling) cancelling.add(run)
      const opened: RunState = {
        id: crypto.randomUUID(),
        deliveryIds: [...deliveryIds],
        cancelling: false,
        watchdog: undefined,
        ended: false,
      }
      run = opened
      if (origin === "cli") selfOpened.add(opened.id)
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
      cancelling.delete(target)
      selfOpened.delete(target.id)
      const watchdog = target.watchdog
      target.watchdog = undefined
      yield* ctx.emit({
        type: "RunEnded",
        session_id: ctx.sid,
        run_id: target.id,
        outcome,
        ...(extra.usage ? { usage: extra.usage } : {}),
        ...(extra.error ? { error: extra.error } : {}),
        ...(extra.stopReason ? { stop_reason: extra.stopReason } : {}),
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
      const owners = uuids.map((uuid) => sentInputs.get(uuid)?.runId)
      // The interrupted turn's result ends the run cancel was ending, not the prompt's after it.
      const interrupted = [...cancelling].find((r) => owners.includes(r.id))
      if (interrupted && !(run && owners.includes(run.id))) {
        for (const uuid of uuids) sentInputs.delete(uuid)
        return yield* end(interrupted, "Cancelled", { usage: signal.usage })
      }
      const current = run
      // The late result of a run cancel already ended stays fenced to it. (An input steered
      // into a run that finished first is answered in a continuation: that result counts, and
      // so does any result of a turn the CLI began by itself.)
      const fenced =
        owners.length > 0 && owners.every((owner) => owner !== undefined && cancelledRuns.has(owner))
      if (!current || (fenced && !owners.includes(current.id) && !selfOpened.has(current.id))) {
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
      yield* end(current, outcome, { usage: signal.usage, error, stopReason: signal.stopReason })
    })

  const closeCurrent = Effect.suspend(() => {
    const open = [...cancelling, ...(run ? [run] : [])].filter((r) => !r.ended)
    cancelling.clear()
    run = undefined
    return Effect.forEach(
      open,
      (target) => {
        target.ended = true
        return ctx.emit({
          type: "RunEnded",
          session_id: ctx.sid,
          run_id: target.id,
          outcome: "Cancelled",
          ...(target.deliveryIds.length > 0 ? { delivery_ids: [...target.deliveryIds] } : {}),
        })
      },
      { discard: true },
    )
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

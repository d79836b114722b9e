/**
 * A prompt written to a process that is dying, written once more to the
 * next one: a write the pipe refuses at once, and a prompt the process
 * never read before it died.
 *
 * 2.1.332 answers a user frame at once (`command_lifecycle queued`,
 * `session_state_changed running`); a process that died after our write
 * with not one frame since did not take it in. Even then the transcript is
 * asked first (the owner's `stored`): a prompt it holds is never sent
 * again. The replay keeps the uuid, the delivery id and the run, happens at
 * most once per prompt, and runs on the session's fiber behind the same
 * admission as prompts; if it cannot be written the run ends Failed.
 *
 * Pickup evidence follows the input to the new process: the dying process
 * holds it back from its own unknown reports (`pickup.hold`), the re-write
 * tracks it anew (`pickup.written`), and a replay that never writes it
 * releases it as unknown. One report per input, from the process that had it last.
 */
import { Effect, type Semaphore } from "effect"
import type { ProcessExited } from "../errors.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { RunState } from "../types.ts"
import type { SessionError } from "../errors.ts"
import type { SessionContext } from "./context.ts"
import { deliveryEvent, type PickupTracker } from "./pickup.ts"
import type { LiveProcess, ProcessKeeper } from "./process.ts"
import type { RunLedger } from "./runs.ts"

export interface Written {
  readonly proc: LiveProcess
  /** `proc.heard` right after the write. */
  readonly heardAt: number
  readonly uuid: string
  readonly deliveryId: string | undefined
  readonly runId: string
  readonly frame: Record<string, unknown>
}

/** One prompt to write: its frame without priority (what a replay sends) and its run. */
export interface Input {
  readonly uuid: string
  readonly deliveryId: string | undefined
  readonly run: RunState
  readonly frame: Record<string, unknown>
}

export interface UnreadReplay {
  /** Write a prompt (`steer`: the frame a steer sends instead); a steer is never replayed. */
  readonly write: (
    proc: LiveProcess,
    input: Input,
    steer: Record<string, unknown> | undefined,
  ) => Effect.Effect<void, ProcessExited | SessionError, Broker>
  /**
   * `proc` died: the replay of its unread prompt, to start once the exit is
   * accounted for (its input already held from that exit's unknown reports),
   * or undefined: the exit fails the run.
   */
  readonly unread: (
    proc: LiveProcess,
  ) => Effect.Effect<Effect.Effect<void, never, Broker> | undefined, never, Broker>
}

export const makeUnreadReplay = (options: {
  readonly ctx: SessionContext
  readonly runs: RunLedger
  readonly pickup: PickupTracker
  readonly processes: () => ProcessKeeper
  readonly admission: Semaphore.Semaphore
  readonly cliId: () => string
  /** Does the conversation's transcript hold this prompt? Absent: never replay. */
  readonly stored: ((cliId: string, uuid: string) => Effect.Effect<boolean, never, Broker>) | undefined
  readonly afterLaunch: (fresh: boolean) => Effect.Effect<void, never, Broker>
  /** A user message reached a process (later launches resume the conversation). */
  readonly written: () => void
}): UnreadReplay => {
  let last: Written | undefined
  const { ctx, runs, pickup } = options

  /** A held input that will not reach a process after all: reported unknown. */
  const release = (uuid: string, reason: string) =>
    Effect.suspend(() =>
      ctx.emitAll(pickup.release(uuid, reason).map((r) => deliveryEvent(ctx.sid, r, runs.current()?.id))),
    )

  /** Write `input` to the next process; the pickup tracker follows it there. */
  const writeAgain = (input: Omit<Written, "proc" | "heardAt">) =>
    Effect.gen(function* () {
      const next = yield* options.processes().ensure
      yield* options.afterLaunch(next.fresh)
      runs.sent({ uuid: input.uuid, deliveryId: input.deliveryId, runId: input.runId })
      yield* next.proc.send(input.frame)
      // After the write, not before: a write that fails leaves the input held, and released below.
      pickup.written({ uuid: input.uuid, deliveryId: input.deliveryId, runId: input.runId })
    }).pipe(
      Effect.tapError(() =>
        release(input.uuid, "Claude Code could not be given it again after its process ended"),
      ),
      Effect.onInterrupt(() => release(input.uuid, "the session ended before it was written again")),
    )

  const replay = (written: Written) =>
    Effect.gen(function* () {
      const run = runs.current()
      if (run?.id !== written.runId)
        return yield* release(written.uuid, "its run ended before it could be written again")
      yield* writeAgain(written)
      options.written()
    }).pipe(
      Effect.catch((error) => {
        const run = runs.current()
        return run?.id === written.runId ? runs.end(run, "Failed", { error: error.message }) : Effect.void
      }),
    )

  const unread = (proc: LiveProcess) =>
    Effect.gen(function* () {
      const written = last
      if (!written || written.proc !== proc || proc.heard !== written.heardAt || !options.stored)
        return undefined
      if (runs.current()?.id !== written.runId) return undefined
      last = undefined
      if (yield* options.stored(options.cliId(), written.uuid)) return undefined
      pickup.hold(written.uuid)
      return ctx.fork(options.admission.withPermits(1)(replay(written))).pipe(Effect.asVoid)
    })

  const write = (proc: LiveProcess, input: Input, steer: Record<string, unknown> | undefined) =>
    proc.send(steer ?? input.frame).pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          const { run, ...rest } = input
          if (!steer) last = { ...rest, runId: run.id, proc, heardAt: proc.heard }
        }),
      ),
      // The pipe refused it: the process is gone; once more, to a new one.
      Effect.catchTag("ProcessExited", () => {
        if (steer) return Effect.void
        // Held unless its exit was already reported (then it stays reported, once).
        pickup.hold(input.uuid)
        return writeAgain({
          uuid: input.uuid,
          deliveryId: input.deliveryId,
          runId: input.run.id,
          frame: input.frame,
        })
      }),
      Effect.tapError((error) => runs.end(input.run, "Failed", { error: error.message })),
    )

  return { write, unread }
}

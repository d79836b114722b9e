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
 */
import { Effect, type Semaphore } from "effect"
import type { ProcessExited } from "../errors.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { RunState } from "../types.ts"
import type { SessionError } from "../errors.ts"
import type { SessionContext } from "./context.ts"
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
  /** `proc` died: replay its unread prompt (true) or leave the exit to fail the run (false). */
  readonly unread: (proc: LiveProcess) => Effect.Effect<boolean, never, Broker>
}

export const makeUnreadReplay = (options: {
  readonly ctx: SessionContext
  readonly runs: RunLedger
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
  const { ctx, runs } = options

  const replay = (written: Written) =>
    Effect.gen(function* () {
      const run = runs.current()
      if (run?.id !== written.runId) return
      const next = yield* options.processes().ensure
      yield* options.afterLaunch(next.fresh)
      runs.sent({ uuid: written.uuid, deliveryId: written.deliveryId, runId: written.runId })
      yield* next.proc.send(written.frame)
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
      if (!written || written.proc !== proc || proc.heard !== written.heardAt || !options.stored) return false
      if (runs.current()?.id !== written.runId) return false
      last = undefined
      if (yield* options.stored(options.cliId(), written.uuid)) return false
      yield* ctx.fork(options.admission.withPermits(1)(replay(written)))
      return true
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
      Effect.catchTag("ProcessExited", () =>
        steer
          ? Effect.void
          : Effect.gen(function* () {
              const again = yield* options.processes().ensure
              yield* options.afterLaunch(again.fresh)
              runs.sent({ uuid: input.uuid, deliveryId: input.deliveryId, runId: input.run.id })
              yield* again.proc.send(input.frame)
            }),
      ),
      Effect.tapError((error) => runs.end(input.run, "Failed", { error: error.message })),
    )

  return { write, unread }
}

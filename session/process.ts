/**
 * The process lifecycle of one session: at most one `claude` process at a
 * time, each in its own scope under the session's. A launch itself (spawn,
 * reader, silence watch, `initialize`) is session/spawn.ts; this file decides
 * when to launch and what a process's end means.
 *
 * - Launch: the arguments are computed at every launch (the agent reads its
 *   knobs fresh). A launch the CLI refuses with a next try to come
 *   (session/conversation.ts) is followed by that try.
 * - A process that exits fails every control request still waiting (its
 *   channel's `failAll`), drops the open approvals and questions, and fails
 *   the run in flight with the last lines of stderr (or ends it Cancelled
 *   when cancel was under way). An exit we caused (stop) is not news.
 * - A process that stopped answering (silent past the CLI's own bounds:
 *   session/silence.ts; or an `interrupt` left unanswered) is aborted: its
 *   run ends at once (Failed, or Cancelled when cancel was under way) with a
 *   notice saying why, the process is killed and a new one is started on
 *   the conversation. Its waiting inputs are reported unknown at the abort:
 *   its exit comes after the session moved on, and reports nothing.
 * - Inputs a process had and never showed the model took are reported
 *   unknown at its exit, except one a replay carries to the next process.
 * - Abandon (close): every waiter, `initialize` included, fails at once. A
 *   launch the close overtakes fails with a clear error and leaves no
 *   process: before its spawn it never spawns; during it, the close waits
 *   for the spawn's answer and the launch kills what it spawned.
 */
import { Deferred, Effect, Exit, Scope } from "effect"
import { ProcessExited, type SessionError } from "../errors.ts"
import type { Broker, ProcessExit } from "../sdk/plugin-api.ts"
import type { Approvals } from "./approvals.ts"
import { deliveryEvent, type PickupTracker } from "./pickup.ts"
import { launchProcess, type LiveProcess, type ProcessSlot, type SpawnOptions } from "./spawn.ts"

export type { LiveProcess, PreparedLaunch } from "./spawn.ts"

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
  /** The process stopped answering: end its run now, kill it, start another (`why` says what happened). */
  readonly abort: (state: LiveProcess, why: string) => Effect.Effect<void, never, Broker>
  /** The session closes: every request still waiting (an `initialize` in flight) fails now. */
  readonly abandon: Effect.Effect<void>
}

export interface ProcessOptions extends SpawnOptions {
  readonly approvals: Approvals
  readonly pickup: PickupTracker
  readonly notice: (level: "warning" | "error", text: string) => Effect.Effect<void>
  /** Start a process again after an abort (the owner serializes it with prompts). */
  readonly relaunch: Effect.Effect<void>
  /** The process died: the owner's replay of a prompt it left unread, if any (started after the exit's reports). */
  readonly unread: (
    state: LiveProcess,
  ) => Effect.Effect<Effect.Effect<void, never, Broker> | undefined, never, Broker>
  /** The conversation's next try should the CLI refuse a launch's (session/conversation.ts). */
  readonly fallback: {
    readonly pending: () => boolean
    readonly refused: (stderr: string) => Effect.Effect<boolean, never, Broker>
    readonly launched: () => void
  }
}

/** Inputs still waiting when their process ends: nothing can prove their delivery any more. */
export const reportUnknown = (
  options: Pick<ProcessOptions, "ctx" | "pickup" | "runs">,
  reason: string,
  alsoHeld = false,
): Effect.Effect<void> =>
  Effect.suspend(() =>
    options.ctx.emitAll(
      options.pickup
        .processEnded(reason, alsoHeld)
        .map((report) => deliveryEvent(options.ctx.sid, report, options.runs.current()?.id)),
    ),
  )

export const makeProcessKeeper = (options: ProcessOptions): ProcessKeeper => {
  const { runs } = options
  const slot: ProcessSlot = { proc: undefined, closing: false, spawning: undefined }

  const onExit = (state: LiveProcess, exit: ProcessExit, stderr: string) =>
    Effect.gen(function* () {
      state.exited = true
      const error = new ProcessExited({ code: exit.code, signal: exit.signal, stderr })
      yield* state.channel.failAll(error)
      if (slot.proc !== state) return
      slot.proc = undefined
      // A launch the CLI refused, with a next try to come: that launch goes on, this exit is no news.
      if (!state.initialized && options.fallback.pending()) return
      const run = runs.current()
      // A prompt the process died without reading: the owner writes it to a new one instead
      // (decided first, so its input is held back from this process's unknown reports).
      const replay = !state.stopping && run && !run.cancelling ? yield* options.unread(state) : undefined
      yield* reportUnknown(options, "the Claude Code process ended before it showed the model took it")
      runs.forgetSent()
      yield* options.approvals.settleAll("the Claude Code process ended")
      if (state.stopping) return
      const resumes = `${error.message}. The next prompt resumes the conversation.`
      if (replay) return yield* replay
      if (run) {
        const cancelled = run.cancelling
        yield* runs.end(run, cancelled ? "Cancelled" : "Failed", cancelled ? {} : { error: error.message })
        if (!cancelled) yield* options.notice("error", resumes)
      } else if (exit.code !== 0) yield* options.notice("warning", resumes)
    })

  const abort = (state: LiveProcess, why: string) =>
    Effect.gen(function* () {
      // Only the process in charge: an old one's late timeout must not end a newer one's run.
      if (state.stopping || state.exited || slot.proc !== state) return
      state.stopping = true
      slot.proc = undefined
      yield* reportUnknown(options, "Claude Code stopped answering before it showed the model took it")
      runs.forgetSent()
      yield* options.approvals.settleAll("the Claude Code process stopped answering")
      const run = runs.current()
      const text = `${why}: Claude Code was restarted on the conversation.`
      if (run) {
        const cancelled = run.cancelling
        yield* runs.end(run, cancelled ? "Cancelled" : "Failed", cancelled ? {} : { error: text })
      }
      yield* options.notice("error", text)
      yield* state.channel.failAll(new ProcessExited({ code: null, signal: "SIGKILL", stderr: why }))
      yield* Scope.close(state.scope, Exit.void)
      yield* options.relaunch
    })

  const stopProcess = (state: LiveProcess) =>
    Effect.suspend(() => {
      state.stopping = true
      if (slot.proc === state) slot.proc = undefined
      return Scope.close(state.scope, Exit.void)
    })

  const launch = launchProcess(options, slot, { exited: onExit, abort, stop: stopProcess })

  /** Launch; should the CLI refuse the conversation and a next try exist, launch that. */
  const launchTrying: Effect.Effect<LiveProcess, SessionError, Broker> = Effect.suspend(() =>
    launch().pipe(
      Effect.tap(() => Effect.sync(options.fallback.launched)),
      Effect.catchTag("ProcessExited", (exited) =>
        Effect.flatMap(options.fallback.refused(exited.stderr), (again) =>
          again ? launchTrying : Effect.fail(exited),
        ),
      ),
    ),
  )

  const ensure = Effect.suspend(() =>
    slot.proc && !slot.proc.exited
      ? Effect.succeed({ proc: slot.proc, fresh: false })
      : launchTrying.pipe(Effect.map((launched) => ({ proc: launched, fresh: true }))),
  )

  return {
    current: () => (slot.proc && !slot.proc.exited ? slot.proc : undefined),
    ensure,
    stop: Effect.suspend(() => (slot.proc ? stopProcess(slot.proc) : Effect.void)),
    markStopping: () => {
      slot.closing = true
      if (slot.proc) slot.proc.stopping = true
    },
    abort,
    abandon: Effect.suspend(() =>
      Effect.andThen(slot.spawning ? Deferred.await(slot.spawning) : Effect.void, () =>
        slot.proc
          ? slot.proc.channel.failAll(
              new ProcessExited({ code: null, signal: "SIGTERM", stderr: "the session closed" }),
            )
          : Effect.void,
      ),
    ),
  }
}

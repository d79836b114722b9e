/**
 * The owner's two stops of a session's process. A restart (a rewind) ends
 * the run in flight Cancelled, settles the open approvals and questions,
 * reports the inputs still waiting unknown and starts a process on the new
 * start. A close does the same for good, once: an `initialize` in flight
 * fails at once, the reader finishes what the process already wrote, and
 * every input still waiting (a replay's held one included) is reported
 * unknown before the durable record is settled.
 */
import { Effect, Exit, Scope } from "effect"
import type { Mapper } from "../map.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { StartMode } from "../types.ts"
import type { Approvals } from "./approvals.ts"
import type { SessionContext } from "./context.ts"
import type { ConversationStart } from "./conversation.ts"
import type { PickupTracker } from "./pickup.ts"
import { type ProcessKeeper, reportUnknown } from "./process.ts"
import type { RunLedger } from "./runs.ts"
import type { UndeliveredRecord } from "./undelivered.ts"

export interface StopParts {
  readonly ctx: SessionContext
  readonly runs: RunLedger
  readonly approvals: Approvals
  readonly processes: ProcessKeeper
  readonly pickup: PickupTracker
  readonly undelivered: UndeliveredRecord
  readonly conversation: ConversationStart
  readonly sessionScope: Scope.Closeable
  /** The owner's after-launch work, for the process a restart starts. */
  readonly afterLaunch: (fresh: boolean) => Effect.Effect<void, never, Broker>
  readonly makeMapper: (cliId: string) => Mapper
}

export const makeStops = (parts: StopParts) => {
  const { ctx, runs, approvals, processes, pickup, conversation } = parts
  let closed = false

  /** Stop the process and start again on `next` (the caller holds the session's admission). */
  const restart = Effect.fn("claude.session.restart")(function* (next: StartMode) {
    const current = runs.current()
    if (current) yield* runs.end(current, "Cancelled")
    yield* approvals.settleAll("the conversation was rewound")
    yield* processes.stop
    yield* reportUnknown({ ctx, pickup, runs }, "the conversation was restarted before the model took it")
    runs.forgetSent()
    if (next.cliId !== conversation.current().cliId) ctx.mapper = parts.makeMapper(next.cliId)
    conversation.set(next)
    yield* processes.ensure
    yield* parts.afterLaunch(true)
  })

  const close = Effect.fn("claude.session.close")(function* () {
    if (closed) return
    closed = true
    processes.markStopping()
    yield* approvals.settleAll("the session closed")
    // An initialize in flight fails now instead of waiting out its timeout.
    yield* processes.abandon
    // Closing lets the reader finish what the process already wrote (a last result).
    yield* Scope.close(parts.sessionScope, Exit.void)
    yield* runs.closeCurrent
    yield* reportUnknown({ ctx, pickup, runs }, "the session closed before the model took it", true)
    yield* parts.undelivered.settled
  })

  return { restart, close, closed: () => closed }
}

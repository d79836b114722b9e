/**
 * Mutable state of a live session: the start mode of its next launch, the
 * run in flight, and the approvals and questions waiting for the user.
 * Plain data, owned by session.ts and changed only from its fibers.
 */
import type { Fiber } from "effect"

/** How a `claude` process joins its conversation (the notes' four start modes). */
export type StartMode =
  /** A new conversation under this id (`--session-id`). */
  | { readonly kind: "new"; readonly cliId: string }
  /** The conversation as it is (`--resume`). */
  | { readonly kind: "resume"; readonly cliId: string }
  /** The conversation cut after the message `at` (`--resume … --resume-session-at`). */
  | { readonly kind: "resumeAt"; readonly cliId: string; readonly at: string }
  /** A copy of `origin` under a new id (`--resume <origin> --fork-session --session-id`), cut after `at` if given. */
  | { readonly kind: "fork"; readonly origin: string; readonly cliId: string; readonly at?: string }

/** One turn (or several merged by steering) from RunStarted to its one end. */
export interface RunState {
  readonly id: string
  /** Delivery ids reported on RunStarted and RunEnded. */
  readonly deliveryIds: string[]
  /** Set by cancel: the run ends Cancelled at the next result or the watchdog. */
  cancelling: boolean
  watchdog: Fiber.Fiber<unknown, unknown> | undefined
  ended: boolean
}

/** A `can_use_tool` request waiting for the user. */
export interface PendingRequest {
  readonly requestId: string
  readonly kind: "approval" | "question"
  readonly toolName: string
  readonly toolUseId: string | undefined
  readonly input: Readonly<Record<string, unknown>>
  /** The CLI's `permission_suggestions`, sent back as updatedPermissions on allow_always. */
  readonly suggestions: ReadonlyArray<unknown> | undefined
  /** The subagent task the request came from (its approval lands there). */
  readonly taskId: string | undefined
  readonly runId: string | undefined
}

/** An input the CLI has not reported consuming yet (native UUID → host delivery id). */
export interface SentInput {
  readonly uuid: string
  readonly deliveryId: string | undefined
  readonly runId: string
}

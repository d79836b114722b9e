/**
 * Which conversation the session's next launch joins. A new session starts
 * `--session-id`; once a user message is written, later launches
 * `--resume` it. That resume is a guess until checked: the CLI may have died
 * before it stored the conversation (2.1.332 then answers `--resume` with
 * "No conversation found with session ID" for ever), so the owner's
 * `recover` reads the transcript before such a launch and may start anew
 * instead, and the host is told why.
 */
import { Effect } from "effect"
import type { Broker } from "../sdk/plugin-api.ts"
import type { StartMode } from "../types.ts"

/** What a relaunch that guessed `--resume` should really do (the agent reads the transcript). */
export interface Recovery {
  readonly start: StartMode
  /** Said to the host when the start is not the guess. */
  readonly notice?: string | undefined
}

export type Recover = (guess: StartMode) => Effect.Effect<Recovery, never, Broker>

export interface ConversationStart {
  readonly current: () => StartMode
  /** A user message was written to this conversation. */
  readonly written: () => void
  /** Chosen on purpose (a rewind): no guess. */
  readonly set: (next: StartMode) => void
  /** The start the next launch uses, a guessed resume checked first. */
  readonly forLaunch: Effect.Effect<StartMode, never, Broker>
}

export const makeConversationStart = (
  initial: StartMode,
  recover: Recover | undefined,
  warn: (text: string) => Effect.Effect<void>,
): ConversationStart => {
  let start = initial
  let guessed = false
  return {
    current: () => start,
    written: () => {
      if (start.kind !== "resume") guessed = true
      start = { kind: "resume", cliId: start.cliId }
    },
    set: (next) => {
      start = next
      guessed = false
    },
    forLaunch: Effect.gen(function* () {
      if (!guessed || !recover) return start
      guessed = false
      const recovery = yield* recover(start)
      start = recovery.start
      if (recovery.notice) yield* warn(recovery.notice)
      return start
    }),
  }
}

/**
 * Which conversation the session's next launch joins. A new session starts
 * `--session-id`; once a user message is written, later launches
 * `--resume` it. That resume is a guess until checked: the CLI may have died
 * before it stored the conversation (2.1.332 then answers `--resume` with
 * "No conversation found with session ID" for ever), so the owner's
 * `recover` reads the transcript before such a launch and may start anew
 * instead, and the host is told why. Where the transcript cannot be read,
 * the recovery names what to try next (`orElse`) should the CLI refuse the
 * start; the launch moves on to it at once.
 */
import { Effect } from "effect"
import type { Broker } from "../sdk/plugin-api.ts"
import type { StartMode } from "../types.ts"

/** What a relaunch that guessed `--resume` should really do (the agent reads the transcript). */
export interface Recovery {
  readonly start: StartMode
  /** Said to the host when the start is not the guess. */
  readonly notice?: string | undefined
  /**
   * The next try when the CLI refuses `start` at launch (it holds no such
   * conversation, or already one under that id): asked only then.
   */
  readonly orElse?: Effect.Effect<Recovery, never, Broker> | undefined
}

/**
 * Did the CLI refuse the launch's conversation? 2.1.332 exits with "No
 * conversation found with session ID: …" for a `--resume` it cannot find
 * and "Session ID … is already in use." for a `--session-id` it has a file for.
 */
export const refusedConversation = (stderr: string): boolean =>
  stderr.includes("No conversation found") || stderr.includes("is already in use")

export type Recover = (guess: StartMode) => Effect.Effect<Recovery, never, Broker>

export interface ConversationStart {
  readonly current: () => StartMode
  /** A user message was written to this conversation. */
  readonly written: () => void
  /** Chosen on purpose (a rewind): no guess. */
  readonly set: (next: StartMode) => void
  /** The start the next launch uses, a guessed resume checked first. */
  readonly forLaunch: Effect.Effect<StartMode, never, Broker>
  /** Is there a next try should the CLI refuse this launch's conversation? */
  readonly hasFallback: () => boolean
  /** The CLI refused the launch (its stderr): move to the next try; true when there is one to launch. */
  readonly refused: (stderr: string) => Effect.Effect<boolean, never, Broker>
  /** A launch succeeded: its start stands, no next try is kept. */
  readonly launched: () => void
}

export const makeConversationStart = (
  initial: StartMode,
  recover: Recover | undefined,
  warn: (text: string) => Effect.Effect<void>,
): ConversationStart => {
  let start = initial
  let guessed = false
  let fallback: Recovery["orElse"]
  const adopt = (recovery: Recovery) =>
    Effect.suspend(() => {
      start = recovery.start
      fallback = recovery.orElse
      return recovery.notice ? warn(recovery.notice) : Effect.void
    })
  return {
    current: () => start,
    written: () => {
      if (start.kind !== "resume") guessed = true
      start = { kind: "resume", cliId: start.cliId }
    },
    set: (next) => {
      start = next
      guessed = false
      fallback = undefined
    },
    forLaunch: Effect.gen(function* () {
      if (!guessed || !recover) return start
      guessed = false
      yield* adopt(yield* recover(start))
      return start
    }),
    hasFallback: () => fallback !== undefined,
    refused: (stderr) =>
      Effect.gen(function* () {
        const next = fallback
        if (next === undefined || !refusedConversation(stderr)) return false
        yield* adopt(yield* next)
        return true
      }),
    launched: () => {
      fallback = undefined
    },
  }
}

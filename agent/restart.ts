/**
 * How a conversation the CLI may have stored starts again: at a relaunch
 * after its process exited (the CLI may have died before it stored it) and
 * at `resume_session`. The transcript decides, where the plugin may read it:
 *
 * - it holds a prompt: `--resume` it;
 * - there is no file: `--session-id` under the same id, as new;
 * - a file without a prompt: the CLI refuses `--session-id` for it ("already
 *   in use") and cannot `--resume` it ("No conversation found"), so a fresh
 *   id under an alias (state.ts);
 * - the account's directory is outside the grants (agent/grants.ts): the
 *   transcript is unreadable, not missing, so `--resume` it; should the CLI
 *   refuse (it holds no such conversation), the same id as new, then a
 *   fresh id (each `orElse`).
 *
 * Each start that loses what came before says so.
 */
import { Effect } from "effect"
import { configDirFor } from "../config.ts"
import * as history from "../history.ts"
import type { Account } from "../instances.ts"
import { Fs, type Broker } from "../sdk/plugin-api.ts"
import type { Recovery } from "../session.ts"
import * as state from "../state.ts"
import { forkStart, unwrittenFork } from "./forks.ts"
import { readableDir } from "./grants.ts"

/** What the plugin can know of a conversation's transcript. */
export type StoredState = "prompts" | "missing" | "empty" | "unreadable"

/** The transcript of `cliId` as the plugin can see it. */
export const storedStateOf = (
  acct: Account,
  cwd: string,
  cliId: string,
): Effect.Effect<StoredState, never, Broker> =>
  Effect.gen(function* () {
    const configDir = yield* configDirFor(acct)
    if (!readableDir(configDir, (yield* Fs).paths.home)) return "unreadable"
    const stored = yield* history.readPrompts(configDir, cwd, cliId)
    return stored.prompts.length > 0 ? "prompts" : stored.found ? "empty" : "missing"
  })

const LOST = "Claude Code ended before it stored this conversation"

/** A fresh CLI id under the host's (the CLI holds the old one but cannot resume it). */
const freshAlias = (hostId: string, notice: string): Effect.Effect<Recovery, never, Broker> =>
  Effect.gen(function* () {
    const fresh = crypto.randomUUID()
    yield* state.setCliAlias(hostId, fresh)
    return { start: { kind: "new", cliId: fresh }, notice: `${notice}: it starts anew as ${fresh}` }
  })

/**
 * The start of `cliId`'s conversation. `lost`: a prompt was written to it
 * (a relaunch after an exit), so a start without it is news; at a resume, a
 * conversation never prompted starts as new without a word.
 */
export const restartOf = (
  acct: Account,
  hostId: string,
  cwd: string,
  cliId: string,
  lost: boolean,
): Effect.Effect<Recovery, never, Broker> =>
  Effect.gen(function* () {
    const resume = { kind: "resume", cliId } as const
    const asNew = { kind: "new", cliId } as const
    switch (yield* storedStateOf(acct, cwd, cliId)) {
      case "prompts":
        return { start: resume }
      case "missing": {
        // A fork the CLI never wrote is copied again from its origin.
        const fork = yield* unwrittenFork(acct, hostId, cwd)
        if (fork)
          return lost
            ? { start: forkStart(fork, cliId), notice: `${LOST}: it starts again from the chat it forked` }
            : { start: forkStart(fork, cliId) }
        return lost
          ? { start: asNew, notice: `${LOST}: it starts anew under the same id, without the turns before` }
          : { start: asNew }
      }
      case "empty":
        return yield* freshAlias(hostId, `${LOST}, without a prompt`)
      case "unreadable": {
        const refused = "Claude Code holds no conversation it can resume under this id"
        const again = `${refused}: it starts anew under the same id, without the turns before`
        return {
          start: resume,
          orElse: Effect.succeed({
            start: asNew,
            ...(lost ? { notice: again } : {}),
            orElse: freshAlias(hostId, refused),
          }),
        }
      }
    }
  })

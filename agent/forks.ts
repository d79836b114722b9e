/**
 * Forks before the CLI writes them. A fork is the same conversation taken
 * elsewhere, but 2.1.332 writes a fork's transcript only at its first
 * prompt: until then the plugin keeps the fork's record (state.ts
 * PendingFork) and serves it from its origin. It lists (with the origin's
 * title), reads back as the origin's chat (cut where a rewind moved it), is
 * rewound to the origin's prompts (copied again, cut before the prompt), and
 * starts again as that copy after a close or an exit. Once the CLI has
 * written it, the record goes and the fork is a conversation like any other.
 */
import { Effect } from "effect"
import { configDirFor } from "../config.ts"
import * as history from "../history.ts"
import type { Account } from "../instances.ts"
import { type Broker, Fs } from "../sdk/plugin-api.ts"
import type { SessionPage, SessionSummary } from "../sdk/protocol.ts"
import * as state from "../state.ts"
import type { StartMode } from "../types.ts"

/** The start that copies the fork's origin again, under the fork's id. */
export const forkStart = (fork: state.PendingFork, cliId: string): StartMode => ({
  kind: "fork",
  origin: fork.origin,
  cliId,
  ...(fork.at === undefined ? {} : { at: fork.at }),
})

/** Has the CLI written `cliId`'s transcript? */
const written = (configDir: string, cwd: string, cliId: string): Effect.Effect<boolean, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* history.projectDir(configDir, cwd)
    return (yield* (yield* Fs).stat(history.sessionFile(dir, cliId))) !== null
  })

/** The fork `hostId` is while the CLI has not written it (its record goes once it has). */
export const unwrittenFork = (
  acct: Account,
  hostId: string,
  cwd: string,
): Effect.Effect<state.PendingFork | undefined, never, Broker> =>
  Effect.gen(function* () {
    const fork = yield* state.pendingForkOf(hostId)
    if (fork === undefined) return undefined
    if (!(yield* written(yield* configDirFor(acct), cwd, hostId))) return fork
    yield* state.forgetForks([hostId])
    return undefined
  })

/**
 * A new fork of `originHost`: what it copies (the origin's conversation, or,
 * when the origin is itself a fork not yet written, what that one copies)
 * and what the list shows for it.
 */
export const forkOf = (
  acct: Account,
  originHost: string,
  cwd: string,
): Effect.Effect<state.PendingFork, never, Broker> =>
  Effect.gen(function* () {
    const unwritten = yield* unwrittenFork(acct, originHost, cwd)
    const origin = unwritten?.origin ?? (yield* state.cliIdFor(originHost))
    const at = unwritten?.at
    const configDir = yield* configDirFor(acct)
    const dir = yield* history.projectDir(configDir, cwd)
    const [title, stat] = yield* Effect.all(
      [
        history.readTitle(configDir, cwd, origin, at),
        Fs.use((fs) => fs.stat(history.sessionFile(dir, origin))),
      ],
      { concurrency: "unbounded" },
    )
    return {
      origin,
      ...(at === undefined ? {} : { at }),
      cwd,
      ...(title === undefined ? {} : { title }),
      forkedAt: new Date().toISOString(),
      size: stat?.size ?? 0,
    }
  })

/**
 * The first page of a listing with the forks the CLI has not written yet,
 * in their place by time (a fork the CLI wrote since is dropped from the
 * records; it lists as itself).
 */
export const withUnwrittenForks = (
  acct: Account,
  page: SessionPage,
  params: { readonly cwd?: string; readonly cursor?: string },
): Effect.Effect<SessionPage, never, Broker> =>
  Effect.gen(function* () {
    if (params.cursor !== undefined) return page
    const forks = Object.entries(yield* state.pendingForks()).filter(
      ([id, fork]) =>
        (params.cwd === undefined || fork.cwd === params.cwd) &&
        !page.sessions.some((s) => s.session_id === id),
    )
    if (forks.length === 0) return page
    const configDir = yield* configDirFor(acct)
    const added: SessionSummary[] = []
    const gone: string[] = []
    for (const [id, fork] of forks) {
      if (yield* written(configDir, fork.cwd, id)) gone.push(id)
      else
        added.push({
          session_id: id,
          title: fork.title ?? "Fork",
          created_at: fork.forkedAt,
          modified_at: fork.forkedAt,
          cwd: fork.cwd,
          size_bytes: fork.size,
        })
    }
    yield* state.forgetForks(gone)
    const sessions = [...page.sessions, ...added].sort((a, b) => b.modified_at.localeCompare(a.modified_at))
    return { ...page, sessions }
  })

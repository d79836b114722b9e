/**
 * Deleting a chat. The plugin writes no files (its file grants are
 * read-only), so a deleted chat's transcript stays in the CLI's own store,
 * where `claude --resume` still finds it; for every front end of this
 * plugin the chat is gone: it leaves every list, and reading, resuming or
 * forking it fails as for an unknown id. The ids are kept in plugin storage
 * under `deleted`; the chat's own state (`session:<id>`) goes with it.
 */
import { Effect } from "effect"
import { SessionNotFound } from "../errors.ts"
import { Storage } from "../sdk/plugin-api.ts"
import type { AgentFailure, AgentProvider } from "../sdk/protocol.ts"
import { sessionKey } from "../state.ts"
import type { AgentContext } from "./context.ts"

export const DELETED_KEY = "deleted"

type Conversations = Pick<
  AgentProvider,
  "listSessions" | "readSession" | "resumeSession" | "forkSession" | "closeSession"
>

const readDeleted = Effect.gen(function* () {
  const stored = yield* (yield* Storage).get(DELETED_KEY)
  return new Set(Array.isArray(stored) ? stored.filter((id): id is string => typeof id === "string") : [])
})

/** The conversation methods with deleted chats left out, and `deleteSession`. */
export const withDeletes = <M extends Conversations>(
  ctx: AgentContext,
  methods: M,
): M & Pick<AgentProvider, "deleteSession"> => {
  const { call, sessions, closeOpen } = ctx
  /** Fail as for an unknown chat when `sessionId` was deleted, else run `next`. */
  const refuse = <A>(
    sessionId: string,
    next: () => Effect.Effect<A, AgentFailure>,
  ): Effect.Effect<A, AgentFailure> =>
    Effect.flatMap(call(readDeleted), (deleted) =>
      deleted.has(sessionId) ? call(Effect.fail(new SessionNotFound({ sessionId }))) : next(),
    )

  /** Is there a chat of this id: open here, or in the stored list (every page). */
  const exists = (sessionId: string) =>
    Effect.gen(function* () {
      if (sessions.has(sessionId)) return true
      let cursor: string | undefined
      do {
        const page = yield* methods.listSessions(cursor === undefined ? {} : { cursor })
        if (page.sessions.some((s) => s.session_id === sessionId)) return true
        cursor = page.cursor
      } while (cursor !== undefined)
      return false
    })

  return {
    ...methods,
    listSessions: (params) =>
      Effect.gen(function* () {
        const page = yield* methods.listSessions(params)
        const deleted = yield* call(readDeleted)
        if (deleted.size === 0) return page
        return { ...page, sessions: page.sessions.filter((s) => !deleted.has(s.session_id)) }
      }),
    readSession: (params) => refuse(params.sessionId, () => methods.readSession(params)),
    resumeSession: (params) => refuse(params.sessionId, () => methods.resumeSession(params)),
    forkSession: (params) => refuse(params.sessionId, () => methods.forkSession(params)),
    deleteSession: ({ sessionId }) =>
      Effect.gen(function* () {
        const deleted = yield* call(readDeleted)
        if (deleted.has(sessionId) || !(yield* exists(sessionId)))
          return yield* call(Effect.fail(new SessionNotFound({ sessionId })))
        const open = sessions.get(sessionId)
        if (open) yield* closeOpen(sessionId, open)
        yield* call(
          Effect.gen(function* () {
            const storage = yield* Storage
            yield* storage.set(DELETED_KEY, [...deleted, sessionId])
            yield* storage.delete(sessionKey(sessionId))
          }),
        )
      }),
  }
}

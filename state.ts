/**
 * What the plugin remembers about a host session beyond the CLI's own
 * transcript, in plugin storage under `session:<host session id>`:
 * `cli`, the id the CLI files the conversation under when it is not the
 * host's id (after a rewind to nothing), and `sent`, which user record each
 * host prompt became (its index among the conversation's prompts), so
 * rollback can find the record to resume before.
 */
import { Effect } from "effect"
import { z } from "zod"
import { Log, Storage } from "./sdk/plugin-api.ts"

export const SessionState = z.object({
  cli: z.string().optional(),
  sent: z.record(z.string(), z.number().int().nonnegative()).default({}),
})
export type SessionState = z.infer<typeof SessionState>

export const sessionKey = (hostId: string): string => `session:${hostId}`

const fresh = (): SessionState => ({ sent: {} })

/** The stored state; a missing value is fresh state, a corrupt one too (with a warning). */
export const loadSessionState = (hostId: string): Effect.Effect<SessionState, never, Storage | Log> =>
  Effect.gen(function* () {
    const stored = yield* (yield* Storage).get(sessionKey(hostId))
    if (stored === undefined || stored === null) return fresh()
    const parsed = SessionState.safeParse(stored)
    if (parsed.success) return parsed.data
    yield* (yield* Log).warn(`session state of ${hostId} is unreadable; starting fresh`, {
      issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
    })
    return fresh()
  })

export const saveSessionState = (hostId: string, state: SessionState): Effect.Effect<void, never, Storage> =>
  Effect.gen(function* () {
    const value: SessionState =
      state.cli === undefined ? { sent: state.sent } : { cli: state.cli, sent: state.sent }
    yield* (yield* Storage).set(sessionKey(hostId), value)
  })

/** The CLI's id for a host session: its alias, else the host id itself. */
export const cliIdFor = (hostId: string): Effect.Effect<string, never, Storage | Log> =>
  Effect.map(loadSessionState(hostId), (state) => state.cli ?? hostId)

/** Record that host item `itemId` became the conversation's `index`-th user prompt. */
export const rememberSent = (
  hostId: string,
  itemId: string,
  index: number,
): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    const state = yield* loadSessionState(hostId)
    yield* saveSessionState(hostId, { ...state, sent: { ...state.sent, [itemId]: index } })
  })

/** File the conversation under a new CLI id (a rewind to nothing); the old prompt map no longer applies. */
export const setCliAlias = (hostId: string, cliId: string): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    yield* saveSessionState(hostId, { cli: cliId, sent: {} })
  })

/** Forget prompts whose index is `fromIndex` or later (they were rewound away). */
export const forgetSentFrom = (
  hostId: string,
  fromIndex: number,
): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    const state = yield* loadSessionState(hostId)
    const sent = Object.fromEntries(Object.entries(state.sent).filter(([, index]) => index < fromIndex))
    yield* saveSessionState(hostId, { ...state, sent })
  })

/** The user record index a host item was sent as, if known. */
export const sentIndexOf = (
  hostId: string,
  itemId: string,
): Effect.Effect<number | undefined, never, Storage | Log> =>
  Effect.map(loadSessionState(hostId), (state) => state.sent[itemId])

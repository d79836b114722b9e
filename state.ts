/**
 * What the plugin remembers about a host session beyond the CLI's own
 * transcript, in plugin storage under `session:<host session id>`:
 * `cli`, the id the CLI files the conversation under when it is not the
 * host's id (after a rewind to nothing), and `sent`, which user record each
 * host prompt became, so rollback can find the record to resume before.
 *
 * `sent` values are the record's uuid (the UUID the prompt was sent with on
 * stdin: the CLI stores it as the record's uuid). Older versions, and the
 * Rust plugin, kept the prompt's index among the conversation's prompts
 * instead; those numbers are still read.
 */
import { Effect } from "effect"
import { z } from "zod"
import { Log, Storage } from "./sdk/plugin-api.ts"

/** A sent prompt: its record uuid, or (older state) its index among the conversation's prompts. */
export const SentRecord = z.union([z.string().min(1), z.number().int().nonnegative()])
export type SentRecord = z.infer<typeof SentRecord>

export const SessionState = z.object({
  cli: z.string().optional(),
  sent: z.record(z.string(), SentRecord).default({}),
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

/** Record that host item `itemId` became the user record `uuid`. */
export const rememberSent = (
  hostId: string,
  itemId: string,
  uuid: string,
): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    const state = yield* loadSessionState(hostId)
    yield* saveSessionState(hostId, { ...state, sent: { ...state.sent, [itemId]: uuid } })
  })

/** File the conversation under a new CLI id (a rewind to nothing); the old prompt map no longer applies. */
export const setCliAlias = (hostId: string, cliId: string): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    yield* saveSessionState(hostId, { cli: cliId, sent: {} })
  })

/**
 * Keep only the prompts a rewind kept: those whose record is in `keptUuids`
 * and, for older index values, those before `keptCount`.
 */
export const keepSent = (
  hostId: string,
  keptUuids: ReadonlySet<string>,
  keptCount: number,
): Effect.Effect<void, never, Storage | Log> =>
  Effect.gen(function* () {
    const state = yield* loadSessionState(hostId)
    const sent = Object.fromEntries(
      Object.entries(state.sent).filter(([, record]) =>
        typeof record === "string" ? keptUuids.has(record) : record < keptCount,
      ),
    )
    yield* saveSessionState(hostId, { ...state, sent })
  })

/** The user record a host item was sent as (uuid, or an older index), if known. */
export const sentRecordOf = (
  hostId: string,
  itemId: string,
): Effect.Effect<SentRecord | undefined, never, Storage | Log> =>
  Effect.map(loadSessionState(hostId), (state) => state.sent[itemId])

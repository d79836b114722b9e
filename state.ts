/**
 * What the plugin remembers about a host session beyond the CLI's own
 * transcript, in plugin storage under `session:<host session id>`:
 * `cli`, the id the CLI files the conversation under when it is not the
 * host's id (after a rewind to nothing), and `sent`, which user record each
 * host prompt became, so rollback can find the record to resume before.
 *
 * `options` are the session's option values as last accepted (the host's
 * record), so a fork of a chat that is not open in this process keeps them.
 *
 * `sent` values are the record's uuid (the UUID the prompt was sent with on
 * stdin: the CLI stores it as the record's uuid). Older versions, and the
 * Rust plugin, kept the prompt's index among the conversation's prompts
 * instead; those numbers are still read.
 *
 * Every change is a read, a change and a write of the whole record: changes
 * to one storage run one at a time (`serialised`), so two of them (a
 * prompt's `sent` entry and an option change) never drop each other's.
 */
import { Effect, Semaphore } from "effect"
import { z } from "zod"
import { Log, Storage, type StorageShape } from "./sdk/plugin-api.ts"

/** A sent prompt: its record uuid, or (older state) its index among the conversation's prompts. */
export const SentRecord = z.union([z.string().min(1), z.number().int().nonnegative()])
export type SentRecord = z.infer<typeof SentRecord>

export const SessionState = z.object({
  cli: z.string().optional(),
  sent: z.record(z.string(), SentRecord).default({}),
  options: z.record(z.string(), z.union([z.string(), z.boolean()])).optional(),
})
export type SessionState = z.infer<typeof SessionState>

export const sessionKey = (hostId: string): string => `session:${hostId}`

/** One lock per storage: its read-change-write updates run one at a time. */
const locks = new WeakMap<StorageShape, Semaphore.Semaphore>()

/** Run a read-change-write of stored state alone among this storage's others. */
const serialised = <A, R>(update: Effect.Effect<A, never, R>): Effect.Effect<A, never, R | Storage> =>
  Effect.gen(function* () {
    const storage = yield* Storage
    let lock = locks.get(storage)
    if (lock === undefined) {
      lock = Semaphore.makeUnsafe(1)
      locks.set(storage, lock)
    }
    return yield* lock.withPermits(1)(update)
  })

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
    const value: SessionState = {
      ...(state.cli !== undefined && { cli: state.cli }),
      sent: state.sent,
      ...(state.options !== undefined && { options: state.options }),
    }
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
  serialised(
    Effect.gen(function* () {
      const state = yield* loadSessionState(hostId)
      yield* saveSessionState(hostId, { ...state, sent: { ...state.sent, [itemId]: uuid } })
    }),
  )

/**
 * Every alias ever given, by host session: `{ <host id>: [<cli id>…] }`, the
 * last one current. The session list reads it once (not every session's
 * state) to show the live conversation under the host's id and hide the
 * transcripts a rewind to nothing left behind.
 */
export const ALIASES_KEY = "session-aliases"
const AliasIndex = z.record(z.string(), z.array(z.string()))

/** How the list names stored conversations: `rename` (CLI id → host id), `hidden` (left behind). */
export interface ListAliases {
  readonly rename: ReadonlyMap<string, string>
  readonly hidden: ReadonlySet<string>
}

/**
 * The index; when there is none yet, built once from every stored session
 * state (aliases from before the index, and the Rust plugin's imported ones).
 */
const loadAliasIndex = (): Effect.Effect<Record<string, string[]>, never, Storage | Log> =>
  Effect.gen(function* () {
    const storage = yield* Storage
    const stored = yield* storage.get(ALIASES_KEY)
    const parsed = AliasIndex.safeParse(stored)
    if (parsed.success) return parsed.data
    const index: Record<string, string[]> = {}
    for (const key of yield* storage.keys) {
      if (!key.startsWith("session:")) continue
      const hostId = key.slice("session:".length)
      const { cli } = yield* loadSessionState(hostId)
      if (cli !== undefined && cli !== hostId) index[hostId] = [cli]
    }
    yield* storage.set(ALIASES_KEY, index)
    return index
  })

export const listAliases = (): Effect.Effect<ListAliases, never, Storage | Log> =>
  // Serialised: the first read builds and stores the index.
  Effect.map(serialised(loadAliasIndex()), (index) => {
    const rename = new Map<string, string>()
    const hidden = new Set<string>()
    for (const [hostId, clis] of Object.entries(index)) {
      const current = clis[clis.length - 1]
      if (current === undefined) continue
      rename.set(current, hostId)
      hidden.add(hostId)
      for (const old of clis.slice(0, -1)) hidden.add(old)
    }
    for (const cli of rename.keys()) hidden.delete(cli)
    return { rename, hidden }
  })

/** File the conversation under a new CLI id (a rewind to nothing); the old prompt map no longer applies. */
export const setCliAlias = (hostId: string, cliId: string): Effect.Effect<void, never, Storage | Log> =>
  serialised(
    Effect.gen(function* () {
      const index = yield* loadAliasIndex()
      const state = yield* loadSessionState(hostId)
      yield* saveSessionState(hostId, { ...state, cli: cliId, sent: {} })
      const earlier = index[hostId] ?? (state.cli !== undefined ? [state.cli] : [])
      yield* (yield* Storage).set(ALIASES_KEY, { ...index, [hostId]: [...earlier, cliId] })
    }),
  )

/** Keep the session's option values (the host's record) for a later fork. */
export const rememberOptions = (
  hostId: string,
  options: Readonly<Record<string, string | boolean>>,
): Effect.Effect<void, never, Storage | Log> =>
  serialised(
    Effect.gen(function* () {
      const state = yield* loadSessionState(hostId)
      yield* saveSessionState(hostId, { ...state, options: { ...options } })
    }),
  )

/**
 * Keep only the prompts a rewind kept: those whose record is in `keptUuids`
 * and, for older index values, those before `keptCount`.
 */
export const keepSent = (
  hostId: string,
  keptUuids: ReadonlySet<string>,
  keptCount: number,
): Effect.Effect<void, never, Storage | Log> =>
  serialised(
    Effect.gen(function* () {
      const state = yield* loadSessionState(hostId)
      const sent = Object.fromEntries(
        Object.entries(state.sent).filter(([, record]) =>
          typeof record === "string" ? keptUuids.has(record) : record < keptCount,
        ),
      )
      yield* saveSessionState(hostId, { ...state, sent })
    }),
  )

/** The user record a host item was sent as (uuid, or an older index), if known. */
export const sentRecordOf = (
  hostId: string,
  itemId: string,
): Effect.Effect<SentRecord | undefined, never, Storage | Log> =>
  Effect.map(loadSessionState(hostId), (state) => state.sent[itemId])

/**
 * Forks whose conversation the CLI has not written yet: 2.1.332 writes a
 * fork's transcript only at its first prompt, so until then the fork is
 * this record, by host id: the conversation it copies (`origin`, cut after
 * `at` once a rewind moved it), and what the session list shows for it.
 */
export const FORKS_KEY = "session-forks"

export const PendingFork = z.object({
  origin: z.string().min(1),
  at: z.string().min(1).optional(),
  cwd: z.string(),
  title: z.string().optional(),
  forkedAt: z.string(),
  size: z.number().nonnegative(),
})
export type PendingFork = z.infer<typeof PendingFork>

const ForkIndex = z.record(z.string(), PendingFork)

const loadForks = (): Effect.Effect<Record<string, PendingFork>, never, Storage> =>
  Effect.gen(function* () {
    const parsed = ForkIndex.safeParse(yield* (yield* Storage).get(FORKS_KEY))
    return parsed.success ? parsed.data : {}
  })

/** Every fork not yet written by the CLI, by host id. */
export const pendingForks = (): Effect.Effect<Readonly<Record<string, PendingFork>>, never, Storage> =>
  loadForks()

/** The fork `hostId` is, while the CLI has not written it. */
export const pendingForkOf = (hostId: string): Effect.Effect<PendingFork | undefined, never, Storage> =>
  Effect.map(loadForks(), (forks) => forks[hostId])

/**
 * A fork opened: its record, and the origin's prompts as its own (the CLI
 * copies them with their uuids), so every prompt it shows can be rewound to.
 */
export const rememberFork = (
  hostId: string,
  fork: PendingFork,
  sent: Readonly<Record<string, SentRecord>>,
): Effect.Effect<void, never, Storage | Log> =>
  serialised(
    Effect.gen(function* () {
      const state = yield* loadSessionState(hostId)
      yield* saveSessionState(hostId, { ...state, sent: { ...sent, ...state.sent } })
      yield* (yield* Storage).set(FORKS_KEY, { ...(yield* loadForks()), [hostId]: fork })
    }),
  )

/** A fork not yet written was rewound: it now copies its origin only up to `at`. */
export const moveFork = (hostId: string, at: string): Effect.Effect<void, never, Storage> =>
  serialised(
    Effect.gen(function* () {
      const forks = yield* loadForks()
      const fork = forks[hostId]
      if (fork !== undefined) yield* (yield* Storage).set(FORKS_KEY, { ...forks, [hostId]: { ...fork, at } })
    }),
  )

/** The CLI wrote the fork (or it became a conversation of its own): no record any more. */
export const forgetForks = (hostIds: ReadonlyArray<string>): Effect.Effect<void, never, Storage> =>
  hostIds.length === 0
    ? Effect.void
    : serialised(
        Effect.gen(function* () {
          const forks = { ...(yield* loadForks()) }
          for (const id of hostIds) delete forks[id]
          yield* (yield* Storage).set(FORKS_KEY, forks)
        }),
      )

/**
 * The inputs of one host session written to the CLI but not yet reported
 * (`input_delivery`), kept in plugin storage under `undelivered:<host
 * session id>` so they outlive the plugin process and the host. A plugin
 * process that dies takes its pickup tracker with it; the next one that
 * opens or resumes the session reports each as `unknown` (nothing can prove
 * its delivery any more: UUID aliases are process-local, a stored user
 * record proves a write, not consumption), then forgets it.
 *
 * Rules it keeps:
 * - an input is recorded before its stdin write (awaited) and forgotten
 *   after its report went out (in the background: the event stream never
 *   waits for storage), so a crash between the two reports it again rather
 *   than never (a second `unknown` is the safe side);
 * - one write at a time per session, in order, each of the whole list;
 *   `settled` waits for the ones queued (a closing session's, before the
 *   next opening reads the record);
 * - bounded: at most `UNDELIVERED_CAP` inputs per session, the oldest
 *   dropped first (a live session has one or two waiting at a time);
 * - not a `cache:` key: deleting caches must not lose what the host is owed.
 */
import { type Context, Deferred, Effect, Semaphore } from "effect"
import { z } from "zod"
import { Storage } from "../sdk/plugin-api.ts"
import type { AgentEvent } from "../sdk/protocol.ts"

export const UNDELIVERED_CAP = 16

export const undeliveredKey = (hostId: string): string => `undelivered:${hostId}`

const Entry = z.object({ uuid: z.string().min(1), delivery_id: z.string().optional(), run_id: z.string() })
export type UndeliveredEntry = z.infer<typeof Entry>
const Entries = z.array(z.unknown())

export interface UndeliveredRecord {
  /** An input about to be written (awaited: it is on disk before the write). */
  readonly add: (entry: UndeliveredEntry) => Effect.Effect<void, never, Storage>
  /** Its report went out: forget it, written behind (nothing is written for an input it never held). */
  readonly forget: (uuid: string) => Effect.Effect<void, never, Storage>
  /** Every write queued so far is done. */
  readonly settled: Effect.Effect<void>
}

/** The record of one session as this process writes it; it starts empty (`takeUndelivered` ran first). */
export const makeUndeliveredRecord = (hostId: string): UndeliveredRecord => {
  const lock = Semaphore.makeUnsafe(1)
  let entries: UndeliveredEntry[] = []
  let last: Deferred.Deferred<void> | undefined
  const save = Effect.gen(function* () {
    const storage = yield* Storage
    yield* entries.length === 0
      ? storage.delete(undeliveredKey(hostId))
      : storage.set(undeliveredKey(hostId), entries)
  })
  return {
    add: (entry) =>
      lock.withPermits(1)(
        Effect.suspend(() => {
          entries = [...entries.filter((e) => e.uuid !== entry.uuid), entry].slice(-UNDELIVERED_CAP)
          return save
        }),
      ),
    forget: (uuid) =>
      Effect.suspend(() => {
        if (!entries.some((e) => e.uuid === uuid)) return Effect.void
        entries = entries.filter((e) => e.uuid !== uuid)
        const done = Deferred.makeUnsafe<void>()
        last = done
        // Detached: a write queued by a closing session still lands. Each writes the whole list as it
        // then is, so the last one queued leaves the final state: `settled` waits for that one.
        return lock
          .withPermits(1)(save)
          .pipe(Effect.ensuring(Deferred.succeed(done, undefined)), Effect.forkDetach, Effect.asVoid)
      }),
    settled: Effect.suspend(() => (last ? Deferred.await(last) : Effect.void)),
  }
}

/** Read and delete what an earlier process left: entries that do not parse are dropped, the rest kept in order. */
export const takeUndelivered = (hostId: string): Effect.Effect<UndeliveredEntry[], never, Storage> =>
  Effect.gen(function* () {
    const storage = yield* Storage
    const stored = yield* storage.get(undeliveredKey(hostId))
    if (stored === undefined) return []
    yield* storage.delete(undeliveredKey(hostId))
    const list = Entries.safeParse(stored)
    if (!list.success) return []
    return list.data.flatMap((raw) => {
      const entry = Entry.safeParse(raw)
      return entry.success ? [entry.data] : []
    })
  })

/** `emit` that also forgets each input whose report went out (after it: a crash between reports twice, never not at all). */
export const forgettingReported =
  (
    record: UndeliveredRecord,
    emit: (event: AgentEvent) => Effect.Effect<void>,
    services: Context.Context<Storage>,
  ) =>
  (event: AgentEvent): Effect.Effect<void> =>
    event.type === "input_delivery"
      ? emit(event).pipe(Effect.andThen(Effect.provideContext(record.forget(event.input_uuid), services)))
      : emit(event)

/** An input about to be written, as the record keeps it. */
export const undeliveredEntry = (
  uuid: string,
  deliveryId: string | undefined,
  runId: string,
): UndeliveredEntry => ({
  uuid,
  ...(deliveryId ? { delivery_id: deliveryId } : {}),
  run_id: runId,
})

/** Report what an earlier process (or this session's last opening) left: unknown, once each. */
export const reportUndelivered = (
  sessionId: string,
  emit: (event: AgentEvent) => Effect.Effect<void>,
): Effect.Effect<void, never, Storage> =>
  Effect.flatMap(takeUndelivered(sessionId), (left) =>
    Effect.forEach(left, (entry) => emit(unknownAfterRestart(sessionId, entry)), { discard: true }),
  )

/** The `unknown` report of an input an earlier process left undelivered. */
export const unknownAfterRestart = (sessionId: string, entry: UndeliveredEntry): AgentEvent => ({
  type: "input_delivery",
  session_id: sessionId,
  run_id: entry.run_id,
  input_uuid: entry.uuid,
  ...(entry.delivery_id ? { delivery_id: entry.delivery_id } : {}),
  state: "unknown",
  reason: "the plugin or host restarted before Claude Code showed the model took it",
})

/**
 * The Rust plugin's state, read once. The host moves its old folder
 * (`agents/claude/`) into the plugin's data folder as `legacy/`; its
 * accounts join `instances` and its session states become `session:<id>`,
 * never overwriting what storage already holds.
 */
import { Effect } from "effect"
import { INSTANCES_KEY } from "./instances.ts"
import { Fs, Log, Storage } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"

/** Set once the legacy folder has been read, so it is never read again. */
export const LEGACY_FLAG_KEY = "legacy:imported"

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

const hasId = (entry: unknown): entry is { id: string } =>
  typeof entry === "object" &&
  entry !== null &&
  typeof (entry as { id?: unknown }).id === "string" &&
  (entry as { id: string }).id !== ""

const importInstances = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const storage = yield* Storage
    const log = yield* Log
    const text = yield* fs.read(join(dir, "instances.json"))
    if (text === null) return
    const parsed = parseJson(text)
    if (!parsed.ok || !Array.isArray(parsed.value)) {
      yield* log.warn("legacy/instances.json is not a JSON list; its accounts were not imported")
      return
    }
    const stored = yield* storage.get(INSTANCES_KEY)
    const current: unknown[] = Array.isArray(stored) ? stored : []
    const ids = new Set(current.filter(hasId).map((a) => a.id))
    const added: unknown[] = []
    for (const entry of parsed.value) {
      // Validation (HOME, CLAUDE_CONFIG_DIR, ids) happens when accounts load, with a clear log.
      if (!hasId(entry)) {
        yield* log.warn("legacy/instances.json: an entry without an id was skipped")
        continue
      }
      if (ids.has(entry.id)) continue
      ids.add(entry.id)
      added.push(entry)
    }
    if (added.length > 0) {
      yield* storage.set(INSTANCES_KEY, [...current, ...added])
      yield* log.info(`imported ${added.length} account(s) from legacy/instances.json`)
    }
  })

const importSessions = (dir: string) =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const storage = yield* Storage
    const log = yield* Log
    const sessions = join(dir, "sessions")
    const entries = yield* fs.list(sessions)
    if (entries === null) return
    let count = 0
    for (const entry of entries) {
      if (entry.kind === "directory" || !entry.name.endsWith(".json")) continue
      const id = entry.name.slice(0, -".json".length)
      if (id === "") continue
      const key = `session:${id}`
      if ((yield* storage.get(key)) !== undefined) continue
      const text = yield* fs.read(join(sessions, entry.name))
      if (text === null) continue
      const parsed = parseJson(text)
      if (!parsed.ok || typeof parsed.value !== "object" || parsed.value === null) {
        yield* log.warn(`legacy/sessions/${entry.name} is not a JSON object; skipped`)
        continue
      }
      yield* storage.set(key, parsed.value)
      count++
    }
    if (count > 0) yield* log.info(`imported ${count} session state(s) from legacy/sessions`)
  })

/**
 * Import `<data>/legacy/` once. Until the folder exists nothing is marked, so
 * a folder the host moves in later is still read.
 */
export const importLegacy: Effect.Effect<void, never, Fs | Storage | Log> = Effect.gen(function* () {
  const fs = yield* Fs
  const storage = yield* Storage
  if ((yield* storage.get(LEGACY_FLAG_KEY)) === true) return
  const dir = join(fs.paths.data, "legacy")
  if ((yield* fs.stat(dir)) === null) return
  yield* importInstances(dir)
  yield* importSessions(dir)
  yield* storage.set(LEGACY_FLAG_KEY, true)
})

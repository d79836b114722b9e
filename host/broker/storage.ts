/**
 * api.storage: the plugin's key/value store, one JSON file per plugin.
 *
 * Loaded once at start. Every change rewrites the whole file the safe way
 * (write a temp file beside it, fsync, rename over), one write at a time, so
 * a crash leaves either the old file or the new one, never half of either.
 */
import { mkdir, open, readFile, rename, rm } from "node:fs/promises"
import { dirname } from "node:path"
import { Effect } from "effect"
import type { StorageShape } from "../../sdk/plugin-api.ts"

export interface JsonStorage extends StorageShape {
  readonly file: string
  /** Resolves when every change so far is on disk. */
  readonly flush: () => Promise<void>
  /** A copy of everything stored (tests, the front end). */
  readonly snapshot: () => Record<string, unknown>
}

let tempCounter = 0

const writeAtomically = async (file: string, text: string): Promise<void> => {
  await mkdir(dirname(file), { recursive: true })
  const temp = `${file}.${process.pid}.${++tempCounter}.tmp`
  const handle = await open(temp, "w")
  try {
    await handle.writeFile(text, "utf8")
    await handle.sync()
  } finally {
    await handle.close()
  }
  try {
    await rename(temp, file)
  } catch (error) {
    await rm(temp, { force: true })
    throw error
  }
}

/**
 * Open (or create) the store at `file`. A file that is not a JSON object is
 * moved aside as `<file>.corrupt-<time>` and the store starts empty, so the
 * next write does not silently destroy it.
 */
export const openJsonStorage = async (
  file: string,
  onError: (message: string, data?: unknown) => void = () => {},
): Promise<JsonStorage> => {
  const values = new Map<string, unknown>()
  const text = await readFile(file, "utf8").catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT") return null
    throw e
  })
  if (text !== null) {
    let parsed: unknown
    try {
      parsed = JSON.parse(text)
    } catch {
      parsed = undefined
    }
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
      for (const [k, v] of Object.entries(parsed)) values.set(k, v)
    } else {
      const aside = `${file}.corrupt-${Date.now()}`
      await rename(file, aside)
      onError("plugin storage was not a JSON object; moved aside", { file, aside })
    }
  }

  // One write at a time, each of the whole state as it is when that write
  // starts. Changes made while a write is queued share it (they are all in
  // the state it will write), so a burst of changes costs two writes, not n.
  let chain: Promise<void> = Promise.resolve()
  let queued: Promise<void> | null = null
  const persist = (): Promise<void> => {
    if (queued) return queued
    const next = chain.then(() => {
      queued = null
      return writeAtomically(file, JSON.stringify(Object.fromEntries(values), null, 2))
    })
    queued = next
    chain = next.catch((error) => onError("plugin storage write failed", { file, error: String(error) }))
    return next
  }
  const change = (apply: () => void) =>
    Effect.promise(async () => {
      apply()
      await persist().catch(() => {}) // reported through onError; the value stays in memory
    })

  return {
    file,
    get: (key) => Effect.sync(() => structuredClone(values.get(key))),
    set: (key, value) =>
      change(() => {
        // A string survives a restart as it is (JSON keeps every code unit), so
        // a plugin's large cached strings are not copied twice. Anything else
        // takes a JSON round trip: what is kept is exactly what survives a restart.
        if (typeof value === "string") return void values.set(key, value)
        const json = value === undefined ? undefined : JSON.stringify(value)
        if (json === undefined) values.delete(key)
        else values.set(key, JSON.parse(json))
      }),
    delete: (key) => change(() => void values.delete(key)),
    keys: Effect.sync(() => [...values.keys()]),
    flush: () => chain,
    snapshot: () => structuredClone(Object.fromEntries(values)),
  }
}

/** Keys a plugin marks as caches (docs/agent-protocol.md): kept apart from what a person edits. */
export const CACHE_PREFIX = "cache:"

/** `<name>.json` → `<name>.cache.json`, beside it. */
export const cacheFileOf = (file: string): string => `${file.replace(/\.json$/, "")}.cache.json`

/**
 * A plugin's storage as two files: its values (accounts and the like, the
 * file a person may read and edit) and its caches (keys under `cache:`, in
 * `<name>.cache.json`, which may be deleted at any time). One store to the
 * plugin; `snapshot` shows both.
 */
export const openPluginStorage = async (
  file: string,
  onError: (message: string, data?: unknown) => void = () => {},
): Promise<JsonStorage> => {
  const values = await openJsonStorage(file, onError)
  const caches = await openJsonStorage(cacheFileOf(file), onError)
  const of = (key: string) => (key.startsWith(CACHE_PREFIX) ? caches : values)
  return {
    file,
    get: (key) => of(key).get(key),
    set: (key, value) => of(key).set(key, value),
    delete: (key) => of(key).delete(key),
    keys: Effect.map(Effect.all([values.keys, caches.keys]), ([a, b]) => [...a, ...b]),
    flush: async () => {
      await Promise.all([values.flush(), caches.flush()])
    },
    snapshot: () => ({ ...values.snapshot(), ...caches.snapshot() }),
  }
}

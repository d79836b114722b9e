/**
 * The session list's summary cache in plugin storage: one value per project
 * folder (a shard), so that a changed session rewrites only its folder's
 * entries, never every session's. A shard is the JSON text of `{ version,
 * files }`, `files` mapping a session id to `[size, mtimeMs]` (no session)
 * or `[size, mtimeMs, title, created, cwd, branch]` (null where absent);
 * an entry is used only while its file's size and mtime match. Text, not
 * an object: a host copies a stored value on every read, and copying one
 * string is far cheaper than copying a thousand small objects. A shard is
 * written only when its folder changed, after the list's answer.
 */
import { Effect } from "effect"
import { projectsDir } from "./projects.ts"
import type { StorageShape } from "../sdk/plugin-api.ts"
import type { SessionSummary } from "../sdk/protocol.ts"
import { isObject } from "../values.ts"

/** What the cache needs of a listed file (history/session-list.ts's record of it). */
export interface CachedFile {
  readonly id: string
  /** Its folder's cache shard (set once the shard is loaded). */
  shard: Shard
  /** -1: not known, or the file was gone when read (never cached then). */
  size: number
  mtimeMs: number
  /** The shard's entry for this very file (same size and mtime): its summary is made only when the page may show it. */
  cached: CacheEntry | undefined
  summary: SessionSummary | null | undefined
}

const iso = (ms: number): string => new Date(ms).toISOString()

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Under `cache:`: a host keeps caches apart from the values a person edits (docs/agent-protocol.md). */
const SHARD_PREFIX = "cache:history:list:"
/** The cache shard of one project folder (`<config dir>/projects/<folder>`). */
export const listShardKey = (projectFolder: string): string => `${SHARD_PREFIX}${projectFolder}`
/**
 * Where earlier versions kept the whole cache in one value: removed when
 * found. Under `cache:` (version 1), and before that among the values.
 */
const oldCacheKeys = (configDir: string): string[] => [
  `${SHARD_PREFIX}${projectsDir(configDir)}`,
  `history:list:${projectsDir(configDir)}`,
]
const CACHE_VERSION = 2

export type CacheEntry = ReadonlyArray<unknown>

/** One folder's stored entries, and what this list found of them. */
export interface Shard {
  readonly key: string
  readonly files: Record<string, unknown>
  /** How many entries it held when loaded. */
  readonly stored: number
  /** Entries still valid (same size and mtime), and entries made now. */
  valid: number
  fresh: number
}

/** A shard's entries by session id; empty when missing, of another version or not the right shape. */
export const loadShard = (key: string, stored: unknown): Shard => {
  let files: Record<string, unknown> = {}
  if (typeof stored === "string")
    try {
      const parsed = JSON.parse(stored) as { version?: unknown; files?: unknown } | null
      const found = parsed?.version === CACHE_VERSION ? parsed.files : undefined
      if (isObject(found)) files = found
    } catch {
      // a damaged shard is an empty one: its files are read again
    }
  // Native key listing: a for-in over a shard's thousand keys is far slower.
  return { key, files, stored: Object.keys(files).length, valid: 0, fresh: 0 }
}

/** The shard's entry for `k` when it was made from this very file (same size and mtime). */
export const validEntry = (entry: unknown, k: CachedFile): CacheEntry | undefined => {
  if (!Array.isArray(entry) || entry[0] !== k.size || entry[1] !== k.mtimeMs) return undefined
  if (entry.length === 2 || typeof entry[2] === "string") return entry
  return undefined
}

/** The summary a valid entry stands for (null: no session). */
export const summaryOfEntry = (entry: CacheEntry, k: CachedFile): SessionSummary | null => {
  if (entry.length === 2) return null
  const [, , title, created, cwd, branch] = entry
  const summary: Mutable<SessionSummary> = {
    session_id: k.id,
    title: title as string,
    modified_at: iso(k.mtimeMs),
    size_bytes: k.size,
  }
  if (typeof created === "string") summary.created_at = created
  if (typeof cwd === "string") summary.cwd = cwd
  if (typeof branch === "string") summary.branch = branch
  return summary
}

const toEntry = (k: CachedFile, s: SessionSummary | null): CacheEntry =>
  s === null
    ? [k.size, k.mtimeMs]
    : [k.size, k.mtimeMs, s.title, s.created_at ?? null, s.cwd ?? null, s.branch ?? null]

/**
 * The shards to write after a list: a shard whose folder gained an entry
 * (a file read now) or lost one (a file gone, or changed and not read
 * again). Each is written whole from this list's files of its folder; a
 * shard with nothing new is not written at all.
 */
const changedShards = (
  shards: ReadonlyArray<Shard>,
  known: ReadonlyArray<CachedFile>,
): Map<Shard, Record<string, CacheEntry>> => {
  const out = new Map<Shard, Record<string, CacheEntry>>()
  for (const k of known) {
    const shard = k.shard
    if (k.cached !== undefined) shard.valid++
    else if (k.summary !== undefined && k.size >= 0) shard.fresh++
  }
  // Every changed shard, an emptied folder's too (no file below names it).
  for (const shard of shards) if (shard.fresh > 0 || shard.valid < shard.stored) out.set(shard, {})
  for (const k of known) {
    const shard = k.shard
    const files = out.get(shard)
    if (files === undefined) continue
    if (k.cached !== undefined) files[k.id] = k.cached
    else if (k.summary !== undefined && k.size >= 0) files[k.id] = toEntry(k, k.summary)
  }
  return out
}

/** What one list leaves for the cache to save. */
export interface ListedShards {
  readonly configDir: string
  /** The project folders listed. */
  readonly dirs: ReadonlyArray<string>
  readonly shards: ReadonlyArray<Shard>
  readonly files: ReadonlyArray<CachedFile>
  /** Every project was listed: the shards of folders that are gone are deleted too. */
  readonly full: boolean
}

/**
 * The changed shards written, all at once (a host that rewrites its store
 * on a change gathers a burst into one write), after the caches of earlier
 * versions and (a full list) the shards of gone folders are deleted. The
 * shards' text is made only once storage has answered its keys: through a
 * plugin process the list's answer is more than the channel's socket takes
 * at once, and its last bytes leave only when the plugin's event loop is
 * free; a thousand entries serialized first would hold them back.
 */
export const saveShards = (storage: StorageShape, listed: ListedShards): Effect.Effect<void> =>
  Effect.gen(function* () {
    const keys = yield* storage.keys
    const writes = [...changedShards(listed.shards, listed.files)].map(([shard, files]) =>
      storage.set(shard.key, JSON.stringify({ version: CACHE_VERSION, files })),
    )
    const oldKeys = new Set(oldCacheKeys(listed.configDir))
    const shardsUnder = `${SHARD_PREFIX}${projectsDir(listed.configDir)}/`
    const listedKeys = new Set(listed.dirs.map(listShardKey))
    const gone = keys.filter(
      (key) => oldKeys.has(key) || (listed.full && key.startsWith(shardsUnder) && !listedKeys.has(key)),
    )
    yield* Effect.forEach(gone, (key) => storage.delete(key), { discard: true })
    yield* Effect.all(writes, { concurrency: "unbounded", discard: true })
  })

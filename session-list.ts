/**
 * list_sessions: the stored conversations under `<config dir>/projects`,
 * newest first, one page at a time.
 *
 * Transcripts are large (1-2 MB for a short session: every turn stores a
 * snapshot of the system prompt and the API request), so only a head and a
 * tail of each file is read, and a summary is kept in plugin storage.
 */
import { Effect } from "effect"
import { endsReader } from "./files.ts"
import { projectDir, projectsDir } from "./projects.ts"
import { type DirEntry, type FileEnds, Fs, type FsShape, Storage } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { SessionPage, SessionSummary } from "./sdk/protocol.ts"
import {
  endsFacts,
  type FileFacts,
  type HeadFacts,
  headFacts,
  summaryOf,
  type TailFacts,
  type Titles,
  titleOfSidecar,
} from "./session-summary.ts"
import { isObject } from "./values.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// Every file to read goes to one `readEnds` call (one open each for head,
// tail, size and times; the bytes lent to a visitor), and is summarized in
// plain synchronous code as it is visited (session-summary.ts: byte
// searches, a JSON parse only for a title line or an unusual first prompt).
// A summary is kept in plugin storage with the file's size and mtime, so a
// later list only lists the folders and gets the files' sizes and times (one
// `readEnds` call asking for no bytes), and reads again only what changed.

/** Bytes read from each end of a transcript for the list. */
const HEAD_BYTES = 2 * 1024
const TAIL_BYTES = 4 * 1024
/** How far the head grows when the first prompt is not in it. */
const LONG_HEAD_BYTES = 64 * 1024
const DEFAULT_PAGE = 50
/** Further reads (a longer head, a rename's title file) at once: enough to keep an asynchronous broker busy. */
const FURTHER_READS = 16

/**
 * A `<uuid>.jsonl` file of a project folder, with its size and times once
 * known, and its summary once needed (null: no session). One object per
 * file, all the list keeps of it.
 */
interface Known {
  readonly id: string
  readonly path: string
  readonly dir: string
  /** The session has a folder (subagents, a title file…). */
  readonly hasFolder: boolean
  /** Its folder's cache shard. */
  readonly shard: Shard
  size: number
  mtimeMs: number
  /** The shard's entry for this very file (same size and mtime): its summary is made only when the page may show it. */
  cached: CacheEntry | undefined
  summary: SessionSummary | null | undefined
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The files of one project folder that can be sessions: `<uuid>.jsonl`. */
const candidatesIn = (entries: ReadonlyArray<DirEntry> | null, dir: string, shard: Shard): Known[] => {
  if (entries === null) return []
  const folders = new Set<string>()
  for (const e of entries) if (e.kind === "directory") folders.add(e.name)
  const found: Known[] = []
  for (const e of entries) {
    if (e.kind === "directory" || !e.name.endsWith(".jsonl")) continue
    const id = e.name.slice(0, -6)
    if (!UUID.test(id)) continue
    // `dir` is already normal: plain concatenation keeps this loop cheap.
    // Every field from the start, mtimeMs a double (NaN: not known yet): one
    // shape for all, none added or widened later (a field made a double after
    // the objects were made costs V8 a migration of every object).
    found.push({
      id,
      path: `${dir}/${e.name}`,
      dir,
      hasFolder: folders.has(id),
      shard,
      size: -1,
      mtimeMs: Number.NaN,
      cached: undefined,
      summary: undefined,
    })
  }
  return found
}

/** Newest first; the id breaks ties so the order (and the cursor) is stable. */
const newestFirst = (a: Known, b: Known): number =>
  b.mtimeMs - a.mtimeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const cursorOf = (k: Known): string => `${k.mtimeMs}:${k.id}`

/** True when `k` sorts after the entry the cursor names. */
const afterCursor = (cursor: string) => {
  const at = cursor.indexOf(":")
  const mtime = Number(cursor.slice(0, at))
  const id = cursor.slice(at + 1)
  if (at < 0 || Number.isNaN(mtime)) return () => true
  return (k: Known) => k.mtimeMs < mtime || (k.mtimeMs === mtime && k.id > id)
}

/**
 * One session's list entry from its two ends (null: the file is no session),
 * stored on `k`, in plain synchronous code: most files need nothing more.
 * The ends' bytes are lent (FsShape.readEnds): all they give is taken here. The
 * rare rest (the first prompt lies beyond the head, or the session has a
 * folder that may hold a rename's title file) get back the further read to
 * run, which stores the entry when it is done.
 */
const summarize = (fs: FsShape, k: Known, ends: FileEnds): Effect.Effect<void> | undefined => {
  const { head, headTitles, tail } = endsFacts(ends.head, ends.tail, ends.size)
  const file = { id: k.id, size: k.size, mtimeMs: k.mtimeMs, birthtimeMs: ends.birthtimeMs }
  if (head.prompt === undefined && !head.sidechain && ends.size > HEAD_BYTES)
    return Effect.flatMap(fs.readRange(k.path, 0, LONG_HEAD_BYTES), (bytes) => {
      const longer =
        bytes === null ? head : { ...headFacts(bytes, ends.size > bytes.length), branch: head.branch }
      return finish(fs, k, file, longer, headTitles, tail) ?? Effect.void
    })
  return finish(fs, k, file, head, headTitles, tail)
}

const finish = (
  fs: FsShape,
  k: Known,
  file: FileFacts,
  facts: HeadFacts,
  headTitles: Titles,
  tail: TailFacts,
): Effect.Effect<void> | undefined => {
  if (facts.sidechain) {
    k.summary = null
    return undefined
  }
  if (!k.hasFolder) {
    k.summary = summaryOf(file, facts, headTitles, tail, undefined)
    return undefined
  }
  return Effect.map(fs.read(join(k.dir, k.id, "custom-title.json")), (text) => {
    k.summary = summaryOf(file, facts, headTitles, tail, titleOfSidecar(text))
  })
}
type Mutable<T> = { -readonly [K in keyof T]: T[K] }
// --- The summary cache (plugin storage) ------------------------------------
//
// One storage value per project folder (a shard), so that a changed session
// rewrites only its folder's entries, never every session's: the JSON text
// of `{ version, files }`, `files` mapping a session id to `[size, mtimeMs]`
// (no session) or `[size, mtimeMs, title, created, cwd, branch]` (null where
// absent). Text, not an object: a host copies a stored value on every read,
// and copying one string is far cheaper than copying a thousand small
// objects. A shard is written only when its folder changed.

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

type CacheEntry = ReadonlyArray<unknown>

/** One folder's stored entries, and what this list found of them. */
interface Shard {
  readonly key: string
  readonly files: Record<string, unknown>
  /** How many entries it held when loaded. */
  readonly stored: number
  /** Entries still valid (same size and mtime), and entries made now. */
  valid: number
  fresh: number
}

/** A shard's entries by session id; empty when missing, of another version or not the right shape. */
const loadShard = (key: string, stored: unknown): Shard => {
  let files: Record<string, unknown> = {}
  if (typeof stored === "string")
    try {
      const parsed = JSON.parse(stored) as { version?: unknown; files?: unknown } | null
      const found = parsed?.version === CACHE_VERSION ? parsed.files : undefined
      if (isObject(found)) files = found
    } catch {
      // a damaged shard is an empty one: its files are read again
    }
  // Native key listing: a for-in over a thousand keys cost ~40 ms at 50,000 files.
  return { key, files, stored: Object.keys(files).length, valid: 0, fresh: 0 }
}

/** The shard's entry for `k` when it was made from this very file (same size and mtime). */
const validEntry = (entry: unknown, k: Known): CacheEntry | undefined => {
  if (!Array.isArray(entry) || entry[0] !== k.size || entry[1] !== k.mtimeMs) return undefined
  if (entry.length === 2 || typeof entry[2] === "string") return entry
  return undefined
}

/** The summary a valid entry stands for (null: no session). */
const summaryOfEntry = (entry: CacheEntry, k: Known): SessionSummary | null => {
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

const toEntry = (k: Known, s: SessionSummary | null): CacheEntry =>
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
  known: ReadonlyArray<Known>,
): Map<Shard, Record<string, CacheEntry>> => {
  const out = new Map<Shard, Record<string, CacheEntry>>()
  for (const k of known) {
    const shard = k.shard
    if (k.cached !== undefined) shard.valid++
    else if (k.summary !== undefined) shard.fresh++
  }
  // Every changed shard, an emptied folder's too (no file below names it).
  for (const shard of shards) if (shard.fresh > 0 || shard.valid < shard.stored) out.set(shard, {})
  for (const k of known) {
    const shard = k.shard
    const files = out.get(shard)
    if (files === undefined) continue
    if (k.cached !== undefined) files[k.id] = k.cached
    else if (k.summary !== undefined) files[k.id] = toEntry(k, k.summary)
  }
  return out
}

// --- The listing ------------------------------------------------------------

export interface ListParams {
  readonly cwd?: string
  readonly cursor?: string
  readonly limit?: number
  /**
   * Conversations the CLI files under another id than the host's (after a
   * rewind to nothing): `rename` lists a CLI id's file under its host id,
   * `hidden` are the transcripts such a rewind left behind.
   */
  readonly aliases?: {
    readonly rename: ReadonlyMap<string, string>
    readonly hidden: ReadonlySet<string>
  }
}

/**
 * Folders listed and their shards loaded at once. Through the plugin
 * process each is a round trip to the host: four at a time made 26 folders
 * seven waits in a row (~35 ms of an isolated cold list).
 */
const FOLDERS_AT_ONCE = 32

/**
 * The stored sessions, newest first, one page at a time: of one working
 * directory, or of every project when `cwd` is absent.
 *
 * Every candidate's size and mtime are needed to order the page. A file the
 * cache knows is stat'ed (a hit needs nothing more); while the page holds
 * every file listed so far, any other file is read at once with `readEnds`,
 * which gives its size and times along with the bytes to summarize.
 * Otherwise (a smaller page, a cursor) a file is stat'ed and only the page's
 * are read. Each folder is read as soon as it is listed.
 */
export const listSessions: (
  configDir: string,
  params?: ListParams,
) => Effect.Effect<SessionPage, never, Fs | Storage> = Effect.fn("history.listSessions")(function* (
  configDir: string,
  params: ListParams = {},
) {
  const fs = yield* Fs
  const storage = yield* Storage
  const readEnds = endsReader(fs)
  const root = projectsDir(configDir)
  const shardsUnder = `${SHARD_PREFIX}${root}/`
  const oldKeys = new Set(oldCacheKeys(configDir))
  let dirs: string[]
  if (params.cwd !== undefined) dirs = [yield* projectDir(configDir, params.cwd)]
  else {
    const entries = (yield* fs.list(root)) ?? []
    dirs = entries.filter((e) => e.kind === "directory").map((e) => join(root, e.name))
  }
  const hidden = params.aliases?.hidden
  const limit = Math.max(1, params.limit ?? DEFAULT_PAGE)
  const shards: Shard[] = []
  const all: Known[] = []
  /** The further reads of files whose summary needs one (see summarize). */
  const later: Effect.Effect<void>[] = []

  const read = (k: Known, ends: FileEnds): void => {
    const more = summarize(fs, k, ends)
    if (more !== undefined) later.push(more)
  }
  const finishLater = Effect.suspend(() =>
    later.length === 0
      ? Effect.void
      : Effect.forEach(later.splice(0), (more) => more, { concurrency: FURTHER_READS, discard: true }),
  )
  /**
   * Each file in one `readEnds` call, `got` told each (the bytes lent for
   * that call): both ends, or with `sizesOnly` only its size and times.
   */
  const readEach = (
    items: ReadonlyArray<Known>,
    got: (k: Known, ends: FileEnds | null) => void,
    sizesOnly = false,
  ) =>
    items.length === 0
      ? Effect.void
      : readEnds(
          items.map((k) => k.path),
          sizesOnly ? 0 : HEAD_BYTES,
          sizesOnly ? 0 : TAIL_BYTES,
          (i, ends) => got(items[i] as Known, ends),
        )

  /** Candidates found so far: once they outnumber the page, only a page is read (see below). */
  let seen = 0
  /**
   * One folder's files, as soon as it is listed (its reads overlap the
   * other folders' listing: through the plugin process each is a round
   * trip). A file the cache knows, or any file once the folders listed so
   * far hold more than the page (or a cursor is given), is stat'ed; every
   * other file is read and summarized at once. A folder read whole before
   * the count passed the page only read files that a smaller page skips.
   */
  const folder = (dir: string) =>
    Effect.gen(function* () {
      const key = listShardKey(dir)
      const [entries, stored] = yield* Effect.all([fs.list(dir), storage.get(key)])
      const shard = loadShard(key, stored)
      shards.push(shard)
      const found = candidatesIn(entries, dir, shard)
      const candidates = hidden && hidden.size > 0 ? found.filter((k) => !hidden.has(k.id)) : found
      seen += candidates.length
      const pageOnly = params.cursor !== undefined || limit < seen
      const toStat: Known[] = []
      const toRead: Known[] = []
      for (const k of candidates) (pageOnly || shard.files[k.id] !== undefined ? toStat : toRead).push(k)
      const statAll = readEach(
        toStat,
        (k, ends) => {
          if (ends === null) return
          k.size = ends.size
          k.mtimeMs = ends.mtimeMs
          const entry = validEntry(shard.files[k.id], k)
          if (entry !== undefined) {
            k.cached = entry
            // The page may hold every file: its summary now, while k is at
            // hand (in the page's order, after the sort, the same work took
            // several times longer).
            if (!pageOnly) k.summary = summaryOfEntry(entry, k)
          }
          all.push(k)
        },
        true,
      )
      const readAll = readEach(toRead, (k, ends) => {
        if (ends === null) return
        k.size = ends.size
        k.mtimeMs = ends.mtimeMs
        all.push(k)
        read(k, ends)
      })
      // Both at once only when there are both: each concurrent branch is a fiber of its own.
      if (toStat.length === 0) yield* readAll
      else if (toRead.length === 0) yield* statAll
      else yield* Effect.all([statAll, readAll], { concurrency: 2, discard: true })
    })
  yield* Effect.forEach(dirs, folder, { concurrency: FOLDERS_AT_ONCE, discard: true })
  yield* finishLater
  all.sort(newestFirst)
  const ordered = params.cursor === undefined ? all : all.filter(afterCursor(params.cursor))

  const sessions: SessionSummary[] = []
  let next = 0
  // Read in batches the size of what is missing: a file that is no session makes room for the next.
  while (sessions.length < limit && next < ordered.length) {
    const batch = ordered.slice(next, next + (limit - sessions.length))
    next += batch.length
    for (const k of batch)
      if (k.summary === undefined && k.cached !== undefined) k.summary = summaryOfEntry(k.cached, k)
    yield* readEach(
      batch.filter((k) => k.summary === undefined),
      (k, ends) => {
        if (ends !== null) read(k, ends)
        else k.summary = null
      },
    )
    yield* finishLater
    for (const k of batch) if (k.summary) sessions.push(underHostId(k.summary, params.aliases?.rename))
  }

  // Written after the answer, in the background: the list never waits for storage.
  yield* Effect.forkDetach(
    Effect.suspend(() => {
      const writes = [...changedShards(shards, all)].map(([shard, files]) =>
        storage.set(shard.key, JSON.stringify({ version: CACHE_VERSION, files })),
      )
      const listedKeys = new Set(dirs.map(listShardKey))
      return Effect.gen(function* () {
        const keys = yield* storage.keys
        const gone = keys.filter(
          (key) =>
            oldKeys.has(key) ||
            // A full list also forgets the shards of folders that are gone.
            (params.cwd === undefined && key.startsWith(shardsUnder) && !listedKeys.has(key)),
        )
        yield* Effect.forEach(gone, (key) => storage.delete(key), { discard: true })
        // All at once: a host that rewrites its store on a change gathers a burst into one write.
        yield* Effect.all(writes, { concurrency: "unbounded", discard: true })
      })
    }),
  )

  const last = ordered[next - 1]
  return next < ordered.length && last !== undefined ? { sessions, cursor: cursorOf(last) } : { sessions }
})

/** A summary under the host's id when its file is a host session's alias. */
const underHostId = (summary: SessionSummary, rename: ReadonlyMap<string, string> | undefined) => {
  const hostId = rename?.get(summary.session_id)
  return hostId === undefined ? summary : { ...summary, session_id: hostId }
}

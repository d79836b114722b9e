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
import { type FileEnds, Fs, type FsShape, Storage } from "./sdk/plugin-api.ts"
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

/** A `<uuid>.jsonl` file of a project folder. */
interface Candidate {
  readonly id: string
  readonly path: string
  readonly dir: string
  /** The session has a folder (subagents, a title file…). */
  readonly hasFolder: boolean
}

/** A candidate with its size and times, and its summary once known (null: no session). */
interface Known {
  readonly c: Candidate
  readonly size: number
  readonly mtimeMs: number
  summary?: SessionSummary | null
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The files of one project folder that can be sessions: `<uuid>.jsonl`. */
const candidatesIn = (fs: FsShape, dir: string): Effect.Effect<Candidate[]> =>
  Effect.map(fs.list(dir), (entries) => {
    if (entries === null) return []
    const folders = new Set<string>()
    for (const e of entries) if (e.kind === "directory") folders.add(e.name)
    const found: Candidate[] = []
    for (const e of entries) {
      if (e.kind === "directory" || !e.name.endsWith(".jsonl")) continue
      const id = e.name.slice(0, -6)
      if (!UUID.test(id)) continue
      // `dir` is already normal: plain concatenation keeps this loop cheap.
      found.push({ id, path: `${dir}/${e.name}`, dir, hasFolder: folders.has(id) })
    }
    return found
  })

/** Newest first; the id breaks ties so the order (and the cursor) is stable. */
const newestFirst = (a: Known, b: Known): number =>
  b.mtimeMs - a.mtimeMs || (a.c.id < b.c.id ? -1 : a.c.id > b.c.id ? 1 : 0)

const cursorOf = (k: Known): string => `${k.mtimeMs}:${k.c.id}`

/** True when `k` sorts after the entry the cursor names. */
const afterCursor = (cursor: string) => {
  const at = cursor.indexOf(":")
  const mtime = Number(cursor.slice(0, at))
  const id = cursor.slice(at + 1)
  if (at < 0 || Number.isNaN(mtime)) return () => true
  return (k: Known) => k.mtimeMs < mtime || (k.mtimeMs === mtime && k.c.id > id)
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
  const file = { id: k.c.id, size: k.size, mtimeMs: k.mtimeMs, birthtimeMs: ends.birthtimeMs }
  if (head.prompt === undefined && !head.sidechain && ends.size > HEAD_BYTES)
    return Effect.flatMap(fs.readRange(k.c.path, 0, LONG_HEAD_BYTES), (bytes) => {
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
  if (!k.c.hasFolder) {
    k.summary = summaryOf(file, facts, headTitles, tail, undefined)
    return undefined
  }
  return Effect.map(fs.read(join(k.c.dir, k.c.id, "custom-title.json")), (text) => {
    k.summary = summaryOf(file, facts, headTitles, tail, titleOfSidecar(text))
  })
}
type Mutable<T> = { -readonly [K in keyof T]: T[K] }
// --- The summary cache (plugin storage) ------------------------------------
//
// One storage value per config dir: the JSON text of `{ version, files }`,
// `files` mapping a transcript's path to `[size, mtimeMs]` (no session) or
// `[size, mtimeMs, title, created, cwd, branch]` (null where absent). Text,
// not an object: a host copies a stored value on every read, and copying
// one string is far cheaper than copying a thousand small objects.

// Under `cache:`: a host keeps caches apart from the values a person edits (docs/agent-protocol.md).
export const listCacheKey = (configDir: string): string => `cache:history:list:${projectsDir(configDir)}`
/** Where earlier versions kept it, among the values: removed when the cache is first written anew. */
const oldCacheKey = (configDir: string): string => `history:list:${projectsDir(configDir)}`
const CACHE_VERSION = 1

type CacheEntry =
  | readonly [size: number, mtimeMs: number]
  | readonly [
      size: number,
      mtimeMs: number,
      title: string,
      created: string | null,
      cwd: string | null,
      branch: string | null,
    ]

const isEmpty = (record: Record<string, unknown>): boolean => {
  for (const _ in record) return false
  return true
}

/** The stored entries by path; empty when missing, of another version or not the right shape. */
const loadCache = (stored: unknown): Record<string, unknown> => {
  if (typeof stored !== "string") return {}
  try {
    const parsed = JSON.parse(stored) as { version?: unknown; files?: unknown } | null
    const files = parsed?.version === CACHE_VERSION ? parsed.files : undefined
    return isObject(files) ? files : {}
  } catch {
    return {}
  }
}

/** The entry's summary when it was made from this very file (same size and mtime); undefined: no valid entry. */
const cachedSummary = (entry: unknown, k: Known): SessionSummary | null | undefined => {
  if (!Array.isArray(entry) || entry[0] !== k.size || entry[1] !== k.mtimeMs) return undefined
  if (entry.length === 2) return null
  const [, , title, created, cwd, branch] = entry as unknown[]
  if (typeof title !== "string") return undefined
  const summary: Mutable<SessionSummary> = {
    session_id: k.c.id,
    title,
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
 * The stored sessions, newest first, one page at a time: of one working
 * directory, or of every project when `cwd` is absent.
 *
 * Every candidate's size and mtime are needed to order the page. A file the
 * cache knows is stat'ed (a hit needs nothing more); when the page holds
 * every file, any other file is read at once with `readEnds`, which gives
 * its size and times along with the bytes to summarize. Otherwise (a smaller
 * page, a cursor) every file is stat'ed and only the page's are read.
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
  let dirs: string[]
  if (params.cwd !== undefined) dirs = [yield* projectDir(configDir, params.cwd)]
  else {
    const entries = (yield* fs.list(root)) ?? []
    dirs = entries.filter((e) => e.kind === "directory").map((e) => join(root, e.name))
  }
  const hidden = params.aliases?.hidden
  const listed = (yield* Effect.forEach(dirs, (dir) => candidatesIn(fs, dir), {
    concurrency: 4,
  })).flat()
  const candidates = hidden && hidden.size > 0 ? listed.filter((c) => !hidden.has(c.id)) : listed
  const cacheKey = listCacheKey(configDir)
  const stored = yield* storage.get(cacheKey)
  if (stored === undefined) yield* storage.delete(oldCacheKey(configDir))
  const cache = loadCache(stored)
  const limit = Math.max(1, params.limit ?? DEFAULT_PAGE)
  const statFirst = params.cursor !== undefined || limit < candidates.length
  /** Files summarized now: their entries are new. */
  const fresh: Known[] = []
  /** The further reads of files whose summary needs one (see summarize). */
  const later: Effect.Effect<void>[] = []

  const read = (k: Known, ends: FileEnds): void => {
    fresh.push(k)
    const more = summarize(fs, k, ends)
    if (more !== undefined) later.push(more)
  }
  const finishLater = Effect.suspend(() =>
    later.length === 0
      ? Effect.void
      : Effect.forEach(later.splice(0), (more) => more, { concurrency: FURTHER_READS, discard: true }),
  )
  /**
   * Each item's file in one `readEnds` call, `got` told each (the bytes lent
   * for that call): both ends, or with `sizesOnly` only its size and times.
   */
  const readEach = <A>(
    items: ReadonlyArray<A>,
    pathOf: (item: A) => string,
    got: (item: A, ends: FileEnds | null) => void,
    sizesOnly = false,
  ) =>
    items.length === 0
      ? Effect.void
      : readEnds(items.map(pathOf), sizesOnly ? 0 : HEAD_BYTES, sizesOnly ? 0 : TAIL_BYTES, (i, ends) =>
          got(items[i] as A, ends),
        )

  // A file the cache knows (or any file, when only a page is read) is
  // stat'ed; every other file is read and summarized at once.
  const toStat: Candidate[] = []
  const toRead: Candidate[] = []
  if (statFirst) toStat.push(...candidates)
  else if (isEmpty(cache)) toRead.push(...candidates)
  else for (const c of candidates) (cache[c.path] !== undefined ? toStat : toRead).push(c)
  const all: Known[] = []
  const statAll = readEach(
    toStat,
    (c) => c.path,
    (c, ends) => {
      if (ends === null) return
      const k: Known = { c, size: ends.size, mtimeMs: ends.mtimeMs }
      const hit = cachedSummary(cache[c.path], k)
      if (hit !== undefined) k.summary = hit
      all.push(k)
    },
    true,
  )
  const readAll = readEach(
    toRead,
    (c) => c.path,
    (c, ends) => {
      if (ends === null) return
      const k: Known = { c, size: ends.size, mtimeMs: ends.mtimeMs }
      all.push(k)
      read(k, ends)
    },
  )
  // Both at once only when there are both: each concurrent branch is a fiber of its own.
  if (toStat.length === 0) yield* readAll
  else if (toRead.length === 0) yield* statAll
  else yield* Effect.all([statAll, readAll], { concurrency: 2, discard: true })
  yield* finishLater
  all.sort(newestFirst)
  const ordered = params.cursor === undefined ? all : all.filter(afterCursor(params.cursor))

  const sessions: SessionSummary[] = []
  let next = 0
  // Read in batches the size of what is missing: a file that is no session makes room for the next.
  while (sessions.length < limit && next < ordered.length) {
    const batch = ordered.slice(next, next + (limit - sessions.length))
    next += batch.length
    yield* readEach(
      batch.filter((k) => k.summary === undefined),
      (k) => k.c.path,
      (k, ends) => {
        if (ends !== null) read(k, ends)
        else k.summary = null
      },
    )
    yield* finishLater
    for (const k of batch) if (k.summary) sessions.push(underHostId(k.summary, params.aliases?.rename))
  }

  // Written after the answer, in the background: the list never waits for storage.
  const scope = params.cwd === undefined ? root : (dirs[0] ?? root)
  yield* Effect.forkDetach(
    Effect.suspend(() => {
      const updated = updateCache(cache, scope, all, fresh)
      return updated === undefined
        ? Effect.void
        : storage.set(cacheKey, JSON.stringify({ version: CACHE_VERSION, files: updated }))
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

/**
 * The cache after a list of the folder `scope` (a project folder, or the
 * projects folder for every project), or undefined when nothing changed:
 * files summarized now are added, entries of files that are gone or changed
 * (and were not read again) are dropped; entries outside `scope` stay.
 */
const updateCache = (
  cache: Record<string, unknown>,
  scope: string,
  all: ReadonlyArray<Known>,
  fresh: ReadonlyArray<Known>,
): Record<string, unknown> | undefined => {
  const valid = new Set<string>()
  for (const k of all) if (k.summary !== undefined) valid.add(k.c.path)
  const prefix = `${scope}/`
  const stale: string[] = []
  for (const path in cache) if (path.startsWith(prefix) && !valid.has(path)) stale.push(path)
  if (fresh.length === 0 && stale.length === 0) return undefined
  for (const path of stale) delete cache[path]
  for (const k of fresh) if (k.summary !== undefined) cache[k.c.path] = toEntry(k, k.summary)
  return cache
}

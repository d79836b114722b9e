/**
 * list_sessions: the stored conversations under `<config dir>/projects`,
 * newest first, one page at a time.
 *
 * Transcripts are large (1-2 MB for a short session: every turn stores a
 * snapshot of the system prompt and the API request), so only a head and a
 * tail of each file is read, and a summary is kept in plugin storage.
 */
import { Effect } from "effect"
import { type EndsReader, endsReader } from "../files.ts"
import { projectDir, projectsDir } from "./projects.ts"
import { listEndsBy } from "../sdk/file-ends.ts"
import {
  type DirEntry,
  type FileEnds,
  Fs,
  type FsShape,
  type ListEndsVisit,
  Storage,
} from "../sdk/plugin-api.ts"
import { join } from "../sdk/paths.ts"
import type { SessionPage, SessionSummary } from "../sdk/protocol.ts"
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
import {
  type CachedFile,
  listShardKey,
  loadShard,
  type Shard,
  saveShards,
  summaryOfEntry,
  validEntry,
} from "./session-list-cache.ts"

/** The cache shard's key of a project folder (its tests and history.ts name it through the list). */
export { listShardKey }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// Each folder's files to read go to one `readEnds` call (one open each for
// head, tail, size and times; the bytes lent to a visitor), and are
// summarized in plain synchronous code as they are visited
// (history/session-summary.ts: text searches, a JSON parse only for a title line or
// an unusual first prompt). A summary is kept in plugin storage with the
// file's size and mtime (history/session-list-cache.ts), so a later list only lists
// the folders and gets the files' sizes and times (a `readEnds` call asking
// for no bytes), and reads again only what changed.

/** Bytes read from each end of a transcript for the list. */
const HEAD_BYTES = 2 * 1024
const TAIL_BYTES = 4 * 1024
/** How far the head grows when the first prompt is not in it. */
const LONG_HEAD_BYTES = 64 * 1024
const DEFAULT_PAGE = 50
/** What a folder's `listEnds` reads: `<uuid>.jsonl` files (42 characters), both ends. */
const SESSION_FILES = { suffix: ".jsonl", nameLength: 42, headBytes: HEAD_BYTES, tailBytes: TAIL_BYTES }
/** Further reads (a longer head, a rename's title file) at once: enough to keep an asynchronous broker busy. */
const FURTHER_READS = 16

/**
 * A `<uuid>.jsonl` file of a project folder, with its size and times once
 * known, its shard's entry when valid and its summary once needed (null: no
 * session). One object per file, all the list keeps of it.
 */
interface Known extends CachedFile {
  readonly path: string
  readonly dir: string
  /** Its index in its folder's listing. */
  readonly entry: number
  /** The session has a folder (subagents, a title file…). */
  readonly hasFolder: boolean
}

/** The files of one project folder that can be sessions: `<uuid>.jsonl`, each also set in `byEntry` at its listing index. */
const candidatesIn = (
  entries: ReadonlyArray<DirEntry>,
  dir: string,
  shard: Shard,
  byEntry: Array<Known | undefined>,
): Known[] => {
  const folders = new Set<string>()
  for (const e of entries) if (e.kind === "directory") folders.add(e.name)
  const found: Known[] = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as DirEntry
    if (e.kind === "directory" || e.kind === "other" || !e.name.endsWith(".jsonl")) continue
    const id = e.name.slice(0, -6)
    if (!UUID.test(id)) continue
    // `dir` is already normal: plain concatenation keeps this loop cheap.
    // Every field from the start, mtimeMs a double (NaN: not known yet): one
    // shape for all, none added or widened later (a field made a double after
    // the objects were made costs V8 a migration of every object).
    const k: Known = {
      id,
      path: `${dir}/${e.name}`,
      dir,
      entry: i,
      hasFolder: folders.has(id),
      shard,
      size: -1,
      mtimeMs: Number.NaN,
      cached: undefined,
      summary: undefined,
    }
    found.push(k)
    byEntry[i] = k
  }
  return found
}

/**
 * The host's `listEnds`, or one made of `list` and `readEnds` where it has
 * none or refuses a folder (more entries than it lists at once: `list` and
 * `readEnds` have no such bound).
 */
const folderReader = (fs: FsShape, readEnds: EndsReader): NonNullable<FsShape["listEnds"]> => {
  const made = listEndsBy(fs.list, readEnds)
  const hosts = fs.listEnds
  if (hosts === undefined) return made
  return (dir, options, visit) =>
    Effect.flatMap(hosts(dir, options, visit), (answer) =>
      answer === null ? made(dir, options, visit) : Effect.succeed(answer),
    )
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
/**
 * One folder's `listEnds` visit: its candidates made from the listing (a
 * hidden one never visited), each visited file's size and times set, then
 * `kept` told (with its lent ends, and whether they are its ends or only
 * its size).
 */
const folderVisit = (
  dir: string,
  shard: Shard,
  hidden: ReadonlySet<string> | undefined,
  kept: (k: Known, ends: FileEnds, withEnds: boolean) => void,
) => {
  let found: Known[] = []
  /** The candidate of each listing entry (by its index), when it is one. */
  let byEntry: Array<Known | undefined> = []
  let withEnds = false
  const visit: ListEndsVisit = {
    entries: (entries, ends) => {
      withEnds = ends
      byEntry = new Array(entries.length)
      found = candidatesIn(entries, dir, shard, byEntry)
      if (hidden && hidden.size > 0) for (const k of found) if (hidden.has(k.id)) byEntry[k.entry] = undefined
    },
    file: (index, ends) => {
      const k = byEntry[index]
      if (k === undefined || ends === null) return
      k.size = ends.size
      k.mtimeMs = ends.mtimeMs
      kept(k, ends, withEnds)
    },
  }
  return { visit, found: () => found }
}

/**
 * Stat'ed files against their shard: a valid entry is kept (and, while the
 * page may hold every file, made its summary now, while `k` is at hand: in
 * the page's order, after the sort, the same work took several times
 * longer). The files to read now: those with no valid entry, unless only a
 * page is read (it reads its own later).
 */
const checkCached = (candidates: ReadonlyArray<Known>, shard: Shard, pageOnly: boolean): Known[] => {
  const toRead: Known[] = []
  for (const k of candidates) {
    if (Number.isNaN(k.mtimeMs)) continue // gone, refused or no file
    k.shard = shard
    const entry = validEntry(shard.files[k.id], k)
    if (entry !== undefined) {
      k.cached = entry
      if (!pageOnly) k.summary = summaryOfEntry(entry, k)
    } else if (!pageOnly) toRead.push(k)
  }
  return toRead
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
 * process each is a round trip to the host: a few at a time would make a
 * list of many folders wait on one after another.
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
  const listEnds = folderReader(fs, readEnds)
  const root = projectsDir(configDir)
  let dirs: string[]
  // Which folders have a cache shard decides, before a folder is listed, whether its files are read at once.
  const [keys, rootEntries] = yield* Effect.all(
    [storage.keys, params.cwd === undefined ? fs.list(root) : Effect.succeed(null)],
    { concurrency: 2 },
  )
  const shardKeys = new Set(keys)
  if (params.cwd !== undefined) dirs = [yield* projectDir(configDir, params.cwd)]
  else dirs = (rootEntries ?? []).filter((e) => e.kind === "directory").map((e) => join(root, e.name))
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
  /** Folders not yet started, and files the page has room for that no folder listed so far took. */
  let folderLeft = dirs.length
  let room = params.cursor === undefined ? limit : 0
  /**
   * One folder in one `listEnds` call (its listing, each file's size and
   * times, and both ends of every file while the page may hold them all),
   * beside its shard's `get` (asked even when storage has none: a plugin
   * process's first `get`s, left to its second list, cost that list more
   * than the empty answers cost the first): through the plugin process
   * one round trip for both. A folder with no shard is read whole
   * at once unless it holds more files than its share of what the page has
   * room for (folders run side by side, so each gets a share; a cursor
   * gives none); otherwise its files are stat'ed, a cached entry checked
   * against its file's size and mtime, and only the files that changed
   * (or, once the folders listed hold more than the page, the page's) read
   * after.
   */
  const folder = (dir: string) =>
    Effect.gen(function* () {
      const key = listShardKey(dir)
      const stored = shardKeys.has(key)
      // Folders run side by side: each may read at once its share of the page's room.
      const share = Math.floor(room / Math.max(1, Math.min(FOLDERS_AT_ONCE, folderLeft)))
      folderLeft--
      const maxEnds = stored ? 0 : share
      const empty = loadShard(key, undefined)
      const visited = folderVisit(dir, empty, hidden, (k, ends, withEnds) => {
        all.push(k)
        if (withEnds) read(k, ends)
      })
      const visit = visited.visit
      const [listed, shardText] = yield* Effect.all(
        [listEnds(dir, { ...SESSION_FILES, maxEnds }, visit), storage.get(key)],
        { concurrency: 2 },
      )
      const shard = stored ? loadShard(key, shardText) : empty
      shards.push(shard)
      const found = visited.found()
      const candidates = hidden && hidden.size > 0 ? found.filter((k) => !hidden.has(k.id)) : found
      room = Math.max(0, room - found.length)
      seen += candidates.length
      if (listed?.withEnds === true) return
      const toRead = checkCached(candidates, shard, params.cursor !== undefined || limit < seen)
      yield* readEach(toRead, (k, ends) => {
        // Gone since it was stat'ed: no summary, so no entry either (the page's read tries it again).
        if (ends === null) return
        k.size = ends.size
        k.mtimeMs = ends.mtimeMs
        read(k, ends)
      })
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
        else {
          // Gone (or unreadable) since it was stat'ed: not shown, and not cached as no session.
          k.summary = null
          k.size = -1
        }
      },
    )
    yield* finishLater
    for (const k of batch) if (k.summary) sessions.push(underHostId(k.summary, params.aliases?.rename))
  }

  // Written after the answer, in the background: the list never waits for storage.
  yield* Effect.forkDetach(
    saveShards(storage, { configDir, dirs, shards, files: all, full: params.cwd === undefined }),
  )

  const last = ordered[next - 1]
  return next < ordered.length && last !== undefined ? { sessions, cursor: cursorOf(last) } : { sessions }
})

/** A summary under the host's id when its file is a host session's alias. */
const underHostId = (summary: SessionSummary, rename: ReadonlyMap<string, string> | undefined) => {
  const hostId = rename?.get(summary.session_id)
  return hostId === undefined ? summary : { ...summary, session_id: hostId }
}

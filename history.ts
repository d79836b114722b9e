/**
 * The CLI's stored conversations under `<config dir>/projects/<encoded cwd>/`:
 * the session list, one session's transcript, and rewind points.
 *
 * Transcripts are large (1-2 MB for a short session: every turn stores a
 * snapshot of the system prompt and the API request), so:
 * - the list reads only a head and a tail of each file;
 * - a transcript is streamed, and records it does not need (api-request*,
 *   queue operations, attachments…) are recognised from their first bytes and
 *   never decoded or parsed. An attachment still links the chain, so its
 *   `parentUuid` and `uuid` are picked out of its bytes.
 */
import { Effect } from "effect"
import { lastIndexOfBytes, needle, startsWith, stringEnd } from "./bytes.ts"
import { decodeText, endsReader, forEachLineBytes } from "./files.ts"
import { isInterruptText, promptOf, recordsToItems, recordText, type StoredRecord } from "./records.ts"
import { type FileEnds, Fs, type FsShape, Storage } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { SessionPage, SessionSummary, SessionTranscript } from "./sdk/protocol.ts"
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
import { attachSubagents } from "./subagents.ts"

// ---------------------------------------------------------------------------
// Where

/** The CLI caps a folder name at 200 characters and adds a hash of the whole path. */
const MAX_DIR_NAME = 200

/** The CLI's string hash (Java's hashCode), written in base 36. */
const pathHash = (path: string): string => {
  let h = 0
  for (let i = 0; i < path.length; i++) h = ((h << 5) - h + path.charCodeAt(i)) | 0
  return Math.abs(h).toString(36)
}

/** A working directory as the CLI names its project folder: every character not [A-Za-z0-9-] becomes '-'. */
export const encodeCwd = (path: string): string => {
  const encoded = path.replace(/[^A-Za-z0-9-]/g, "-")
  return encoded.length <= MAX_DIR_NAME ? encoded : `${encoded.slice(0, MAX_DIR_NAME)}-${pathHash(path)}`
}

export const projectsDir = (configDir: string): string => join(configDir, "projects")

/** The project folder of a working directory; the CLI records the resolved path, so it is resolved first. */
export const projectDir = (configDir: string, cwd: string): Effect.Effect<string, never, Fs> =>
  Effect.gen(function* () {
    const real = (yield* (yield* Fs).realpath(cwd)) ?? cwd
    return join(projectsDir(configDir), encodeCwd(real))
  })

export const sessionFile = (dir: string, cliSessionId: string): string => join(dir, `${cliSessionId}.jsonl`)

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

// ---------------------------------------------------------------------------
// list_sessions
//
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

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined

// --- The summary cache (plugin storage) ------------------------------------
//
// One storage value per config dir: the JSON text of `{ version, files }`,
// `files` mapping a transcript's path to `[size, mtimeMs]` (no session) or
// `[size, mtimeMs, title, created, cwd, branch]` (null where absent). Text,
// not an object: a host copies a stored value on every read, and copying
// one string is far cheaper than copying a thousand small objects.

export const listCacheKey = (configDir: string): string => `history:list:${projectsDir(configDir)}`
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
    return typeof files === "object" && files !== null && !Array.isArray(files)
      ? (files as Record<string, unknown>)
      : {}
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
export const listSessions = (
  configDir: string,
  params: ListParams = {},
): Effect.Effect<SessionPage, never, Fs | Storage> =>
  Effect.gen(function* () {
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
    const candidates = (yield* Effect.forEach(dirs, (dir) => candidatesIn(fs, dir), {
      concurrency: 4,
    })).flat()
    const cacheKey = listCacheKey(configDir)
    const cache = loadCache(yield* storage.get(cacheKey))
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
      for (const k of batch) if (k.summary) sessions.push(k.summary)
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

// ---------------------------------------------------------------------------
// Reading one transcript by the chain rule

const encoder = new TextEncoder()

const TYPE_OPEN = encoder.encode('{"type":"')
const PARENT_OPEN = encoder.encode('{"parentUuid":')
const SIDECHAIN_KEY = encoder.encode(',"isSidechain":')
const ATTACHMENT_KEY = encoder.encode(',"attachment":')
const NULL = encoder.encode("null")
const ATTACHMENT_UUID = needle('"type":"attachment","uuid":"')

/** Top-level record types a transcript read needs; every other `{"type":…` line is skipped unread. */
const WANTED_TYPES = new Set(["user", "assistant", "system", "summary", "custom-title", "ai-title"])

const ascii = (bytes: Uint8Array, from: number, to: number): string => decodeText(bytes.subarray(from, to))

/** How a line is read, decided from its first bytes: skipped, parsed, or (an attachment) only its links picked out. */
const Read = { Skip: 0, Parse: 1, Link: 2 } as const
type Read = (typeof Read)[keyof typeof Read]

const classify = (prefix: Uint8Array): Read => {
  if (startsWith(prefix, TYPE_OPEN)) {
    const end = stringEnd(prefix, TYPE_OPEN.length - 1)
    if (end < 0) return Read.Parse
    return WANTED_TYPES.has(ascii(prefix, TYPE_OPEN.length, end)) ? Read.Parse : Read.Skip
  }
  if (startsWith(prefix, PARENT_OPEN)) {
    // {"parentUuid":null|"…","isSidechain":true|false,"attachment":{…
    let at = PARENT_OPEN.length
    if (prefix[at] === 34) {
      at = stringEnd(prefix, at)
      if (at < 0) return Read.Parse
      at++
    } else if (startsWith(prefix, NULL, at)) at += 4
    else return Read.Parse
    if (!startsWith(prefix, SIDECHAIN_KEY, at)) return Read.Parse
    at += SIDECHAIN_KEY.length
    if (prefix[at] === 116 /* t */) at += 4
    else if (prefix[at] === 102 /* f */) at += 5
    else return Read.Parse
    return startsWith(prefix, ATTACHMENT_KEY, at) ? Read.Link : Read.Parse
  }
  return Read.Parse
}

/**
 * An attachment's links without parsing it: `parentUuid` opens the line, and
 * `uuid` follows the attachment object, so it is searched from the end
 * (only `rendered` text and a few short fields come after it).
 */
const attachmentLinks = (line: Uint8Array): { uuid: string; parent: string | null } | null => {
  let parent: string | null = null
  const at = PARENT_OPEN.length
  if (line[at] === 34) {
    const end = stringEnd(line, at)
    if (end < 0) return null
    parent = ascii(line, at + 1, end)
  }
  const key = lastIndexOfBytes(line, ATTACHMENT_UUID)
  if (key < 0) return null
  const open = key + ATTACHMENT_UUID.bytes.length - 1
  const close = stringEnd(line, open)
  if (close < 0) return null
  return { uuid: ascii(line, open + 1, close), parent }
}

interface ChainNode {
  /** Position in the file. */
  readonly order: number
  readonly parent: string | null
  /** A compaction boundary points back to the conversation it summarised. */
  readonly logicalParent?: string
  /** The record itself, kept for user, assistant and system records only. */
  readonly record?: StoredRecord
}

export interface Chain {
  /** The conversation, root first: user, assistant and system records. */
  readonly records: StoredRecord[]
  readonly customTitle?: string
  readonly aiTitle?: string
  /** False when the file is missing or not granted. */
  readonly found: boolean
}

export interface ChainOptions {
  /** Read a subagent file: its records are all sidechain ones. Otherwise sidechain records are skipped. */
  readonly sidechain?: boolean
}

/**
 * Collects a transcript's records and links in file order, then walks the
 * chain rule: from the last user or assistant record follow `parentUuid` to
 * the root, through a compaction boundary to the conversation it summarised.
 */
export class ChainBuilder {
  private readonly nodes = new Map<string, ChainNode>()
  /** The user and assistant records in file order, to bridge a gap in the chain. */
  private readonly messages: Array<{ uuid: string; order: number }> = []
  private order = 0
  private leaf: string | undefined
  customTitle: string | undefined
  aiTitle: string | undefined

  /** `sidechain`: read a subagent's file (all its records are sidechain ones); else sidechain records are skipped. */
  constructor(private readonly sidechain = false) {}

  add(record: StoredRecord): void {
    const type = record.type
    if (type === "custom-title") this.customTitle = nonEmpty(record.customTitle) ?? this.customTitle
    else if (type === "ai-title") this.aiTitle = nonEmpty(record.aiTitle) ?? this.aiTitle
    const uuid = record.uuid
    if (typeof uuid !== "string") return
    const message = type === "user" || type === "assistant"
    if (message && (record.isSidechain === true) !== this.sidechain) return
    const order = this.order++
    this.nodes.set(uuid, {
      order,
      parent: typeof record.parentUuid === "string" ? record.parentUuid : null,
      ...(typeof record.logicalParentUuid === "string" ? { logicalParent: record.logicalParentUuid } : {}),
      ...(message || type === "system" ? { record } : {}),
    })
    if (message) {
      this.leaf = uuid
      this.messages.push({ uuid, order })
    }
  }

  /** A record known only by its links (an attachment). */
  link(uuid: string, parent: string | null): void {
    this.nodes.set(uuid, { order: this.order++, parent })
  }

  /** The conversation, root first. */
  chain(): StoredRecord[] {
    const records: StoredRecord[] = []
    const seen = new Set<string>()
    let at = this.leaf
    let below = Number.POSITIVE_INFINITY
    while (at !== undefined && !seen.has(at)) {
      seen.add(at)
      const node = this.nodes.get(at)
      if (node === undefined) {
        // A parent the file does not hold (a lost write, a scrubbed copy): go on
        // from the message written just before the record that named it.
        at = messageBefore(this.messages, below, seen)
        continue
      }
      below = node.order
      if (node.record !== undefined) records.push(node.record)
      at = node.parent ?? node.logicalParent
    }
    return records.reverse()
  }
}

/** The chain of records already in memory (parsed lines of a transcript). */
export const chainOf = (records: ReadonlyArray<unknown>, options: ChainOptions = {}): StoredRecord[] => {
  const builder = new ChainBuilder(options.sidechain === true)
  for (const r of records)
    if (typeof r === "object" && r !== null && !Array.isArray(r)) builder.add(r as StoredRecord)
  return builder.chain()
}

/** Read a transcript by the chain rule. Streams the file; a torn last line is dropped. */
export const readChain = (path: string, options: ChainOptions = {}): Effect.Effect<Chain, never, Fs> =>
  Effect.gen(function* () {
    const builder = new ChainBuilder(options.sidechain === true)
    const onText = (line: string) => {
      let record: unknown
      try {
        record = JSON.parse(line)
      } catch {
        return // a torn last line or a stray write
      }
      if (typeof record === "object" && record !== null && !Array.isArray(record))
        builder.add(record as StoredRecord)
    }
    const onLink = (line: Uint8Array) => {
      const links = attachmentLinks(line)
      if (links === null) onText(decodeText(line))
      else builder.link(links.uuid, links.parent)
    }
    const found = yield* scanLines(path, classify, onText, onLink)
    return {
      records: builder.chain(),
      found,
      ...(builder.customTitle === undefined ? {} : { customTitle: builder.customTitle }),
      ...(builder.aiTitle === undefined ? {} : { aiTitle: builder.aiTitle }),
    }
  })

/** The latest message written before position `order` and not yet in the chain. */
const messageBefore = (
  messages: ReadonlyArray<{ uuid: string; order: number }>,
  order: number,
  seen: ReadonlySet<string>,
): string | undefined => {
  let lo = 0
  let hi = messages.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((messages[mid]?.order ?? 0) < order) lo = mid + 1
    else hi = mid
  }
  for (let i = lo - 1; i >= 0; i--) {
    const m = messages[i]
    if (m !== undefined && !seen.has(m.uuid)) return m.uuid
  }
  return undefined
}

/** Stream a file's lines through `classify`: skipped, parsed as text, or handed over as raw bytes. */
const scanLines = (
  path: string,
  classifyLine: (prefix: Uint8Array) => Read,
  onText: (line: string) => void,
  onRaw: (line: Uint8Array) => void,
): Effect.Effect<boolean, never, Fs> => {
  // The filter sees each line's prefix once, right before the line is delivered.
  let pending: Read = Read.Skip
  const filter = (prefix: Uint8Array) => {
    pending = classifyLine(prefix)
    return pending !== Read.Skip
  }
  return forEachLineBytes(
    path,
    (bytes) => {
      if (pending === Read.Link) onRaw(bytes)
      else onText(decodeText(bytes))
    },
    filter,
  )
}

// ---------------------------------------------------------------------------
// read_session

export const readSession = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
): Effect.Effect<SessionTranscript | null, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* projectDir(configDir, cwd)
    const chain = yield* readChain(sessionFile(dir, cliSessionId))
    if (!chain.found) return null
    const items = yield* attachSubagents(
      recordsToItems(chain.records),
      chain.records,
      join(dir, cliSessionId),
    )
    const title = chain.customTitle ?? chain.aiTitle
    return { session_id: cliSessionId, items, ...(title === undefined ? {} : { title }) }
  })

// ---------------------------------------------------------------------------
// Rewind points

/** The user records that are prompts, in conversation order (what `sent` indexes count). */
export const promptRecords = (records: ReadonlyArray<StoredRecord>): StoredRecord[] =>
  records.filter(
    (r) => r.type === "user" && !isToolResult(r) && !isInterruptText(recordText(r)) && promptOf(r) !== null,
  )

const isToolResult = (record: StoredRecord): boolean => {
  const message = record.message
  if (typeof message !== "object" || message === null) return false
  const content = (message as { content?: unknown }).content
  return Array.isArray(content) && content.some((b) => (b as { type?: unknown })?.type === "tool_result")
}

/** The uuid of the conversation's `index`-th prompt (0-based), if it exists. */
export const promptUuidAt = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  index: number,
): Effect.Effect<string | undefined, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* projectDir(configDir, cwd)
    const chain = yield* readChain(sessionFile(dir, cliSessionId))
    const uuid = promptRecords(chain.records)[index]?.uuid
    return typeof uuid === "string" ? uuid : undefined
  })

/** How many prompts the conversation holds (the index the next prompt will get). */
export const promptCount = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
): Effect.Effect<number, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* projectDir(configDir, cwd)
    const chain = yield* readChain(sessionFile(dir, cliSessionId))
    return promptRecords(chain.records).length
  })

export type RewindTarget =
  | { readonly resumeAt: string }
  | { readonly toNothing: true }
  | { readonly error: string }

/**
 * Where to resume so that the conversation ends just before the user record
 * `userRecordUuid`: its parent (`--resume-session-at` keeps the message it
 * names). A record with no parent is the first of the conversation: the
 * rewind leaves nothing, and the caller starts a new conversation.
 */
export const rewindTarget = (
  configDir: string,
  cwd: string,
  cliSessionId: string,
  userRecordUuid: string,
): Effect.Effect<RewindTarget, never, Fs> =>
  Effect.gen(function* () {
    const dir = yield* projectDir(configDir, cwd)
    const chain = yield* readChain(sessionFile(dir, cliSessionId))
    if (!chain.found) return { error: `no stored conversation ${cliSessionId}` }
    const target = chain.records.find((r) => r.uuid === userRecordUuid)
    if (target === undefined) return { error: `no message ${userRecordUuid} in conversation ${cliSessionId}` }
    // Its parent may be an attachment: --resume-session-at accepts that too
    // (verified on 2.1.332: the resumed request held exactly the earlier turns).
    if (typeof target.parentUuid === "string") return { resumeAt: target.parentUuid }
    return { toNothing: true }
  })

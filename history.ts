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
import { decodeText, forEachLineBytes } from "./files.ts"
import {
  firstLine,
  isInterruptText,
  promptOf,
  recordsToItems,
  recordText,
  type StoredRecord,
} from "./records.ts"
import { Fs, type FsShape } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { SessionPage, SessionSummary, SessionTranscript } from "./sdk/protocol.ts"
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
// Picking fields out of raw text (head and tail reads, never whole files)

/** Decode a JSON string literal whose opening quote ends at `from`; a cut-off literal gives what is there. */
const jsonStringAt = (text: string, from: number): string | undefined => {
  let end = from
  while (end < text.length) {
    const c = text.charCodeAt(end)
    if (c === 92 /* \ */) end += 2
    else if (c === 34 /* " */) break
    else end++
  }
  let raw = text.slice(from, Math.min(end, text.length))
  if (end >= text.length) raw = raw.replace(/\\(u[0-9a-fA-F]{0,3})?$/, "") // a cut escape
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return undefined
  }
}

/** The value of the last `"key":"…"` in `text`. */
const lastStringField = (text: string, key: string): string | undefined => {
  const marker = `"${key}":"`
  const at = text.lastIndexOf(marker)
  return at < 0 ? undefined : jsonStringAt(text, at + marker.length)
}

const firstStringField = (text: string, key: string): string | undefined => {
  const marker = `"${key}":"`
  const at = text.indexOf(marker)
  return at < 0 ? undefined : jsonStringAt(text, at + marker.length)
}

interface HeadFacts {
  readonly prompt?: string
  readonly created?: string
  readonly cwd?: string
  readonly branch?: string
  readonly sidechain: boolean
}

/** What the first bytes of a transcript say: the first prompt, when it began, where. */
const headFacts = (head: string, complete: boolean): HeadFacts => {
  let prompt: string | undefined
  let cwd: string | undefined
  let sidechain = false
  let at = head.indexOf('"type":"user"')
  while (at >= 0 && prompt === undefined) {
    const start = head.lastIndexOf("\n", at) + 1
    const nl = head.indexOf("\n", at)
    const line = head.slice(start, nl < 0 ? head.length : nl)
    at = nl < 0 ? -1 : head.indexOf('"type":"user"', nl)
    let record: StoredRecord | undefined
    try {
      record = JSON.parse(line) as StoredRecord
    } catch {
      // The prompt runs past the head: take what the head holds of it.
      if (nl < 0 && !complete) {
        if (line.includes('"isSidechain":true')) sidechain = true
        const text = firstStringField(line, "text") ?? firstStringField(line, "content")
        if (text !== undefined) prompt = firstLine(text)
      }
      continue
    }
    if (record.type !== "user") continue
    if (record.isSidechain === true) {
      sidechain = true
      break
    }
    if (typeof record.cwd === "string") cwd ??= record.cwd
    const found = promptOf(record)
    if (found !== null && found.text.trim() !== "") prompt = firstLine(found.text)
  }
  return {
    sidechain,
    ...(prompt === undefined ? {} : { prompt }),
    ...(cwd === undefined ? {} : { cwd }),
    ...withValue("created", firstStringField(head, "timestamp")),
    ...withValue("branch", lastStringField(head, "gitBranch")),
  }
}

const withValue = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: string }

// ---------------------------------------------------------------------------
// list_sessions

/** Bytes read from each end of a transcript for the list. */
const HEAD_BYTES = 2 * 1024
const TAIL_BYTES = 4 * 1024
/** How far the head grows when the first prompt is not in it. */
const LONG_HEAD_BYTES = 64 * 1024
const DEFAULT_PAGE = 50

interface Candidate {
  readonly id: string
  readonly path: string
  readonly dir: string
  readonly size: number
  readonly mtimeMs: number
  readonly birthtimeMs: number
  /** The session has a folder (subagents, a title file…). */
  readonly hasFolder: boolean
}

const iso = (ms: number): string => new Date(ms).toISOString()

/** The files of one project folder that can be sessions: `<uuid>.jsonl`. */
const candidatesIn = (dir: string): Effect.Effect<Candidate[], never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const entries = yield* fs.list(dir)
    if (entries === null) return []
    const folders = new Set(entries.filter((e) => e.kind === "directory").map((e) => e.name))
    const files = entries.filter(
      (e) => e.kind !== "directory" && e.name.endsWith(".jsonl") && UUID.test(e.name.slice(0, -6)),
    )
    const found = yield* Effect.forEach(
      files,
      (entry) => {
        // `dir` is already normal: plain concatenation keeps this loop cheap.
        const path = `${dir}/${entry.name}`
        return Effect.map(fs.stat(path), (stat): Candidate | null => {
          if (stat === null || stat.kind !== "file") return null
          const id = entry.name.slice(0, -6)
          return {
            id,
            path,
            dir,
            size: stat.size,
            mtimeMs: stat.mtimeMs,
            birthtimeMs: stat.birthtimeMs,
            hasFolder: folders.has(id),
          }
        })
      },
      { concurrency: 16 },
    )
    return found.filter((c): c is Candidate => c !== null)
  })

/** Newest first; the id breaks ties so the order (and the cursor) is stable. */
const newestFirst = (a: Candidate, b: Candidate): number =>
  b.mtimeMs - a.mtimeMs || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const cursorOf = (c: Candidate): string => `${c.mtimeMs}:${c.id}`

/** True when `c` sorts after the entry the cursor names. */
const afterCursor = (cursor: string) => {
  const at = cursor.indexOf(":")
  const mtime = Number(cursor.slice(0, at))
  const id = cursor.slice(at + 1)
  if (at < 0 || Number.isNaN(mtime)) return () => true
  return (c: Candidate) => c.mtimeMs < mtime || (c.mtimeMs === mtime && c.id > id)
}

/** The last custom-title and ai-title records in `text` (a tail or a head). */
const titlesIn = (text: string): { custom?: string; ai?: string } => {
  const found: { custom?: string; ai?: string } = {}
  let at = text.lastIndexOf('-title"')
  while (at >= 0 && (found.custom === undefined || found.ai === undefined)) {
    const custom = text.startsWith('"type":"custom-title"', at - 14)
    const ai = !custom && text.startsWith('"type":"ai-title"', at - 10)
    if (custom || ai) {
      const record = lineAt(text, at)
      if (custom) found.custom ??= nonEmpty(record?.customTitle)
      else found.ai ??= nonEmpty(record?.aiTitle)
    }
    at = at > 0 ? text.lastIndexOf('-title"', at - 1) : -1
  }
  return found
}

/** The whole line around `at`, parsed (undefined when torn or not JSON). */
const lineAt = (text: string, at: number): StoredRecord | undefined => {
  const start = text.lastIndexOf("\n", at) + 1
  const nl = text.indexOf("\n", at)
  try {
    return JSON.parse(text.slice(start, nl < 0 ? text.length : nl)) as StoredRecord
  } catch {
    return undefined
  }
}

/** One session's list entry from a head and a tail of its file; null when the file is no session. */
const summarize = (fs: FsShape, c: Candidate): Effect.Effect<SessionSummary | null> =>
  Effect.gen(function* () {
    const headData = yield* fs.readRange(c.path, 0, HEAD_BYTES)
    if (headData === null) return null
    let head = decodeText(headData)
    let facts = headFacts(head, c.size <= HEAD_BYTES)
    if (facts.prompt === undefined && !facts.sidechain && c.size > HEAD_BYTES) {
      const longer = yield* fs.readRange(c.path, 0, LONG_HEAD_BYTES)
      if (longer !== null) head = decodeText(longer)
      facts = headFacts(head, c.size <= LONG_HEAD_BYTES)
    }
    if (facts.sidechain) return null
    let tail = head
    if (c.size > headData.length) {
      const tailData = yield* fs.readRange(c.path, Math.max(0, c.size - TAIL_BYTES), c.size)
      tail = tailData === null ? "" : decodeText(tailData)
    }
    const sidecar = c.hasFolder
      ? titleOfSidecar(yield* fs.read(join(c.dir, c.id, "custom-title.json")))
      : undefined
    const inTail = titlesIn(tail)
    const inHead = tail === head || c.size <= TAIL_BYTES ? {} : titlesIn(head)
    const title = sidecar ?? inTail.custom ?? inHead.custom ?? inTail.ai ?? inHead.ai ?? facts.prompt
    if (title === undefined) return null
    const branch = lastStringField(tail, "gitBranch") ?? facts.branch
    const cwd = facts.cwd ?? firstStringField(tail, "cwd")
    const created = facts.created ?? (c.birthtimeMs > 0 ? iso(c.birthtimeMs) : undefined)
    return {
      session_id: c.id,
      title,
      modified_at: iso(c.mtimeMs),
      size_bytes: c.size,
      ...(created === undefined ? {} : { created_at: created }),
      ...(cwd === undefined ? {} : { cwd }),
      ...(branch === undefined ? {} : { branch }),
    }
  })

/** `custom-title.json` beside the session (written by a rename): `{ customTitle }`. */
const titleOfSidecar = (text: string | null): string | undefined => {
  if (text === null) return undefined
  try {
    return nonEmpty((JSON.parse(text) as { customTitle?: unknown } | null)?.customTitle)
  } catch {
    return undefined
  }
}

const nonEmpty = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value : undefined

export interface ListParams {
  readonly cwd?: string
  readonly cursor?: string
  readonly limit?: number
}

/**
 * The stored sessions, newest first, one page at a time: of one working
 * directory, or of every project when `cwd` is absent.
 */
export const listSessions = (
  configDir: string,
  params: ListParams = {},
): Effect.Effect<SessionPage, never, Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    let dirs: string[]
    if (params.cwd !== undefined) dirs = [yield* projectDir(configDir, params.cwd)]
    else {
      const root = projectsDir(configDir)
      const entries = (yield* fs.list(root)) ?? []
      dirs = entries.filter((e) => e.kind === "directory").map((e) => join(root, e.name))
    }
    const all = (yield* Effect.forEach(dirs, candidatesIn, { concurrency: 4 })).flat().sort(newestFirst)
    const ordered = params.cursor === undefined ? all : all.filter(afterCursor(params.cursor))
    const limit = Math.max(1, params.limit ?? DEFAULT_PAGE)
    const sessions: SessionSummary[] = []
    let next = 0
    // Read in batches the size of what is missing: a file that is no session makes room for the next.
    while (sessions.length < limit && next < ordered.length) {
      const batch = ordered.slice(next, next + (limit - sessions.length))
      next += batch.length
      const summaries = yield* Effect.forEach(batch, (c) => summarize(fs, c), { concurrency: 16 })
      for (const s of summaries) if (s !== null) sessions.push(s)
    }
    const last = ordered[next - 1]
    return next < ordered.length && last !== undefined ? { sessions, cursor: cursorOf(last) } : { sessions }
  })

// ---------------------------------------------------------------------------
// Reading one transcript by the chain rule

const encoder = new TextEncoder()
const TYPE_OPEN = encoder.encode('{"type":"')
const PARENT_OPEN = encoder.encode('{"parentUuid":')
const SIDECHAIN_KEY = encoder.encode(',"isSidechain":')
const ATTACHMENT_KEY = encoder.encode(',"attachment":')
const ATTACHMENT_UUID = encoder.encode('"type":"attachment","uuid":"')

/** Top-level record types a transcript read needs; every other `{"type":…` line is skipped unread. */
const WANTED_TYPES = new Set(["user", "assistant", "system", "summary", "custom-title", "ai-title"])

const startsWith = (bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean => {
  if (bytes.length < at + prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false
  return true
}

/** Where a JSON string starting at `at` (the opening quote) ends (index of the closing quote), or -1. */
const stringEnd = (bytes: Uint8Array, at: number): number => {
  for (let i = at + 1; i < bytes.length; i++) {
    const c = bytes[i]
    if (c === 92) i++
    else if (c === 34) return i
  }
  return -1
}

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
    } else if (startsWith(prefix, encoder.encode("null"), at)) at += 4
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

/** The last index of `needle` in `bytes`, searching back from the end (native search on one byte). */
const lastIndexOfBytes = (bytes: Uint8Array, needle: Uint8Array): number => {
  const anchor = needle[needle.length - 1] as number
  let at = bytes.length - 1
  while (at >= needle.length - 1) {
    at = bytes.lastIndexOf(anchor, at)
    if (at < needle.length - 1) return -1
    const start = at - needle.length + 1
    if (startsWith(bytes, needle, start)) return start
    at--
  }
  return -1
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
  const open = key + ATTACHMENT_UUID.length - 1
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

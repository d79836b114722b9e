/**
 * Reading one transcript by the chain rule: from the last user or assistant
 * record follow `parentUuid` to the root, through a compaction boundary
 * (`parentUuid: null`, `logicalParentUuid`) to the conversation it
 * summarised; a gap (a parent the file does not hold) is bridged by the
 * message written just before.
 *
 * The file is streamed, and records the chain does not need (api-request*,
 * queue operations…) are recognised from their first bytes and never decoded
 * or parsed. An attachment still links the chain, so its `parentUuid` and
 * `uuid` are picked out of its bytes. A record kept for the chain is kept
 * small, since all of them live until the read ends: its tool output held
 * once (records.ts `shareRecordOutput`), the CLI's bookkeeping fields left
 * out (`keptRecord`).
 */
import { Effect } from "effect"
import { lastIndexOfBytes, needle, startsWith, stringEnd } from "./bytes.ts"
import { decodeText, forEachLineBytes } from "../files.ts"
import { shareRecordOutput, type StoredRecord } from "../records.ts"
import type { Fs } from "../sdk/plugin-api.ts"
import { isObject, notBlank } from "../values.ts"

const encoder = new TextEncoder()

const TYPE_OPEN = encoder.encode('{"type":"')
const PARENT_OPEN = encoder.encode('{"parentUuid":')
const SIDECHAIN_KEY = encoder.encode(',"isSidechain":')
const AGENT_ID_KEY = encoder.encode(',"agentId":"')
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
    // {"parentUuid":null|"…","isSidechain":true|false[,"agentId":"…"],"attachment":{…
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
    // A subagent's records name their agent here (2.1.332: `"isSidechain":true,"agentId":"a…","attachment":{`).
    if (startsWith(prefix, AGENT_ID_KEY, at)) {
      at = stringEnd(prefix, at + AGENT_ID_KEY.length - 1)
      if (at < 0) return Read.Parse
      at++
    }
    return startsWith(prefix, ATTACHMENT_KEY, at) ? Read.Link : Read.Parse
  }
  return Read.Parse
}

/**
 * Whether the reader parses a line, by its first bytes (at most
 * files.ts `LinePrefix`): the scale bench's second floor parses exactly
 * these lines.
 */
export const isParsedLine = (prefix: Uint8Array): boolean => classify(prefix) === Read.Parse

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
  readonly logicalParent: string | undefined
  /** The record itself, kept for user, assistant and system records only. */
  readonly record: StoredRecord | undefined
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
    if (type === "custom-title") this.customTitle = notBlank(record.customTitle) ?? this.customTitle
    else if (type === "ai-title") this.aiTitle = notBlank(record.aiTitle) ?? this.aiTitle
    const uuid = record.uuid
    if (typeof uuid !== "string") return
    const message = type === "user" || type === "assistant"
    if (message && (record.isSidechain === true) !== this.sidechain) return
    if (type === "user") shareRecordOutput(record)
    const order = this.order++
    // Every node has one shape (no optional spreads): a read makes one per record.
    this.nodes.set(uuid, {
      order,
      parent: typeof record.parentUuid === "string" ? record.parentUuid : null,
      logicalParent: typeof record.logicalParentUuid === "string" ? record.logicalParentUuid : undefined,
      record: message || type === "system" ? keptRecord(record) : undefined,
    })
    if (message) {
      this.leaf = uuid
      this.messages.push({ uuid, order })
    }
  }

  /** A record known only by its links (an attachment). */
  link(uuid: string, parent: string | null): void {
    this.nodes.set(uuid, { order: this.order++, parent, logicalParent: undefined, record: undefined })
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

/**
 * Fields of a transcript record no reader of a chain looks at (2.1.332's
 * bookkeeping: where and when it was written, how the request was made).
 * A kept record is copied without them, so they are not held until the
 * items are built. Any field not named here is kept.
 */
const UNREAD_FIELDS = new Set([
  "promptId",
  "timestamp",
  "permissionMode",
  "promptSource",
  "sentAtMs",
  "rowSource",
  "turnOrigin",
  "turnPosition",
  "userType",
  "entrypoint",
  "cwd",
  "sessionId",
  "version",
  "gitBranch",
  "apiBlockIndex",
  "requestId",
  "requestRef",
  "requestedModel",
  "promptCacheRequested",
  "effort",
  "perTurnEffort",
  "madeBy",
  "sourceToolAssistantUUID",
  "isVisibleInTranscriptOnly",
  "slug",
])
/** An assistant message's fields no reader looks at (the usage of that one request). */
const UNREAD_MESSAGE_FIELDS = new Set(["id", "usage", "stop_details", "stop_sequence"])

const without = (fields: Readonly<Record<string, unknown>>, unread: ReadonlySet<string>) => {
  const kept: Record<string, unknown> = {}
  for (const key in fields) if (!unread.has(key)) kept[key] = fields[key]
  return kept
}

/** A record as the chain keeps it: the unread fields left out. */
export const keptRecord = (record: StoredRecord): StoredRecord => {
  const kept = without(record, UNREAD_FIELDS)
  if (isObject(kept.message)) kept.message = without(kept.message, UNREAD_MESSAGE_FIELDS)
  return kept
}

/** The chain of records already in memory (parsed lines of a transcript). */
export const chainOf = (records: ReadonlyArray<unknown>, options: ChainOptions = {}): StoredRecord[] => {
  const builder = new ChainBuilder(options.sidechain === true)
  for (const r of records) if (isObject(r)) builder.add(r as StoredRecord)
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
      if (isObject(record)) builder.add(record as StoredRecord)
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

/**
 * A stored session's list entry from the two ends of its transcript (a
 * head and a tail, never the whole file): title, created time, cwd and
 * branch.
 *
 * The ends are searched as bytes (bytes.ts) and only what is kept is
 * decoded: the first user line (parsed), a title line, a few short values.
 * A cold list summarizes a thousand files in a fresh process, before any of
 * this code is optimized, so the less of it runs and the less it allocates
 * per file the better. The bytes may be lent (FsShape.readEnds): everything
 * is taken out of them at once.
 */
import { indexOfBytes, lastIndexOfBytes, type Needle, needle, startsWith, stringEnd } from "./bytes.ts"
import { promptOf, type StoredRecord } from "./records.ts"
import type { SessionSummary } from "./sdk/protocol.ts"
import { notBlank } from "./values.ts"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** The lenient decoder: a character split by a read's cut becomes U+FFFD, which `trimCut` drops. */
const decoder = new TextDecoder()
const encoder = new TextEncoder()

// ---------------------------------------------------------------------------
// Values out of raw JSON bytes

/** The character at `at` follows an odd run of backslashes (it is escaped). */
const isEscaped = (text: string, at: number): boolean => {
  let n = 0
  while (at - 1 - n >= 0 && text.charCodeAt(at - 1 - n) === 92 /* \ */) n++
  return n % 2 === 1
}

/** A literal cut at the end of a read: drop a split character and a cut escape (`\`, or `\u` with fewer than four digits). */
const trimCut = (raw: string): string => {
  const text = raw.endsWith("\uFFFD") ? raw.slice(0, -1) : raw
  const unicode = /\\u[0-9a-fA-F]{0,3}$/.exec(text)
  if (unicode !== null && !isEscaped(text, unicode.index)) return text.slice(0, unicode.index)
  return isEscaped(text, text.length) ? text.slice(0, -1) : text
}

/** The JSON string value whose opening quote is at `quote`, decoded; one cut off by the read's end gives what is there. */
const valueAt = (bytes: Uint8Array, quote: number, to = bytes.length): string | undefined => {
  const close = stringEnd(bytes, quote)
  const cut = close < 0 || close >= to
  let raw = decoder.decode(bytes.subarray(quote + 1, cut ? to : close))
  if (cut) raw = trimCut(raw)
  // Most values hold no escape: no need for the JSON parser.
  if (raw.indexOf("\\") < 0) return raw
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return undefined
  }
}

/** The value of the first `key` (a `"name":"` needle) in `bytes[from, to)`. */
const firstValue = (bytes: Uint8Array, key: Needle, from = 0, to = bytes.length) => {
  const at = indexOfBytes(bytes, key, from, to)
  return at < 0 ? undefined : valueAt(bytes, at + key.bytes.length - 1, to)
}

/** The value of the last `key` (a `"name":"` needle) in `bytes`. */
const lastValue = (bytes: Uint8Array, key: Needle) => {
  const at = lastIndexOfBytes(bytes, key)
  return at < 0 ? undefined : valueAt(bytes, at + key.bytes.length - 1)
}

/** The whole line around `at`, parsed; undefined when the read cut it or it is not JSON. */
const lineAt = (
  bytes: Uint8Array,
  at: number,
  cutStart: boolean,
  cutEnd: boolean,
): StoredRecord | undefined => {
  const start = bytes.lastIndexOf(10, at) + 1
  const nl = bytes.indexOf(10, at)
  if ((start === 0 && cutStart) || (nl < 0 && cutEnd)) return undefined
  try {
    return JSON.parse(decoder.decode(bytes.subarray(start, nl < 0 ? bytes.length : nl))) as StoredRecord
  } catch {
    return undefined
  }
}

/** The first line of a prompt that is not blank, trimmed (records.ts `firstLine`, without splitting the whole text). */
const firstLineOf = (text: string): string => {
  let at = 0
  for (;;) {
    const nl = text.indexOf("\n", at)
    const line = text.slice(at, nl < 0 ? text.length : nl).trim()
    if (line !== "" || nl < 0) return line
    at = nl + 1
  }
}

const TIMESTAMP_KEY = needle('"timestamp":"')
const GIT_BRANCH_KEY = needle('"gitBranch":"')
const CWD_KEY = needle('"cwd":"')
const TEXT_KEY = needle('"text":"')
const CONTENT_KEY = needle('"content":"')

// ---------------------------------------------------------------------------
// Titles

export interface Titles {
  readonly custom?: string
  readonly ai?: string
}

/** Both title keys end so: one search finds either. */
const TITLE_KEY_END = needle('Title":"')
const CUSTOM_TITLE_KEY = encoder.encode('"customTitle":"')
const AI_TITLE_KEY = encoder.encode('"aiTitle":"')

/** How the CLI writes a title record's line up to its value's opening quote. */
const CUSTOM_TITLE_LINE = encoder.encode('{"type":"custom-title","customTitle":"')
const AI_TITLE_LINE = encoder.encode('{"type":"ai-title","aiTitle":"')

/**
 * The title of the record whose key's opening quote is at `keyAt`: read
 * from the bytes when the line is laid out as the CLI writes it (it opens
 * with its type and this key, and the value closes within the line), else
 * from the parsed line. Undefined: no such title there.
 */
const titleAt = (
  bytes: Uint8Array,
  keyAt: number,
  key: Uint8Array,
  layout: Uint8Array,
  type: string,
  field: string,
  cutStart: boolean,
  cutEnd: boolean,
): string | undefined => {
  const start = bytes.lastIndexOf(10, keyAt) + 1
  if (
    (start > 0 || !cutStart) &&
    keyAt === start + layout.length - key.length &&
    startsWith(bytes, layout, start)
  ) {
    const quote = start + layout.length - 1
    const close = stringEnd(bytes, quote)
    const nl = close < 0 ? -1 : bytes.indexOf(10, close)
    if (close >= 0 && (nl < 0 ? !cutEnd : close < nl)) return notBlank(valueAt(bytes, quote, close + 1))
  }
  const record = lineAt(bytes, keyAt, cutStart, cutEnd)
  return record?.type === type ? notBlank(record[field]) : undefined
}

/** The last custom-title and ai-title records in an end of a transcript. */
export const titlesIn = (bytes: Uint8Array, cutStart: boolean, cutEnd: boolean): Titles => {
  const found: Mutable<Titles> = {}
  let at = lastIndexOfBytes(bytes, TITLE_KEY_END)
  while (at >= 0 && (found.custom === undefined || found.ai === undefined)) {
    if (startsWith(bytes, CUSTOM_TITLE_KEY, at - 7)) {
      if (found.custom === undefined)
        found.custom = titleAt(
          bytes,
          at - 7,
          CUSTOM_TITLE_KEY,
          CUSTOM_TITLE_LINE,
          "custom-title",
          "customTitle",
          cutStart,
          cutEnd,
        )
    } else if (startsWith(bytes, AI_TITLE_KEY, at - 3)) {
      if (found.ai === undefined)
        found.ai = titleAt(
          bytes,
          at - 3,
          AI_TITLE_KEY,
          AI_TITLE_LINE,
          "ai-title",
          "aiTitle",
          cutStart,
          cutEnd,
        )
    }
    at = at > 0 ? lastIndexOfBytes(bytes, TITLE_KEY_END, at - 1) : -1
  }
  return found
}

// ---------------------------------------------------------------------------
// The head

/** What the first bytes of a transcript say: the first prompt, when it began, where (and the branch, see endsFacts). */
export interface HeadFacts {
  readonly prompt?: string
  readonly created?: string
  readonly cwd?: string
  readonly branch?: string
  /** The file is a subagent's transcript (a sidechain), not a session. */
  readonly sidechain: boolean
}

const USER_TYPE = needle('"type":"user"')
const SIDECHAIN_TRUE = needle('"isSidechain":true')

/**
 * promptOf's answer for the usual first prompt, without its general walk:
 * a message of one text (a string or a single text block) with no markup
 * (`<`: harness text, commands, task notifications) and none of the keys
 * promptOf looks at. Undefined when unsure: ask promptOf.
 */
const plainPromptOf = (record: StoredRecord): string | undefined => {
  if (record.isMeta !== undefined || record.isCompactSummary !== undefined || record.origin !== undefined)
    return undefined
  const message = record.message as { content?: unknown } | null | undefined
  if (typeof message !== "object" || message === null) return undefined
  const content = message.content
  let text: unknown
  if (typeof content === "string") text = content
  else if (Array.isArray(content) && content.length === 1) {
    const block = content[0] as { type?: unknown; text?: unknown } | null
    if (typeof block === "object" && block !== null && block.type === "text") text = block.text
  }
  return typeof text === "string" && text.indexOf("<") < 0 ? text : undefined
}

/** How the CLI writes a prompt's record: `type`, then the message, its content next. */
const PROMPT_RECORD = needle('"type":"user","message":{"role":"user","content":')
const ONE_TEXT_BLOCK = encoder.encode('[{"type":"text","text":"')
const ONE_TEXT_BLOCK_END = encoder.encode('"}]}')
/** Keys that make a user record more than a typed prompt: with any of them, the record is parsed. */
const NOT_PLAIN = [
  needle('"isMeta":'),
  needle('"isCompactSummary":'),
  needle('"origin":'),
  needle('"isSidechain":true'),
]

/**
 * The prompt and cwd of the line `bytes[start, end)` without parsing it,
 * when it is the usual typed prompt: the CLI's layout, a message of one text
 * (a string or a single text block) without markup, none of the keys that
 * make a record more than that. Undefined when unsure: parse it. (A key
 * found by its opening quote is a key: inside a JSON string every quote is
 * escaped.)
 */
export const plainPromptLine = (
  bytes: Uint8Array,
  start: number,
  end: number,
): { readonly prompt: string; readonly cwd?: string } | undefined => {
  const at = indexOfBytes(bytes, PROMPT_RECORD, start, end)
  if (at < 0) return undefined
  for (const key of NOT_PLAIN) if (indexOfBytes(bytes, key, start, end) >= 0) return undefined
  let open = at + PROMPT_RECORD.bytes.length
  let closing = 1 // the string ends the message: `"}`
  if (bytes[open] !== 34 /* " */) {
    if (!startsWith(bytes, ONE_TEXT_BLOCK, open)) return undefined
    open += ONE_TEXT_BLOCK.length - 1
    closing = ONE_TEXT_BLOCK_END.length - 1
  }
  const close = stringEnd(bytes, open)
  if (close < 0 || close + closing >= end) return undefined
  if (closing === 1 ? bytes[close + 1] !== 125 /* } */ : !startsWith(bytes, ONE_TEXT_BLOCK_END, close))
    return undefined
  const prompt = valueAt(bytes, open, close + 1)
  if (prompt === undefined || prompt.indexOf("<") >= 0 || prompt.trim() === "") return undefined
  const cwd = firstValue(bytes, CWD_KEY, close, end)
  return cwd === undefined ? { prompt } : { prompt, cwd }
}

/** The head's facts; `cutEnd`: the file goes on past these bytes. */
export const headFacts = (bytes: Uint8Array, cutEnd: boolean): HeadFacts => {
  let prompt: string | undefined
  let cwd: string | undefined
  let sidechain = false
  let at = indexOfBytes(bytes, USER_TYPE)
  while (at >= 0 && prompt === undefined) {
    const start = bytes.lastIndexOf(10, at) + 1
    const nl = bytes.indexOf(10, at)
    const end = nl < 0 ? bytes.length : nl
    at = nl < 0 ? -1 : indexOfBytes(bytes, USER_TYPE, nl)
    if (nl < 0 && cutEnd) {
      // The prompt runs past the head: take what the head holds of it (never
      // parsed: a cut line only costs the parser an exception).
      if (indexOfBytes(bytes, SIDECHAIN_TRUE, start, end) >= 0) sidechain = true
      const found = firstValue(bytes, TEXT_KEY, start, end) ?? firstValue(bytes, CONTENT_KEY, start, end)
      if (found !== undefined) prompt = firstLineOf(found)
      continue
    }
    const plain = plainPromptLine(bytes, start, end)
    if (plain !== undefined) {
      cwd ??= plain.cwd
      prompt = firstLineOf(plain.prompt)
      continue
    }
    let record: StoredRecord
    try {
      record = JSON.parse(decoder.decode(bytes.subarray(start, end))) as StoredRecord
    } catch {
      continue
    }
    if (record.type !== "user") continue
    if (record.isSidechain === true) {
      sidechain = true
      break
    }
    if (typeof record.cwd === "string") cwd ??= record.cwd
    const found = plainPromptOf(record) ?? promptOf(record)?.text
    if (found !== undefined && found.trim() !== "") prompt = firstLineOf(found)
  }
  const facts: Mutable<HeadFacts> = { sidechain }
  if (prompt !== undefined) facts.prompt = prompt
  if (cwd !== undefined) facts.cwd = cwd
  const created = firstValue(bytes, TIMESTAMP_KEY)
  if (created !== undefined) facts.created = created
  return facts
}

// ---------------------------------------------------------------------------
// The tail

/** What the last bytes of a transcript say: its latest titles, branch and (when asked) cwd. */
export interface TailFacts extends Titles {
  readonly branch?: string
  readonly cwd?: string
  /** The tail starts at the file's start: it holds the whole file. */
  readonly whole: boolean
}

/** The tail's facts; `cutStart`: the file begins before these bytes; the first cwd only when `needCwd`. */
export const tailFacts = (bytes: Uint8Array, cutStart: boolean, needCwd: boolean): TailFacts => {
  const facts: Mutable<TailFacts> = { ...titlesIn(bytes, cutStart, false), whole: !cutStart }
  const branch = lastValue(bytes, GIT_BRANCH_KEY)
  if (branch !== undefined) facts.branch = branch
  if (needCwd) {
    const cwd = firstValue(bytes, CWD_KEY)
    if (cwd !== undefined) facts.cwd = cwd
  }
  return facts
}

// ---------------------------------------------------------------------------
// The entry

/** A file's identity and metadata, as the list knows it. */
export interface FileFacts {
  readonly id: string
  readonly size: number
  readonly mtimeMs: number
  readonly birthtimeMs: number
}

/** What a chat's title may come from, each the newest of its kind. */
export interface TitleSources {
  /** The rename's title file beside the session (`custom-title.json`). */
  readonly sidecar?: string | undefined
  readonly custom?: string | undefined
  readonly ai?: string | undefined
  /** The first line of the first prompt. */
  readonly prompt?: string | undefined
}

/**
 * A chat's title, by priority: the rename's file, a custom title, an AI
 * title, then the first prompt's first line. The one rule of list_sessions
 * and read_session, so a chat is called the same in both.
 */
export const chatTitle = (t: TitleSources): string | undefined => t.sidecar ?? t.custom ?? t.ai ?? t.prompt

/**
 * The list entry, or null when the file has no title at all (no prompt, no
 * title record: not a conversation). Titles by priority: the rename's title
 * file (`sidecar`), a custom title, an AI title, then the first prompt; a
 * title in the tail outranks one in the head (it is newer).
 */
export const summaryOf = (
  file: FileFacts,
  head: HeadFacts,
  headTitles: Titles,
  tail: TailFacts,
  sidecar: string | undefined,
): SessionSummary | null => {
  const title = chatTitle({
    sidecar,
    custom: tail.custom ?? headTitles.custom,
    ai: tail.ai ?? headTitles.ai,
    prompt: head.prompt,
  })
  if (title === undefined) return null
  const branch = tail.branch ?? head.branch
  const cwd = head.cwd ?? tail.cwd
  const created =
    head.created ?? (file.birthtimeMs > 0 ? new Date(file.birthtimeMs).toISOString() : undefined)
  const summary: Mutable<SessionSummary> = {
    session_id: file.id,
    title,
    modified_at: new Date(file.mtimeMs).toISOString(),
    size_bytes: file.size,
  }
  if (created !== undefined) summary.created_at = created
  if (cwd !== undefined) summary.cwd = cwd
  if (branch !== undefined) summary.branch = branch
  return summary
}

/** Whether the head must be searched for titles too: the tail has no custom title and does not hold the whole file. */
export const needHeadTitles = (tail: TailFacts): boolean => tail.custom === undefined && !tail.whole

/** Everything a list entry needs from a file's two ends. */
export interface EndsFacts {
  readonly head: HeadFacts
  readonly headTitles: Titles
  readonly tail: TailFacts
}

/**
 * The facts of a file's two ends (`size`: the file's), each searched only as
 * far as the entry needs: the head's titles when the tail has no custom
 * title, its branch when the tail has none, the tail's cwd when the head has
 * none, or no prompt (a caller that then reads a longer head for the
 * prompt may find no cwd there either).
 */
export const endsFacts = (head: Uint8Array, tail: Uint8Array, size: number): EndsFacts => {
  const headCut = size > head.length
  const h: Mutable<HeadFacts> = headFacts(head, headCut)
  if (h.sidechain) return { head: h, headTitles: {}, tail: { whole: !(size > tail.length) } }
  const t = tailFacts(tail, size > tail.length, h.cwd === undefined || h.prompt === undefined)
  if (t.branch === undefined) {
    const branch = lastValue(head, GIT_BRANCH_KEY)
    if (branch !== undefined) h.branch = branch
  }
  return { head: h, headTitles: needHeadTitles(t) ? titlesIn(head, false, headCut) : {}, tail: t }
}

/** `custom-title.json` beside the session (written by a rename): `{ customTitle }`. */
export const titleOfSidecar = (text: string | null): string | undefined => {
  if (text === null) return undefined
  try {
    return notBlank((JSON.parse(text) as { customTitle?: unknown } | null)?.customTitle)
  } catch {
    return undefined
  }
}

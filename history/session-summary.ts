/**
 * A stored session's list entry from the two ends of its transcript (a
 * head and a tail, never the whole file): title, created time, cwd and
 * branch.
 *
 * Each end is decoded once and searched as text (json-text.ts: forward
 * searches on one rare character of each key, native at memory speed); only
 * what is kept is cut out of it: the first prompt, a title, a few short
 * values; a line is parsed only for a title not laid out as the CLI writes
 * it or an unusual first prompt. A cold list summarizes a thousand files in
 * a fresh process, before any of this code is optimized, so the fewer calls
 * per file the better. The bytes may be lent (FsShape.readEnds): they are
 * decoded at once and never kept.
 */
import { promptOf, type StoredRecord } from "../records.ts"
import type { SessionSummary } from "../sdk/protocol.ts"
import { firstValue, indexOfKey, lastValue, lineAt, own, stringEndAt, textKey, valueAt } from "./json-text.ts"
import { notBlank } from "../values.ts"

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** The lenient decoder: a character split by a read's cut becomes U+FFFD, which history/json-text.ts's `valueAt` drops. */
const decoder = new TextDecoder()

// ---------------------------------------------------------------------------
// Values out of raw JSON text (history/json-text.ts)

/** The first line of a prompt that is not blank, trimmed (records.ts `firstLine`, without splitting the whole text). */
const firstLineOf = (text: string): string => {
  let at = 0
  for (;;) {
    const nl = text.indexOf("\n", at)
    const line = text.slice(at, nl < 0 ? text.length : nl).trim()
    if (line !== "" || nl < 0) return own(line)
    at = nl + 1
  }
}

// Anchors: up to six characters of the key, so that V8's native search
// skips what is not the key (history/json-text.ts), led by a capital where the key
// has one (rare in JSON, rarer than most letters in prose).
const TIMESTAMP_KEY = textKey('"timestamp":"', "p")
const GIT_BRANCH_KEY = textKey('"gitBranch":"', "Branch")
const CWD_KEY = textKey('"cwd":"', "w")
const TEXT_KEY = textKey('"text":"', "x")
const CONTENT_KEY = textKey('"content":"', "c")

// ---------------------------------------------------------------------------
// Titles

export interface Titles {
  readonly custom?: string
  readonly ai?: string
}

/** Both title keys end so: one search finds either. */
const TITLE_KEY_END = textKey('Title":"', 'Title"')
const CUSTOM_TITLE_KEY = '"customTitle":"'
const AI_TITLE_KEY = '"aiTitle":"'

/** How the CLI writes a title record's line up to its value's opening quote. */
const CUSTOM_TITLE_LINE = '{"type":"custom-title","customTitle":"'
const AI_TITLE_LINE = '{"type":"ai-title","aiTitle":"'

/**
 * The title of the record whose key's opening quote is at `keyAt`: read
 * from the text when the line is laid out as the CLI writes it (it opens
 * with its type and this key, and the value closes within the line), else
 * from the parsed line. Undefined: no such title there.
 */
const titleAt = (
  text: string,
  keyAt: number,
  key: string,
  layout: string,
  type: string,
  field: string,
  cutStart: boolean,
  cutEnd: boolean,
): string | undefined => {
  const start = keyAt + key.length - layout.length
  if (
    start >= 0 &&
    (start > 0 || !cutStart) &&
    (start === 0 || text.charCodeAt(start - 1) === 10) /* \n */ &&
    text.startsWith(layout, start)
  ) {
    const quote = start + layout.length - 1
    const close = stringEndAt(text, quote)
    const nl = close < 0 ? -1 : text.indexOf("\n", close)
    if (close >= 0 && (nl >= 0 || !cutEnd)) return notBlank(valueAt(text, quote, close + 1))
  }
  const record = lineAt(text, keyAt, cutStart, cutEnd)
  return record?.type === type ? notBlank(record[field]) : undefined
}

/** Which title key ends at a `Title":"` (`at`): none, a custom title's or an AI title's. */
const NOT_A_TITLE = 0
const CUSTOM = 1
const AI = 2
const titleKindAt = (text: string, at: number): number =>
  text.startsWith(CUSTOM_TITLE_KEY, at - 7)
    ? CUSTOM
    : text.startsWith(AI_TITLE_KEY, at - 3)
      ? AI
      : NOT_A_TITLE

/** No title found: one shared answer, never changed (most ends hold no title). */
const NO_TITLES: Titles = Object.freeze({})

/** The last custom-title and ai-title records in an end of a transcript (text). */
const titlesOf = (text: string, cutStart: boolean, cutEnd: boolean): Titles => {
  // Every title key, oldest first; then the newest of each kind that gives a title.
  let keys: number[] | undefined
  for (let at = indexOfKey(text, TITLE_KEY_END); at >= 0; at = indexOfKey(text, TITLE_KEY_END, at + 1))
    if (titleKindAt(text, at) !== NOT_A_TITLE) {
      keys ??= []
      keys.push(at)
    }
  if (keys === undefined) return NO_TITLES
  const found: Mutable<Titles> = {}
  for (let i = keys.length - 1; i >= 0 && (found.custom === undefined || found.ai === undefined); i--) {
    const at = keys[i] as number
    if (titleKindAt(text, at) === CUSTOM) {
      if (found.custom === undefined)
        found.custom = titleAt(
          text,
          at - 7,
          CUSTOM_TITLE_KEY,
          CUSTOM_TITLE_LINE,
          "custom-title",
          "customTitle",
          cutStart,
          cutEnd,
        )
    } else if (found.ai === undefined)
      found.ai = titleAt(text, at - 3, AI_TITLE_KEY, AI_TITLE_LINE, "ai-title", "aiTitle", cutStart, cutEnd)
  }
  return found
}

/** The last custom-title and ai-title records in an end of a transcript. */
export const titlesIn = (bytes: Uint8Array, cutStart: boolean, cutEnd: boolean): Titles =>
  titlesOf(decoder.decode(bytes), cutStart, cutEnd)

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

const USER_TYPE = textKey('"type":"user"', "y")
const SIDECHAIN_TRUE = textKey('"isSidechain":true', "S")

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
const PROMPT_RECORD = '"type":"user","message":{"role":"user","content":'
const ONE_TEXT_BLOCK = '[{"type":"text","text":"'
const ONE_TEXT_BLOCK_END = '"}]}'
/** Keys that make a user record more than a typed prompt: with any of them, the record is parsed. */
const NOT_PLAIN = [
  textKey('"isMeta":', "M"),
  textKey('"isCompactSummary":', "C"),
  textKey('"origin":', "g"),
  SIDECHAIN_TRUE,
]

/** None of the NOT_PLAIN keys in `text[from, to)`. */
const plainIn = (text: string, from: number, to: number): boolean => {
  for (const key of NOT_PLAIN) if (indexOfKey(text, key, from, to) >= 0) return false
  return true
}

/** plainPromptLine on text. */
const plainPromptOfLine = (
  text: string,
  start: number,
  end: number,
): { readonly prompt: string; readonly cwd?: string } | undefined => {
  const at = text.indexOf(PROMPT_RECORD, start)
  if (at < 0 || at + PROMPT_RECORD.length > end) return undefined
  let open = at + PROMPT_RECORD.length
  let closing = 1 // the string ends the message: `"}`
  if (text.charCodeAt(open) !== 34 /* " */) {
    if (!text.startsWith(ONE_TEXT_BLOCK, open)) return undefined
    open += ONE_TEXT_BLOCK.length - 1
    closing = ONE_TEXT_BLOCK_END.length - 1
  }
  const close = stringEndAt(text, open)
  if (close < 0 || close + closing >= end) return undefined
  if (
    closing === 1 ? text.charCodeAt(close + 1) !== 125 /* } */ : !text.startsWith(ONE_TEXT_BLOCK_END, close)
  )
    return undefined
  // No key lies inside the prompt's string: the rest of the line is searched around it.
  if (!plainIn(text, start, open) || !plainIn(text, close, end)) return undefined
  const prompt = valueAt(text, open, close + 1)
  if (prompt === undefined || prompt.indexOf("<") >= 0 || prompt.trim() === "") return undefined
  const cwd = firstValue(text, CWD_KEY, close, end)
  return cwd === undefined ? { prompt } : { prompt, cwd }
}

/**
 * The prompt and cwd of the line `bytes[start, end)` without parsing it,
 * when it is the usual typed prompt: the CLI's layout, a message of one text
 * (a string or a single text block) without markup, none of the keys that
 * make a record more than that. Undefined when unsure: parse it.
 */
export const plainPromptLine = (
  bytes: Uint8Array,
  start: number,
  end: number,
): { readonly prompt: string; readonly cwd?: string } | undefined => {
  const text = decoder.decode(bytes.subarray(start, end))
  return plainPromptOfLine(text, 0, text.length)
}

/** The head's facts (text); `cutEnd`: the file goes on past it. */
const headFactsOf = (text: string, cutEnd: boolean): HeadFacts => {
  let prompt: string | undefined
  let cwd: string | undefined
  let sidechain = false
  let nl = -1
  for (
    let at = indexOfKey(text, USER_TYPE);
    at >= 0 && prompt === undefined;
    at = nl < 0 || prompt !== undefined ? -1 : indexOfKey(text, USER_TYPE, nl)
  ) {
    const start = text.lastIndexOf("\n", at) + 1
    nl = text.indexOf("\n", at)
    const end = nl < 0 ? text.length : nl
    if (nl < 0 && cutEnd) {
      // The prompt runs past the head: take what the head holds of it (never
      // parsed: a cut line only costs the parser an exception).
      if (indexOfKey(text, SIDECHAIN_TRUE, start, end) >= 0) sidechain = true
      const found = firstValue(text, TEXT_KEY, start, end) ?? firstValue(text, CONTENT_KEY, start, end)
      if (found !== undefined) prompt = firstLineOf(found)
      continue
    }
    const plain = plainPromptOfLine(text, start, end)
    if (plain !== undefined) {
      cwd ??= plain.cwd
      prompt = firstLineOf(plain.prompt)
      continue
    }
    let record: StoredRecord
    try {
      record = JSON.parse(text.slice(start, end)) as StoredRecord
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
  const created = firstValue(text, TIMESTAMP_KEY)
  if (created !== undefined) facts.created = created
  return facts
}

/** The head's facts; `cutEnd`: the file goes on past these bytes. */
export const headFacts = (bytes: Uint8Array, cutEnd: boolean): HeadFacts =>
  headFactsOf(decoder.decode(bytes), cutEnd)

// ---------------------------------------------------------------------------
// The tail

/** What the last bytes of a transcript say: its latest titles, branch and (when asked) cwd. */
export interface TailFacts extends Titles {
  readonly branch?: string
  readonly cwd?: string
  /** The tail starts at the file's start: it holds the whole file. */
  readonly whole: boolean
}

/** The tail's facts (text). */
const tailFactsOf = (text: string, cutStart: boolean, needCwd: boolean): TailFacts => {
  // Fields set one by one: an object spread is a slow generic copy in a cold process.
  const titles = titlesOf(text, cutStart, false)
  const facts: Mutable<TailFacts> = { whole: !cutStart }
  if (titles.custom !== undefined) facts.custom = titles.custom
  if (titles.ai !== undefined) facts.ai = titles.ai
  const branch = lastValue(text, GIT_BRANCH_KEY)
  if (branch !== undefined) facts.branch = branch
  if (needCwd) {
    const cwd = firstValue(text, CWD_KEY)
    if (cwd !== undefined) facts.cwd = cwd
  }
  return facts
}

/** The tail's facts; `cutStart`: the file begins before these bytes; the first cwd only when `needCwd`. */
export const tailFacts = (bytes: Uint8Array, cutStart: boolean, needCwd: boolean): TailFacts =>
  tailFactsOf(decoder.decode(bytes), cutStart, needCwd)

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
  const headText = decoder.decode(head)
  const h: Mutable<HeadFacts> = headFactsOf(headText, headCut)
  if (h.sidechain) return { head: h, headTitles: NO_TITLES, tail: { whole: !(size > tail.length) } }
  const t = tailFactsOf(
    decoder.decode(tail),
    size > tail.length,
    h.cwd === undefined || h.prompt === undefined,
  )
  if (t.branch === undefined) {
    const branch = lastValue(headText, GIT_BRANCH_KEY)
    if (branch !== undefined) h.branch = branch
  }
  return { head: h, headTitles: needHeadTitles(t) ? titlesOf(headText, false, headCut) : NO_TITLES, tail: t }
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

/**
 * Finding JSON keys and string values in decoded transcript text without
 * parsing it: the list's summaries (history/session-summary.ts) search a file's
 * two ends for a handful of keys and cut out their values, each a string of
 * its own.
 *
 * The searches run forward only, on a piece of the key (its anchor: one to
 * six characters, led by one rare in transcripts, prose included):
 * `String#indexOf` of a pattern under seven characters is V8's linear search,
 * `memchr` of its first character and a native compare of the rest, at memory
 * speed, faster than a `Uint8Array`'s `indexOf` of a byte; from seven
 * characters V8 sets up a Boyer-Moore table per call, and any `lastIndexOf` walks back one character
 * at a time. A longer anchor leaves fewer false hits to the JavaScript loop,
 * which a cold list runs in the interpreter (one `T` anchor stopped at every
 * `userType`). So a last occurrence is the last one of a forward walk. A key
 * found by its opening quote is a key: inside a JSON string every quote is
 * escaped.
 */

/** A key to search for and the piece of it (`char`, at `anchor` in the key) the native search looks for. */
export interface TextKey {
  readonly text: string
  readonly anchor: number
  readonly char: string
}

/** `anchor`: the piece of the key to search for, 1–6 characters (its first occurrence in the key). */
export const textKey = (text: string, anchor: string): TextKey => {
  const at = text.indexOf(anchor)
  if (anchor.length < 1 || anchor.length > 6 || at < 0) throw new Error(`no anchor ${anchor} in ${text}`)
  return { text, anchor: at, char: anchor }
}

/** The first index of `key` in `text[from, to)`, or -1. */
export const indexOfKey = (text: string, key: TextKey, from = 0, to = text.length): number => {
  const last = to - key.text.length + key.anchor
  for (let at = text.indexOf(key.char, from + key.anchor); at >= 0 && at <= last; ) {
    if (text.startsWith(key.text, at - key.anchor)) return at - key.anchor
    at = text.indexOf(key.char, at + 1)
  }
  return -1
}

/** The last index of `key` in `text[from, to)`, or -1 (a forward walk: see the header). */
export const lastIndexOfKey = (text: string, key: TextKey, from = 0, to = text.length): number => {
  let found = -1
  for (let at = indexOfKey(text, key, from, to); at >= 0; at = indexOfKey(text, key, at + 1, to)) found = at
  return found
}

/** The character at `at` follows an odd run of backslashes (it is escaped). */
export const isEscapedAt = (text: string, at: number): boolean => {
  let n = 0
  while (at - 1 - n >= 0 && text.charCodeAt(at - 1 - n) === 92 /* \ */) n++
  return n % 2 === 1
}

/** Where a JSON string whose opening quote is at `quote` ends (its closing quote's index), or -1 when cut off. */
export const stringEndAt = (text: string, quote: number): number => {
  let end = text.indexOf('"', quote + 1)
  while (end >= 0 && isEscapedAt(text, end)) end = text.indexOf('"', end + 1)
  return end
}

/**
 * A string of its own: V8 makes a slice of 13 characters or more a view
 * that keeps the whole decoded end alive (a list would hold every file's
 * ends). Slicing a concatenation flattens it into a copy first.
 */
export const own = (slice: string): string => ` ${slice}`.slice(1)

/** A literal cut at the end of a read: drop a split character and a cut escape (`\`, or `\u` with fewer than four digits). */
const trimCut = (raw: string): string => {
  const text = raw.endsWith("\uFFFD") ? raw.slice(0, -1) : raw
  const unicode = /\\u[0-9a-fA-F]{0,3}$/.exec(text)
  if (unicode !== null && !isEscapedAt(text, unicode.index)) return text.slice(0, unicode.index)
  return isEscapedAt(text, text.length) ? text.slice(0, -1) : text
}

/** The JSON string value whose opening quote is at `quote`, decoded; one cut off at `to` gives what is there. */
export const valueAt = (text: string, quote: number, to = text.length): string | undefined => {
  const close = stringEndAt(text, quote)
  const cut = close < 0 || close >= to
  let raw = text.slice(quote + 1, cut ? to : close)
  if (cut) raw = trimCut(raw)
  // Most values hold no escape: no need for the JSON parser (whose answer is a string of its own).
  if (raw.indexOf("\\") < 0) return own(raw)
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return undefined
  }
}

/** The value of the first `key` (a `"name":"` key) in `text[from, to)`. */
export const firstValue = (text: string, key: TextKey, from = 0, to = text.length) => {
  const at = indexOfKey(text, key, from, to)
  return at < 0 ? undefined : valueAt(text, at + key.text.length - 1, to)
}

/** The value of the last `key` (a `"name":"` key) in `text`. */
export const lastValue = (text: string, key: TextKey) => {
  const at = lastIndexOfKey(text, key)
  return at < 0 ? undefined : valueAt(text, at + key.text.length - 1)
}

/** The whole line around `at`, parsed; undefined when the read cut it or it is not JSON. */
export const lineAt = (
  text: string,
  at: number,
  cutStart: boolean,
  cutEnd: boolean,
): Record<string, unknown> | undefined => {
  const start = text.lastIndexOf("\n", at) + 1
  const nl = text.indexOf("\n", at)
  if ((start === 0 && cutStart) || (nl < 0 && cutEnd)) return undefined
  try {
    return JSON.parse(text.slice(start, nl < 0 ? text.length : nl)) as Record<string, unknown>
  } catch {
    return undefined
  }
}

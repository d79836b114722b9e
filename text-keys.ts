/**
 * Finding JSON keys and string values in decoded transcript text without
 * parsing it: the list's summaries (session-summary.ts) search a file's
 * two ends for a handful of keys.
 *
 * The searches run forward only, on one character of the key (its anchor,
 * chosen rare in transcripts, prose included): `String#indexOf` of one
 * character on a one-byte string runs natively at memory speed (measured on
 * Node 20: ~0.2 µs for 4 KB), about five times faster than a `Uint8Array`'s
 * `indexOf` of a byte, while any `lastIndexOf` walks back one character at a
 * time. So a last occurrence is the last one of a forward walk. A key found
 * by its opening quote is a key: inside a JSON string every quote is escaped.
 */

/** A key to search for and the one character the native search looks for. */
export interface TextKey {
  readonly text: string
  readonly anchor: number
  readonly char: string
}

/** `anchor`: the key's character to search for (its first occurrence in the key). */
export const textKey = (text: string, anchor: string): TextKey => {
  const at = text.indexOf(anchor)
  if (anchor.length !== 1 || at < 0) throw new Error(`no anchor ${anchor} in ${text}`)
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

/**
 * Searching raw transcript bytes for ASCII keys without decoding them: the
 * searches run natively on one byte of the key (its rarest letter), and
 * only a match of that byte is checked in JavaScript. No byte of a UTF-8
 * multi-byte character is ASCII, so an ASCII key never matches inside one.
 */

/** Letters from rarest to commonest in transcript JSON (hex digits last: ids are full of them). */
const RARITY = "QZXJKVWYGBPUMHLSRNOTIqzxjkvwygpmuhlsrnoiABCDEFbcdfae"

/** An ASCII key to search for, with the offset of the byte the native search looks for. */
export interface Needle {
  readonly bytes: Uint8Array
  readonly anchor: number
}

const encoder = new TextEncoder()

export const needle = (text: string): Needle => {
  const bytes = encoder.encode(text)
  let best = RARITY.length
  let anchor = bytes.length - 1
  for (let i = 0; i < bytes.length; i++) {
    const rank = RARITY.indexOf(text[i] as string)
    if (rank >= 0 && rank < best) {
      best = rank
      anchor = i
    }
  }
  return { bytes, anchor }
}

/** `bytes` holds `prefix` at `at`. */
export const startsWith = (bytes: Uint8Array, prefix: Uint8Array, at = 0): boolean => {
  if (at < 0 || bytes.length < at + prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false
  return true
}

/** The first index of `n` in `bytes[from, to)`, or -1. */
export const indexOfBytes = (bytes: Uint8Array, n: Needle, from = 0, to = bytes.length): number => {
  const { bytes: key, anchor } = n
  const byte = key[anchor] as number
  const last = to - key.length + anchor
  let at = bytes.indexOf(byte, from + anchor)
  while (at >= 0 && at <= last) {
    if (startsWith(bytes, key, at - anchor)) return at - anchor
    at = bytes.indexOf(byte, at + 1)
  }
  return -1
}

/** The last index of `n` in `bytes` starting at or before `from`, or -1. */
export const lastIndexOfBytes = (bytes: Uint8Array, n: Needle, from = bytes.length): number => {
  const { bytes: key, anchor } = n
  if (bytes.length < key.length) return -1
  const byte = key[anchor] as number
  let at = bytes.lastIndexOf(byte, Math.min(bytes.length - key.length, from) + anchor)
  while (at >= anchor) {
    if (startsWith(bytes, key, at - anchor)) return at - anchor
    at = at > 0 ? bytes.lastIndexOf(byte, at - 1) : -1
  }
  return -1
}

/** The byte at `at` follows an odd run of backslashes (it is escaped). */
const isEscaped = (bytes: Uint8Array, at: number): boolean => {
  let n = 0
  while (at - 1 - n >= 0 && bytes[at - 1 - n] === 92 /* \ */) n++
  return n % 2 === 1
}

/** Where a JSON string whose opening quote is at `at` ends (the index of its closing quote), or -1 when cut off. */
export const stringEnd = (bytes: Uint8Array, at: number): number => {
  let end = bytes.indexOf(34 /* " */, at + 1)
  while (end >= 0 && isEscaped(bytes, end)) end = bytes.indexOf(34, end + 1)
  return end
}

/**
 * A JSONL line too long to hold whole (a 100 MB tool result), made small
 * while it streams by: every JSON string value longer than `keepBytes` is
 * cut at a character boundary and closed with a note of its full size, so
 * the line stays valid JSON and is parsed like any other. Memory is what the
 * cut line keeps, never the line's size.
 *
 * Rules it keeps: bytes outside strings pass unchanged; a cut never splits an
 * escape (`\n`, `\"`, `\uXXXX`) or a UTF-8 character; the note is ASCII and
 * says how many bytes of the string were shown and how many it had.
 */
import { joinBytes } from "./sdk/bytes.ts"

const QUOTE = 34
const BACKSLASH = 92
const U = 117

/**
 * `1234567` → `1,234,567`. By hand: the first `toLocaleString` call of a
 * process loads ICU's number formats, dearer than the whole cut.
 */
export const grouped = (n: number): string => {
  const digits = String(Math.trunc(n))
  let at = digits.length % 3 || 3
  let out = digits.slice(0, at)
  for (; at < digits.length; at += 3) out += `,${digits.slice(at, at + 3)}`
  return out
}

/** The text closing a cut string: what the item shows of its size. */
export const cutNote = (shown: number, total: number): string =>
  ` [… truncated: ${grouped(shown)} of ${grouped(total)} bytes shown]`

const encoder = new TextEncoder()

export class LongLineCompactor {
  private readonly parts: Uint8Array[] = []
  private kept = 0
  private inString = false
  /** After a backslash: the next byte is escaped. */
  private escaped = false
  /** Hex digits of a `\u` escape still to come. */
  private hexLeft = 0
  /** Bytes of the current string seen so far, and whether its copy stopped. */
  private stringBytes = 0
  private cut = false
  private shown = 0

  constructor(private readonly keepBytes: number) {}

  /** Bytes held so far (what the cut line will weigh). */
  get heldBytes(): number {
    return this.kept
  }

  push(part: Uint8Array): void {
    // Hot over hundreds of MB: the state lives in locals, written back at the end.
    let { inString, escaped, hexLeft, stringBytes, cut } = this
    const keepBytes = this.keepBytes
    const n = part.length
    /** Where the bytes not yet kept start; -1 while a string is being cut. */
    let copyFrom = cut ? -1 : 0
    // The next quote and backslash at or after `i`, found once each and again only when passed.
    let nextQuote = -1
    let nextSlash = -1
    const next = (byte: number, known: number, i: number) => {
      if (known >= i || known === n) return known
      const at = part.indexOf(byte, i)
      return at < 0 ? n : at
    }
    let i = 0
    while (i < n) {
      if (!inString) {
        nextQuote = next(QUOTE, nextQuote, i)
        if (nextQuote === n) break
        inString = true
        stringBytes = 0
        cut = false
        i = nextQuote + 1
        continue
      }
      if (cut && !escaped) {
        // Nothing more of this string is kept: straight to its closing quote (one not escaped).
        let from = i
        let close = -1
        for (;;) {
          const q = part.indexOf(QUOTE, from)
          const end = q < 0 ? n : q
          let k = end
          while (k > i && part[k - 1] === BACKSLASH) k--
          const odd = (end - k) % 2 === 1
          if (q < 0) {
            escaped = odd
            break
          }
          if (!odd) {
            close = q
            break
          }
          from = q + 1
        }
        hexLeft = 0
        const stop = close < 0 ? n : close
        stringBytes += stop - i
        i = stop
        if (close < 0) break
        inString = false
        this.keep(encoder.encode(cutNote(this.shown, stringBytes)))
        copyFrom = i
        cut = false
        i++
        continue
      }
      if (hexLeft > 0 || escaped) {
        if (hexLeft > 0) hexLeft--
        else {
          escaped = false
          if (part[i] === U) hexLeft = 4
        }
        stringBytes++
        i++
        continue
      }
      // A run of plain bytes up to the next quote or backslash.
      nextQuote = next(QUOTE, nextQuote, i)
      nextSlash = next(BACKSLASH, nextSlash, i)
      const stop = Math.min(nextQuote, nextSlash)
      if (!cut && stringBytes + (stop - i) > keepBytes) {
        // The cut falls in this run: at the first character start past the limit.
        let at = i + Math.max(0, keepBytes - stringBytes)
        while (at < stop && ((part[at] as number) & 0xc0) === 0x80) at++
        if (at < stop) {
          this.keep(part.subarray(copyFrom, at))
          copyFrom = -1
          cut = true
          this.shown = stringBytes + (at - i)
        }
      }
      stringBytes += stop - i
      i = stop
      if (i === n) break
      if (part[i] === BACKSLASH) {
        if (!cut && stringBytes >= keepBytes) {
          this.keep(part.subarray(copyFrom, i))
          copyFrom = -1
          cut = true
          this.shown = stringBytes
        }
        escaped = true
        stringBytes++
        i++
        continue
      }
      inString = false
      if (cut) {
        this.keep(encoder.encode(cutNote(this.shown, stringBytes)))
        copyFrom = i
        cut = false
      }
      i++
    }
    if (copyFrom >= 0) this.keep(part.subarray(copyFrom))
    Object.assign(this, { inString, escaped, hexLeft, stringBytes, cut })
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    this.parts.push(new Uint8Array(bytes))
    this.kept += bytes.length
  }

  /** The cut line as one array. */
  finish(): Uint8Array {
    return joinBytes(this.parts, this.kept)
  }
}

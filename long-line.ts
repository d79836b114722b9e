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

const QUOTE = 34
const BACKSLASH = 92
const U = 117

/** The text closing a cut string: what the item shows of its size. */
export const cutNote = (shown: number, total: number): string =>
  ` [… truncated: ${shown.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} bytes shown]`

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
    let copyFrom = 0
    for (let i = 0; i < part.length; i++) {
      const b = part[i] as number
      if (!this.inString) {
        if (b === QUOTE) {
          this.inString = true
          this.stringBytes = 0
          this.cut = false
        }
        continue
      }
      if (this.hexLeft > 0) this.hexLeft--
      else if (this.escaped) {
        this.escaped = false
        if (b === U) this.hexLeft = 4
      } else if (b === BACKSLASH) {
        if (this.startCut(part, copyFrom, i)) copyFrom = part.length
        this.escaped = true
      } else if (b === QUOTE) {
        this.inString = false
        if (this.cut) {
          this.keep(encoder.encode(cutNote(this.shown, this.stringBytes)))
          copyFrom = i
          this.cut = false
        }
        continue
      } else if ((b & 0xc0) !== 0x80 && this.startCut(part, copyFrom, i)) copyFrom = part.length
      this.stringBytes++
    }
    // A string still being cut copies nothing more of this part.
    if (!this.cut) this.keep(part.subarray(copyFrom))
  }

  /**
   * At a character's first byte: once the string is past `keepBytes`, keep
   * the bytes before it and copy no more of this string. True when it cut.
   */
  private startCut(part: Uint8Array, copyFrom: number, at: number): boolean {
    if (this.cut || this.stringBytes < this.keepBytes) return false
    this.keep(part.subarray(copyFrom, at))
    this.cut = true
    this.shown = this.stringBytes
    return true
  }

  private keep(bytes: Uint8Array): void {
    if (bytes.length === 0) return
    this.parts.push(bytes.slice())
    this.kept += bytes.length
  }

  /** The cut line as one array. */
  finish(): Uint8Array {
    const out = new Uint8Array(this.kept)
    let at = 0
    for (const p of this.parts) {
      out.set(p, at)
      at += p.length
    }
    return out
  }
}

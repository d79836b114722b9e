/**
 * An Edit's diff at its start: the SDK's `unifiedDiff` (the `diff`
 * library), with a fast path for the commonest edit, a replacement whose
 * old and new lines have no line in common (one line for another, above
 * all).
 *
 * Why: the library's call runs once in hundreds of frames, so in a live
 * stream its code is cold every time, for a diff whose answer is fixed:
 * with no line shared, the only shortest edit removes every old line and adds every new
 * one. The fast path writes exactly what the library writes then (held by
 * edit-diff.property.test.ts against the library); anything else, a
 * carriage return anywhere or a path the library would quote, goes to the library.
 */
import { unifiedDiff } from "./sdk/diff.ts"

const NO_NEWLINE = "\\ No newline at end of file"

/** A path the library writes as it is (printable ASCII, no quote, no backslash); others it quotes C-style. */
const PLAIN_PATH = /^[\x20-\x21\x23-\x5b\x5d-\x7e]*$/

/** The lines of `text` as the library counts them: a final line break ends the last line, it opens none. */
const linesOf = (text: string): string[] => {
  if (text === "") return []
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

const side = (out: string[], mark: string, lines: ReadonlyArray<string>, text: string): void => {
  for (const line of lines) out.push(mark + line)
  if (lines.length > 0 && !text.endsWith("\n")) out.push(NO_NEWLINE)
}

/**
 * The library's diff of `before` → `after` when the two share no line (and
 * hold no carriage return, and the path needs no quoting), else undefined.
 */
export const disjointEditDiff = (path: string, before: string, after: string): string | undefined => {
  if (!PLAIN_PATH.test(path) || before.includes("\r") || after.includes("\r")) return undefined
  const old = linesOf(before)
  const next = linesOf(after)
  if (old.length > 0 && next.length > 0) {
    // A single line each (the usual edit) needs no set.
    if (old.length === 1 && next.length === 1) {
      if (old[0] === next[0]) return undefined
    } else {
      const seen = new Set(old)
      for (const line of next) if (seen.has(line)) return undefined
    }
  }
  const name = path.replace(/^\/+/, "")
  const out = [`--- a/${name}`, `+++ b/${name}`]
  if (old.length > 0 || next.length > 0) {
    out.push(`@@ -${old.length === 0 ? 0 : 1},${old.length} +${next.length === 0 ? 0 : 1},${next.length} @@`)
    side(out, "-", old, before)
    side(out, "+", next, after)
  }
  return `${out.join("\n")}\n`
}

/** The unified diff of an edit's fragments, as `unifiedDiff` gives it. */
export const editDiff = (path: string, before: string, after: string): string =>
  disjointEditDiff(path, before, after) ?? unifiedDiff(path, before, after)

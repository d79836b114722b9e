/**
 * Small text helpers of the terminal front end: numbers, durations and times
 * as the chat prints them, ANSI stripping, and word wrap by display width.
 * Pure: no I/O.
 */
import stringWidth from "string-width"

/** 1234 → "1.2k", 1000000 → "1M". */
export const compactNumber = (n: number): string => {
  if (n < 1000) return String(Math.round(n))
  if (n < 1_000_000) return `${trimZero((n / 1000).toFixed(n < 10_000 ? 1 : 0))}k`
  return `${trimZero((n / 1_000_000).toFixed(1))}M`
}
const trimZero = (s: string) => s.replace(/\.0$/, "")

export const duration = (ms: number): string =>
  ms < 1000
    ? `${Math.round(ms)}ms`
    : ms < 60_000
      ? `${(ms / 1000).toFixed(1)}s`
      : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`

/** An ISO time as local HH:MM when it is within a day, else a short date and time. */
export const resetTime = (iso: string, now: Date): string => {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const hhmm = `${String(at.getHours()).padStart(2, "0")}:${String(at.getMinutes()).padStart(2, "0")}`
  if (Math.abs(at.getTime() - now.getTime()) < 24 * 3600_000) return hhmm
  return `${at.toLocaleDateString("en-GB", { day: "numeric", month: "short" })} ${hhmm}`
}

/** Remove ANSI escape sequences (tests, captured screens). */
export const stripAnsi = (text: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
  text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")

export const firstLine = (text: string) => text.split("\n", 1)[0] ?? ""

export const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** Word-wrap one plain line to `width` columns (a word longer than the width is cut). */
export const wrapLine = (line: string, width: number): string[] => {
  if (width < 8 || stringWidth(line) <= width) return [line]
  const rows: string[] = []
  let row = ""
  for (const word of line.split(/(\s+)/)) {
    if (word === "") continue
    if (stringWidth(row + word) <= width) {
      row += word
      continue
    }
    if (row.trim() !== "") rows.push(row.replace(/\s+$/, ""))
    row = /^\s+$/.test(word) ? "" : word
    while (stringWidth(row) > width) {
      let cut = ""
      for (const ch of row) {
        if (stringWidth(cut + ch) > width) break
        cut += ch
      }
      rows.push(cut)
      row = row.slice(cut.length)
    }
  }
  if (row.trim() !== "" || rows.length === 0) rows.push(row)
  return rows
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escapes are what is matched
const ESCAPE = /\u001b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\))/y
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences are what is matched
const SGR = /^\u001b\[[0-9;]*m$/

/** A line as escapes (zero width) and characters (each with its width). */
const tokens = (line: string): Array<{ text: string; width: number; escape: boolean }> => {
  const out: Array<{ text: string; width: number; escape: boolean }> = []
  let at = 0
  while (at < line.length) {
    ESCAPE.lastIndex = at
    const sequence = ESCAPE.exec(line)
    if (sequence) {
      out.push({ text: sequence[0], width: 0, escape: true })
      at += sequence[0].length
      continue
    }
    const ch = String.fromCodePoint(line.codePointAt(at)!)
    out.push({ text: ch, width: stringWidth(ch), escape: false })
    at += ch.length
  }
  return out
}

/** Where a wrapped line's text starts: its indent, a tree gutter, a bullet or number, or a ⎿ ↳ → mark. */
const HANG = /^[ │├└─]*(?:(?:[-*•]|\d+[.)]|⎿|↳|→|──|[✓✗⊘⏺☐☑◐⏸✻?!i]) +)?/

/**
 * Word-wrap one line (ANSI styles allowed) to `width` columns. Rows after
 * the first hang under the line's own text start (its indent, gutter and
 * bullet), keep the gutter's bars and the styles open at the break; only a
 * word wider than a row is cut.
 */
export const wrapStyled = (line: string, width: number): string[] => {
  if (width < 10 || stringWidth(line) <= width) return [line]
  const all = tokens(line)
  const hang = HANG.exec(stripAnsi(line))?.[0] ?? ""
  const plain = stripAnsi(line)
  const longest = Math.max(...plain.split(" ").map((w) => stringWidth(w)))
  let hangWidth = stringWidth(hang)
  // No hanging indent when it is most of the row, or would cut a word that fits the screen.
  if (hangWidth > width / 2 || (longest > width - hangWidth && longest <= width)) hangWidth = 0
  // The continuation's lead: the gutter's bars as drawn, everything else blank.
  let lead = ""
  for (let i = 0, seen = 0; i < all.length && seen < hangWidth; i++) {
    const t = all[i]!
    if (t.escape) lead += t.text
    else {
      lead += t.text === "│" ? t.text : " ".repeat(t.width)
      seen += t.width
    }
  }
  const close = all.some((t) => t.escape) ? "\u001b[0m" : ""
  const rows: string[] = []
  const styles: string[] = []
  let row = ""
  let rowWidth = 0
  /** The row up to its last space, where the text after that space starts, the styles seen by then. */
  let cut: { row: string; next: number; styles: number } | undefined
  const restart = () => {
    row = `${lead}${styles.join("")}`
    rowWidth = hangWidth
    cut = undefined
  }
  for (let i = 0; i < all.length; i++) {
    const t = all[i]!
    if (t.escape) {
      if (SGR.test(t.text)) styles.push(t.text)
      row += t.text
      continue
    }
    if (t.text === " " && rowWidth > hangWidth) cut = { row, next: i + 1, styles: styles.length }
    if (rowWidth + t.width <= width || rowWidth === hangWidth) {
      row += t.text
      rowWidth += t.width
      continue
    }
    if (t.text === " ") {
      // The break falls on a space: it goes.
      rows.push(`${row}${close}`)
      restart()
      continue
    }
    if (cut) {
      // Back to the last space: the word that did not fit starts the next row.
      rows.push(`${cut.row}${close}`)
      styles.length = cut.styles
      i = cut.next - 1
      restart()
      continue
    }
    // One word wider than a row: cut where the row is full.
    rows.push(`${row}${close}`)
    restart()
    row += t.text
    rowWidth += t.width
  }
  rows.push(row)
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a row's trailing spaces may sit before its closing styles
  return rows.map((r) => r.replace(/ +((?:\u001b\[[0-9;]*m)*)$/, "$1"))
}

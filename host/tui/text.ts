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

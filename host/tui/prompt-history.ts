/**
 * The prompt history kept across restarts: one JSON string per line, newest
 * last, in the front end's data folder. A file that cannot be read starts an
 * empty history; a failed write is not worth interrupting a chat for.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname } from "node:path"

const KEEP = 500

/** Oldest first. */
export const loadHistory = (file: string): string[] => {
  let text: string
  try {
    text = readFileSync(file, "utf8")
  } catch {
    return []
  }
  const entries: string[] = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      const value: unknown = JSON.parse(line)
      if (typeof value === "string" && value !== "") entries.push(value)
    } catch {
      // A damaged line costs that one entry.
    }
  }
  const kept = entries.slice(-KEEP)
  if (kept.length < entries.length) {
    try {
      writeFileSync(file, kept.map((e) => `${JSON.stringify(e)}\n`).join(""))
    } catch {}
  }
  return kept
}

export const appendHistory = (file: string, entry: string): void => {
  if (entry.trim() === "") return
  try {
    mkdirSync(dirname(file), { recursive: true })
    appendFileSync(file, `${JSON.stringify(entry)}\n`)
  } catch {}
}

/** Unified diffs for file edits, from the `diff` library. */
import { createTwoFilesPatch, structuredPatch } from "diff"

/**
 * A unified diff of `before` → `after` for `path`, without the `Index:` and
 * `===` header lines: the shape `git diff` and the host's diff view read.
 */
export const unifiedDiff = (path: string, before: string, after: string, context = 3): string =>
  createTwoFilesPatch(
    `a/${path.replace(/^\/+/, "")}`,
    `b/${path.replace(/^\/+/, "")}`,
    before,
    after,
    "",
    "",
    {
      context,
    },
  )
    .split("\n")
    .filter((line) => !line.startsWith("====") && !line.startsWith("Index:"))
    .join("\n")

/** One hunk as the CLI's tool results give it (`structuredPatch`, the `diff` library's shape). */
export interface PatchHunk {
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  readonly lines: ReadonlyArray<string>
}

const isHunk = (value: unknown): value is PatchHunk => {
  if (typeof value !== "object" || value === null) return false
  const h = value as Record<string, unknown>
  return (
    [h.oldStart, h.oldLines, h.newStart, h.newLines].every(
      (n) => Number.isInteger(n) && (n as number) >= 0,
    ) &&
    Array.isArray(h.lines) &&
    h.lines.every((l) => typeof l === "string")
  )
}

/**
 * The unified diff of hunks the CLI computed on the real file: its true line
 * numbers, context and indentation (a diff built from an edit's old and new
 * fragments knows neither). Undefined when there are no well-formed hunks.
 */
export const diffOfHunks = (path: string, hunks: unknown): string | undefined => {
  if (!Array.isArray(hunks) || hunks.length === 0 || !hunks.every(isHunk)) return undefined
  const name = path.replace(/^\/+/, "")
  const out = [`--- a/${name}`, `+++ b/${name}`]
  for (const h of hunks) {
    out.push(`@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`, ...h.lines)
  }
  return `${out.join("\n")}\n`
}

/**
 * Where each hunk's change lies in the new file: its first line past the
 * leading context (a hunk starts up to three lines before what changed).
 * Empty when there are no well-formed hunks.
 */
export const changedLines = (hunks: unknown): number[] => {
  if (!Array.isArray(hunks) || !hunks.every(isHunk)) return []
  return hunks.map((h) => {
    const context = h.lines.findIndex((line) => !line.startsWith(" "))
    return h.newStart + Math.max(context, 0)
  })
}

/** Lines added and removed, for a summary line. */
export const diffStats = (before: string, after: string): { added: number; removed: number } => {
  let added = 0
  let removed = 0
  for (const hunk of structuredPatch("a", "b", before, after).hunks) {
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++
      else if (line.startsWith("-")) removed++
    }
  }
  return { added, removed }
}

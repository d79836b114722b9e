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

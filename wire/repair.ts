/**
 * What a bad frame or line still holds, recovered: the parts of wire.ts's
 * decoder that run only when something is wrong (the good path never calls
 * them, except the cheap depth gate).
 *
 * Rules:
 * - nesting deeper than bounds.ts `MAX_DEPTH` is dropped where it enters:
 *   the field (or array entry) that would go deeper is removed, the rest of
 *   the frame kept. A line with fewer `{`/`[` than the bound cannot nest
 *   that deep and is not walked;
 * - a frame its schema rejects loses the smallest parts that make it fit: a
 *   mistyped field is removed; a missing required field removes the object
 *   holding it (an array entry, or an optional field), up to the frame
 *   itself, which then fails whole. A union takes the issues of the option
 *   the value came closest to (the deepest paths);
 * - two or more JSON values glued on one line are split at their top-level
 *   boundaries (strings and escapes respected); nothing here parses them.
 */
import type { z } from "zod"
import { MAX_DEPTH } from "../bounds.ts"

type Path = ReadonlyArray<PropertyKey>

const pathText = (path: Path): string => (path.length === 0 ? "(frame)" : path.map(String).join("."))

/** Whether a JSON text of `line` could nest deeper than `MAX_DEPTH` (it has that many openers). */
export const mayNestTooDeep = (line: string): boolean => {
  // Every opener has its closer: a shorter line cannot hold that many.
  if (line.length < 2 * MAX_DEPTH) return false
  let openers = 0
  for (let at = line.indexOf("{"); at !== -1; at = line.indexOf("{", at + 1))
    if (++openers >= MAX_DEPTH) return true
  for (let at = line.indexOf("["); at !== -1; at = line.indexOf("[", at + 1))
    if (++openers >= MAX_DEPTH) return true
  return false
}

/**
 * Removes every value nested deeper than `MAX_DEPTH` below `root` (an
 * object or array at depth 1); returns the paths removed. The walk recurses,
 * but never past `MAX_DEPTH` frames however deep the value is, and keeps one
 * path it pushes and pops (it runs on every long line: no copy per node).
 */
export const dropTooDeep = (root: object): string[] => {
  const dropped: string[] = []
  const path: PropertyKey[] = []
  const walk = (value: object, depth: number): void => {
    if (Array.isArray(value)) {
      let removed = false
      for (let i = 0; i < value.length; i++) {
        const child: unknown = value[i]
        if (typeof child !== "object" || child === null) continue
        path.push(i)
        if (depth >= MAX_DEPTH) {
          value[i] = undefined
          removed = true
          dropped.push(pathText(path))
        } else walk(child, depth + 1)
        path.pop()
      }
      if (removed) {
        const kept = value.filter((entry) => entry !== undefined)
        value.length = 0
        value.push(...kept)
      }
      return
    }
    const record = value as Record<string, unknown>
    for (const key in record) {
      const child = record[key]
      if (typeof child !== "object" || child === null) continue
      path.push(key)
      if (depth >= MAX_DEPTH) {
        delete record[key]
        dropped.push(pathText(path))
      } else walk(child, depth + 1)
      path.pop()
    }
  }
  walk(root, 1)
  return dropped
}

/** A Zod issue's own path and, for a union, the issues of the option the value came closest to. */
const leafIssues = (issue: z.core.$ZodIssue, base: Path): Array<{ path: Path; message: string }> => {
  const path = [...base, ...issue.path]
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    const depthOf = (issues: ReadonlyArray<z.core.$ZodIssue>) =>
      Math.max(0, ...issues.map((i) => i.path.length))
    const closest = issue.errors.reduce((best, option) => (depthOf(option) > depthOf(best) ? option : best))
    if (depthOf(closest) > 0) return closest.flatMap((inner) => leafIssues(inner, path))
  }
  return [{ path, message: issue.message }]
}

const containerAt = (root: unknown, path: Path): unknown => {
  let at = root
  for (const key of path) {
    if (typeof at !== "object" || at === null) return undefined
    at = (at as Record<PropertyKey, unknown>)[key]
  }
  return at
}

/**
 * Removes the value at `path`, or, when nothing is there (a required field
 * missing), the object holding it, and so up. Array entries are marked
 * (`undefined`) in `arrays` and compacted by the caller. Returns the path
 * removed, or undefined when only the frame itself is left to remove.
 */
const removeAt = (root: object, path: Path, arrays: Set<unknown[]>): Path | undefined => {
  for (let end = path.length; end > 0; end--) {
    const parent = containerAt(root, path.slice(0, end - 1))
    const key = path[end - 1] as PropertyKey
    if (typeof parent !== "object" || parent === null) continue
    const holder = parent as Record<PropertyKey, unknown>
    if (holder[key] === undefined) continue
    if (Array.isArray(parent)) {
      parent[key as number] = undefined
      arrays.add(parent)
    } else delete holder[key]
    return path.slice(0, end)
  }
  return undefined
}

const ROUNDS = 8

export type Repair =
  | { readonly ok: true; readonly dropped: string[] }
  | { readonly ok: false; readonly issues: string }

/**
 * Makes `value` fit `validator` by removing what does not (rules above), in
 * place. `ok` with the paths removed, or the issues that could not be
 * repaired (a required field of the frame itself).
 */
export const repairToFit = (validator: z.ZodType, value: object): Repair => {
  const dropped: string[] = []
  // A frame that fails in the end is told by what was wrong with it, not by what repair removed on the way.
  let first: string | undefined
  for (let round = 0; round < ROUNDS; round++) {
    const parsed = validator.safeParse(value)
    if (parsed.success) return { ok: true, dropped }
    const arrays = new Set<unknown[]>()
    const leaves = parsed.error.issues.flatMap((issue) => leafIssues(issue, []))
    first ??= leaves
      .slice(0, 3)
      .map((leaf) => `${pathText(leaf.path)}: ${leaf.message}`)
      .join("; ")
    const failed: string[] = []
    for (const leaf of leaves) {
      const removed = removeAt(value, leaf.path, arrays)
      if (removed === undefined) failed.push(`${pathText(leaf.path)}: ${leaf.message}`)
      else dropped.push(`${pathText(removed)} (${leaf.message})`)
    }
    for (const array of arrays) {
      const kept = array.filter((entry) => entry !== undefined)
      array.length = 0
      array.push(...kept)
    }
    if (failed.length > 0) return { ok: false, issues: first }
  }
  return { ok: false, issues: first ?? "could not be repaired" }
}

/**
 * The top-level JSON values glued on one line (`{…}{…}`, `{…} {…}`), as
 * texts; undefined when the line is not such a run of objects or arrays.
 */
export const splitGlued = (line: string): string[] | undefined => {
  const pieces: string[] = []
  let depth = 0
  let start = -1
  let inString = false
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
      continue
    }
    if (c === 0x22) {
      if (depth === 0) return undefined
      inString = true
    } else if (c === 0x7b || c === 0x5b) {
      if (depth === 0) start = i
      depth++
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth < 0) return undefined
      if (depth === 0) pieces.push(line.slice(start, i + 1))
    } else if (depth === 0 && c !== 0x20 && c !== 0x09 && c !== 0x0d) return undefined
  }
  return depth === 0 && pieces.length > 1 ? pieces : undefined
}

/**
 * Diffs as the chat shows them. A file's true patch (the CLI's
 * `structuredPatch`) gets the file's own line numbers: the old number on a
 * removed or unchanged line, the new one on an added line. A fragment diff
 * (the edit as the model asked for it) has no numbers worth showing. Past
 * the cut-off both sides stay in view: removed and added lines share what
 * is shown, each run cut short says how many of its lines are hidden, and
 * /expand has all of it. End-of-file markers (`\ No newline…`) are left out:
 * an edit's fragments say nothing about the file's end.
 */
import type { PatchHunk } from "../../../sdk/diff.ts"
import { plural } from "../text.ts"
import type { RenderContext } from "./context.ts"

type Kind = "del" | "add" | "ctx" | "gap"

interface Row {
  readonly kind: Kind
  readonly text: string
  readonly number?: number
}

/** The rows of a fragment diff: its +/- and context lines, no headers. */
export const fragmentRows = (diff: string): Row[] =>
  diff
    .replace(/\n$/, "")
    .split("\n")
    .filter(
      (l) =>
        !l.startsWith("@@") &&
        !l.startsWith("---") &&
        !l.startsWith("+++") &&
        !l.startsWith("Index:") &&
        !/^=+$/.test(l) &&
        !l.startsWith("\\"),
    )
    .map((l) => ({ kind: l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx", text: l.slice(1) }))

/** The rows of a true patch, each with its line number; a gap between hunks. */
export const patchRows = (hunks: ReadonlyArray<PatchHunk>): Row[] => {
  const rows: Row[] = []
  for (const [i, h] of hunks.entries()) {
    if (i > 0) rows.push({ kind: "gap", text: "" })
    let before = h.oldStart
    let after = h.newStart
    for (const line of h.lines) {
      if (line.startsWith("\\")) continue
      if (line.startsWith("-")) rows.push({ kind: "del", text: line.slice(1), number: before++ })
      else if (line.startsWith("+")) rows.push({ kind: "add", text: line.slice(1), number: after++ })
      else {
        rows.push({ kind: "ctx", text: line.slice(1), number: before++ })
        after++
      }
    }
  }
  return rows
}

const SIGN: Readonly<Record<Kind, string>> = { del: "-", add: "+", ctx: " ", gap: "" }

const paintRow = (ctx: RenderContext, row: Row, numberWidth: number): string => {
  if (row.kind === "gap") return ctx.dim(`${" ".repeat(numberWidth)}⋮`)
  const number = numberWidth > 0 ? `${String(row.number ?? "").padStart(numberWidth)} ` : ""
  const text = `${SIGN[row.kind]}${row.text}`
  const body =
    row.kind === "add" ? ctx.paint("green", text) : row.kind === "del" ? ctx.paint("red", text) : text
  return `${ctx.dim(number)}${body}`.trimEnd()
}

/** How many of each kind fit in `budget`: context a fifth, the rest shared by removed and added lines. */
const shares = (rows: ReadonlyArray<Row>, budget: number): Readonly<Record<Kind, number>> => {
  const count = (kind: Kind) => rows.filter((r) => r.kind === kind).length
  const [dels, adds] = [count("del"), count("add")]
  const ctx = Math.min(count("ctx"), Math.floor(budget / 5))
  const room = budget - ctx
  const del = Math.min(dels, Math.max(Math.ceil(room / 2), room - adds))
  return { ctx, del, add: Math.min(adds, room - del), gap: Number.POSITIVE_INFINITY }
}

/** A diff's lines, cut fairly past `ctx.diffLines` with the whole kept for /expand. */
export const diffLines = (ctx: RenderContext, rows: ReadonlyArray<Row>): string[] => {
  const numberWidth = Math.max(0, ...rows.map((r) => String(r.number ?? "").length))
  const all = rows.map((r) => paintRow(ctx, r, numberWidth))
  if (rows.length <= ctx.diffLines) return all
  const left = { ...shares(rows, ctx.diffLines) }
  const out: string[] = []
  let hidden = 0
  let hiddenInAll = 0
  const flushHidden = (kind: Kind) => {
    if (hidden === 0) return
    const what = kind === "del" ? "removed line" : kind === "add" ? "added line" : "unchanged line"
    out.push(ctx.dim(`${" ".repeat(numberWidth)}⋮ ${plural(hidden, `more ${what}`)}`))
    hidden = 0
  }
  rows.forEach((row, i) => {
    if (i > 0 && rows[i - 1]!.kind !== row.kind) flushHidden(rows[i - 1]!.kind)
    if (left[row.kind] > 0) {
      left[row.kind]--
      out.push(all[i]!)
    } else {
      hidden++
      hiddenInAll++
    }
  })
  flushHidden(rows.at(-1)!.kind)
  out.push(ctx.fold(all.join("\n"), "diff line", hiddenInAll))
  return out
}

/**
 * Streamed text and reasoning: only whole lines (or whole markdown blocks)
 * leave here. Text is markdown, laid out a block at a time; reasoning is
 * plain, wrapped a line at a time under its indent and folded past its
 * lines. Any other output first ends the open stream (`flush`).
 */
import { MarkdownStream } from "../markdown.ts"
import { wrapLine } from "../text.ts"
import { behind, depthOf, gutter, type RenderContext } from "./context.ts"

export const reasoningRows = (ctx: RenderContext, line: string, depth: number): string[] =>
  wrapLine(line, ctx.width() - 2 * depth - 2).map(
    (row) => `${gutter(ctx, depth)}  ${ctx.paint(["dim", "italic"], row)}`,
  )

/** Whole reasoning lines: shown up to the fold, kept for /expand after it. */
const reasoningLines = (ctx: RenderContext, lines: ReadonlyArray<string>, depth: number): string => {
  const stream = ctx.stream
  if (!stream) return ""
  let out = ""
  for (const line of lines) {
    stream.lines.push(line)
    if (stream.shown >= ctx.thinkingLines) continue
    stream.shown++
    out += reasoningRows(ctx, line, depth)
      .map((r) => `${r}\n`)
      .join("")
  }
  return out
}

/** End an open stream: the rest of its text, laid out. */
export const flush = (ctx: RenderContext): string => {
  const open = ctx.stream
  if (!open) return ""
  const depth = depthOf(ctx, open.taskId)
  let out = ""
  if (open.kind === "text") out = behind(ctx, depth, open.markdown?.end() ?? "")
  else {
    if (open.partial !== "") out += reasoningLines(ctx, [open.partial], depth)
    const hidden = open.lines.length - open.shown
    if (hidden > 0) out += `${gutter(ctx, depth)}  ${ctx.fold(open.lines.join("\n"), "thinking", hidden)}\n`
  }
  ctx.stream = undefined
  return out
}

/** Whole lines at a depth, each behind the task gutter (the open stream ended first). */
export const block = (ctx: RenderContext, lines: ReadonlyArray<string>, depth = 0): string => {
  const head = flush(ctx)
  if (lines.length === 0) return head
  return head + lines.map((line) => `${gutter(ctx, depth)}${line}\n`).join("")
}

/** A streamed chunk of item `key`: a new key ends the stream before it. */
export const streamChunk = (
  ctx: RenderContext,
  key: string,
  kind: "text" | "reasoning",
  taskId: string | undefined,
  text: string,
): string => {
  let out = ""
  if (ctx.stream?.key !== key) {
    out += flush(ctx)
    if (kind === "reasoning")
      out += `${gutter(ctx, depthOf(ctx, taskId))}${ctx.paint(["dim", "italic"], "✻ Thinking…")}\n`
    ctx.stream = {
      key,
      kind,
      ...(taskId !== undefined && { taskId }),
      ...(kind === "text" && { markdown: new MarkdownStream(ctx.markdown) }),
      partial: "",
      lines: [],
      shown: 0,
    }
  }
  const stream = ctx.stream
  const depth = depthOf(ctx, taskId)
  if (kind === "text") return out + behind(ctx, depth, stream.markdown?.push(text) ?? "")
  const parts = (stream.partial + text).split("\n")
  stream.partial = parts.pop() ?? ""
  return out + reasoningLines(ctx, parts, depth)
}

/**
 * What every part of the renderer shares: how to paint, how wide the screen
 * is, the clock, the cut-off sizes, the folds /expand opens, and the state
 * one renderer keeps between events (tasks, the open stream, the last
 * limits). One record, passed to the parts in render/.
 */
import { styleText } from "node:util"
import type { PlanEntry, TaskInfo, TaskStatus, ToolStatus, UsageLimits } from "../../../sdk/protocol.ts"
import type { MarkdownStream } from "../markdown.ts"
import { plural } from "../text.ts"

export type Format = Parameters<typeof styleText>[0]

export interface RenderOptions {
  /** ANSI colour and styles; off for pipes, NO_COLOR and tests that read plain text. */
  readonly color: boolean
  /** Lines of tool output shown before "… n more lines". Default 8. */
  readonly outputLines?: number
  /** Lines of a written file shown. Default 12. */
  readonly fileLines?: number
  /** Lines of a diff shown. Default 40. */
  readonly diffLines?: number
  /** Lines of thinking shown before the rest is folded. Default 8. */
  readonly thinkingLines?: number
  /** The terminal's width, for wrapping thinking and laying out markdown. Default 100. */
  readonly width?: () => number
  /** Clock for reset times (tests). Default: the real one. */
  readonly now?: () => Date
  /** A one-shot run: no /expand hints (nothing can be typed after it), no skills count. */
  readonly oneShot?: boolean
  /**
   * The session's cost before its first run here (the CLI reports a running total):
   * 0 for a new session; none for a resumed one, whose first run shows no cost.
   */
  readonly costBefore?: number
}

/** The open text or reasoning stream: text is markdown laid out a block at a time; reasoning is plain. */
export interface OpenStream {
  readonly key: string
  readonly kind: "text" | "reasoning"
  readonly taskId?: string
  readonly markdown?: MarkdownStream
  /** The unfinished last line (reasoning). */
  partial: string
  /** Every reasoning line, and how many were shown. */
  readonly lines: string[]
  shown: number
}

export interface RenderContext {
  readonly paint: (format: Format, text: string) => string
  readonly dim: (text: string) => string
  readonly markdown: (source: string) => string
  readonly width: () => number
  readonly now: () => Date
  readonly outputLines: number
  readonly fileLines: number
  readonly diffLines: number
  readonly thinkingLines: number
  /** Keep `text` for /expand and answer the line that says how much is hidden. */
  readonly fold: (text: string, what: "line" | "diff line" | "thinking", hidden: number) => string
  /** Whole texts cut short on screen, for /expand <n>. */
  readonly folded: string[]
  readonly tasks: Map<string, TaskInfo>
  /** Task ids seen in the current run (the tree printed at its end). */
  readonly runTasks: Set<string>
  limits: UsageLimits | undefined
  stream: OpenStream | undefined
  readonly oneShot: boolean
  /** The session's running cost as last reported (undefined: not known yet). */
  cost: number | undefined
  /** The run open now, and the last text it streamed (an API error arrives as text, then as the run's error). */
  run: { id: string; item: string; text: string } | undefined
  /** Delivery notes held until their run ends (they belong with its outcome). */
  readonly held: string[]
}

export const PLAN_GLYPH: Readonly<Record<PlanEntry["status"], string>> = {
  pending: "☐",
  in_progress: "◐",
  completed: "☑",
}

export const TOOL_GLYPH: Readonly<Record<ToolStatus, string>> = {
  Running: "⏺",
  Completed: "✓",
  Failed: "✗",
  Cancelled: "⊘",
}

export const TASK_GLYPH: Readonly<Record<TaskStatus, string>> = {
  Running: "◐",
  Waiting: "⏸",
  Completed: "☑",
  Failed: "✗",
  Cancelled: "⊘",
}

export const STATUS_COLOR: Readonly<Record<TaskStatus | ToolStatus, Format>> = {
  Running: "cyan",
  Waiting: "yellow",
  Completed: "green",
  Failed: "red",
  Cancelled: "yellow",
}

export const makeContext = (
  options: RenderOptions,
  markdown: (width: () => number) => (source: string) => string,
): RenderContext => {
  const paint = (format: Format, text: string) =>
    options.color && text !== "" ? styleText(format, text, { validateStream: false }) : text
  const dim = (text: string) => paint("dim", text)
  const width = options.width ?? (() => 100)
  const folded: string[] = []
  return {
    paint,
    dim,
    markdown: markdown(width),
    width,
    now: options.now ?? (() => new Date()),
    outputLines: options.outputLines ?? 8,
    fileLines: options.fileLines ?? 12,
    diffLines: options.diffLines ?? 40,
    thinkingLines: options.thinkingLines ?? 8,
    folded,
    fold: (text, what, hidden) => {
      folded.push(text)
      const words =
        what === "thinking"
          ? plural(hidden, "more line of thinking", "more lines of thinking")
          : plural(hidden, `more ${what}`)
      return dim(options.oneShot ? `… ${words}` : `… ${words} · /expand ${folded.length}`)
    },
    tasks: new Map(),
    runTasks: new Set(),
    limits: undefined,
    stream: undefined,
    oneShot: options.oneShot === true,
    cost: options.costBefore,
    run: undefined,
    held: [],
  }
}

/** How deep a task sits (0: the main conversation). */
export const depthOf = (ctx: RenderContext, taskId: string | undefined): number => {
  let depth = 0
  const seen = new Set<string>()
  for (let id = taskId; id !== undefined && !seen.has(id); id = ctx.tasks.get(id)?.parent_task_id) {
    seen.add(id)
    depth++
  }
  return depth
}

/** The bars that put a subagent's lines under its task. */
export const gutter = (ctx: RenderContext, depth: number) => (depth === 0 ? "" : ctx.dim("│ ".repeat(depth)))

/** Lines of `text` behind the gutter of `depth`. */
export const behind = (ctx: RenderContext, depth: number, text: string) =>
  text === ""
    ? ""
    : text
        .replace(/\n$/, "")
        .split("\n")
        .map((line) => `${gutter(ctx, depth)}${line}\n`)
        .join("")

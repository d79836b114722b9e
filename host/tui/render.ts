/**
 * Terminal rendering of agent events and stored transcript items: text in,
 * text out, no I/O. One renderer per chat keeps what it needs to lay out the
 * next event (the open text stream, the tasks and their depth, the last rate
 * limits: render/context.ts), so live events and `read_session` items look
 * the same. The parts: render/stream.ts (text and thinking), render/tools.ts
 * (tool calls and diffs), render/tasks.ts (plans and tasks),
 * render/lines.ts (approvals, questions, a run's summary, notices).
 */
import type { AgentEvent, TaskInfo, TranscriptItem, UsageLimits } from "../../sdk/protocol.ts"
import { makeMarkdown, MarkdownStream } from "./markdown.ts"
import { behind, depthOf, makeContext, type RenderContext, type RenderOptions } from "./render/context.ts"
import {
  approvalLines,
  compactedLines,
  noticeLine,
  questionLines,
  skillsLines,
  usageLine,
} from "./render/lines.ts"
import { block, flush, reasoningRows, streamChunk } from "./render/stream.ts"
import { planLines, taskLabel, taskTree, taskUpdate } from "./render/tasks.ts"
import { callFinished, callStarted } from "./render/tools.ts"
import { firstLine, resetTime } from "./text.ts"

export type { RenderOptions } from "./render/context.ts"
export { PLAN_GLYPH } from "./render/context.ts"
export { answersOf, structuredPatchOf } from "./render/tools.ts"

export interface Renderer {
  /** The text one event adds to the screen ("" when it shows nothing). */
  readonly event: (event: AgentEvent) => string
  /** A stored transcript, laid out as the live events would be. */
  readonly transcript: (items: ReadonlyArray<TranscriptItem>) => string
  /** The task tree as it stands (empty string when there are no tasks). */
  readonly taskTree: () => string
  /** End an open text stream (before the front end writes its own lines). */
  readonly flush: () => string
  /** Tasks seen so far, by id (for /tasks and /stop). */
  readonly tasks: () => ReadonlyArray<TaskInfo>
  /** The last rate limits reported. */
  readonly limits: () => UsageLimits | undefined
  /** The whole text of fold `n` (1-based), or undefined when there is none. */
  readonly expand: (n: number) => string | undefined
  /** How many folds there are. */
  readonly folds: () => number
  /** The session's cost so far as Claude Code counts it (undefined: not reported yet). */
  readonly sessionCost: () => number | undefined
}

const onEvent = (ctx: RenderContext, e: AgentEvent): string => {
  const depth = depthOf(ctx, e.task_id)
  const { paint, dim } = ctx
  switch (e.type) {
    case "RunStarted":
      ctx.runTasks.clear()
      ctx.run = { id: e.run_id, item: "", text: "" }
      return flush(ctx)
    case "TextDelta":
      if (ctx.run && e.task_id === undefined)
        ctx.run = {
          ...ctx.run,
          item: e.item_id,
          text: (ctx.run.item === e.item_id ? ctx.run.text : "") + e.text,
        }
      return streamChunk(ctx, e.item_id, "text", e.task_id, e.text)
    case "ReasoningDelta":
      return streamChunk(ctx, e.item_id, "reasoning", e.task_id, e.text)
    case "UserMessage":
      return block(ctx, [`${paint("cyan", "›")} ${e.text}`], depth)
    case "ToolCallStarted":
      return block(ctx, callStarted(ctx, e.call), depth)
    case "output_delta": {
      const text = e.text.replace(/\n$/, "")
      return text === ""
        ? ""
        : block(
            ctx,
            text.split("\n").map((l) => `    ${dim(l)}`),
            depth,
          )
    }
    case "ToolCallFinished":
      return block(ctx, callFinished(ctx, e.call), depth)
    case "Plan":
      return block(ctx, planLines(ctx, e.entries), depth)
    case "Task": {
      const previous = ctx.tasks.get(e.task.id)
      ctx.tasks.set(e.task.id, e.task)
      ctx.runTasks.add(e.task.id)
      return block(ctx, taskUpdate(ctx, previous, e.task), depthOf(ctx, e.task.parent_task_id))
    }
    case "ApprovalRequested":
      return block(ctx, approvalLines(ctx, e), depth)
    case "approval_resolved":
      return e.reason ? block(ctx, [dim(`  ⎿ approval withdrawn: ${e.reason}`)], depth) : ""
    case "QuestionAsked":
      return block(ctx, questionLines(ctx, e.questions), depth)
    case "question_resolved":
      return e.reason ? block(ctx, [dim(`  ⎿ question withdrawn: ${e.reason}`)], depth) : ""
    case "Compacted":
      return block(ctx, compactedLines(ctx, e.summary))
    case "Skills":
      return block(ctx, skillsLines(ctx, e.skills))
    case "UsageLimits":
      ctx.limits = e.limits
      return ""
    case "usage_blocked":
      return block(ctx, [
        paint("red", `✗ Usage limit reached${e.window ? ` (${e.window})` : ""}: ${e.message}`),
        ...(e.resets_at ? [dim(`  resets ${resetTime(e.resets_at, ctx.now())}`)] : []),
      ])
    case "input_delivery": {
      if (e.state === "picked_up") return ""
      const line = dim(`  ⎿ input ${e.state.replace(/_/g, " ")}${e.reason ? `: ${e.reason}` : ""}`)
      // Said with the run's outcome, where it belongs.
      if (!ctx.run || e.run_id !== ctx.run.id) return block(ctx, [line])
      ctx.held.push(line)
      return ""
    }
    case "recovery_identity":
      return ""
    case "Notice":
      return block(ctx, [noticeLine(ctx, e.level, e.text)], depth)
    case "SessionInfo":
      // Model and mode live in the status line; the chat says what it changed itself.
      return ""
    case "RunEnded":
      return runEnded(ctx, e)
  }
}

/**
 * A run's end: its summary; its error unless the run's last text already said
 * it (the CLI streams an API error as text, then ends the run with it); what
 * became of its prompt when the model never took it up; its task tree.
 */
const runEnded = (ctx: RenderContext, e: Extract<AgentEvent, { type: "RunEnded" }>): string => {
  const said =
    e.error !== undefined && ctx.run?.id === e.run_id && ctx.run.text.includes(firstLine(e.error).trim())
  const lines = usageLine(ctx, e.outcome, e.usage, said ? undefined : e.error)
  if (ctx.held.length > 0)
    lines.push(
      ...(e.outcome === "Failed"
        ? [ctx.dim("   the model never took up your prompt: nothing of it ran")]
        : ctx.held),
    )
  ctx.held.length = 0
  if (ctx.run?.id === e.run_id) ctx.run = undefined
  const tree = ctx.runTasks.size > 0 ? taskTree(ctx, ctx.runTasks) : ""
  return block(ctx, lines) + tree
}

/** One stored item, laid out as its live events would be. */
const onItem = (ctx: RenderContext, item: TranscriptItem, depth: number): string => {
  const { paint, dim } = ctx
  switch (item.type) {
    case "user":
      return block(
        ctx,
        [
          `${paint(["cyan", "bold"], "›")} ${paint("bold", item.text)}${item.images ? dim(` [${item.images} image(s)]`) : ""}`,
        ],
        depth,
      )
    case "assistant": {
      const md = new MarkdownStream(ctx.markdown)
      return flush(ctx) + behind(ctx, depth, md.push(item.text) + md.end())
    }
    case "reasoning": {
      const lines = item.text.replace(/\n+$/, "").split("\n")
      const rows = lines.slice(0, ctx.thinkingLines).flatMap((l) => reasoningRows(ctx, l, 0))
      if (lines.length > ctx.thinkingLines)
        rows.push(`  ${ctx.fold(item.text, "thinking", lines.length - ctx.thinkingLines)}`)
      return block(ctx, [paint(["dim", "italic"], "✻ Thinking…"), ...rows], depth)
    }
    case "tool_call":
      return block(ctx, [...callStarted(ctx, item.call, true), ...callFinished(ctx, item.call)], depth)
    case "plan":
      return block(ctx, planLines(ctx, item.entries), depth)
    case "task": {
      // As it happened: the task opens, its work, then how it ended and its summary.
      ctx.tasks.set(item.task.id, item.task)
      const { summary: _summary, ...rest } = item.task
      const opened: TaskInfo = { ...rest, status: "Running" }
      return (
        block(ctx, [taskLabel(ctx, opened)], depth) +
        items(ctx, item.items, depth + 1) +
        block(ctx, item.task.status === "Running" ? [] : taskUpdate(ctx, opened, item.task), depth)
      )
    }
    case "compacted":
      return block(ctx, compactedLines(ctx, item.summary), depth)
    case "notice":
      return block(ctx, [noticeLine(ctx, item.level, item.text)], depth)
  }
}

const items = (ctx: RenderContext, list: ReadonlyArray<TranscriptItem>, depth: number): string =>
  list.map((item) => onItem(ctx, item, depth)).join("")

export const makeRenderer = (options: RenderOptions): Renderer => {
  const ctx = makeContext(options, (width) => makeMarkdown({ color: options.color, width }))
  return {
    event: (e) => onEvent(ctx, e),
    transcript: (list) => items(ctx, list, 0) + flush(ctx),
    taskTree: () => taskTree(ctx),
    flush: () => flush(ctx),
    tasks: () => [...ctx.tasks.values()],
    limits: () => ctx.limits,
    expand: (n) => ctx.folded[n - 1],
    folds: () => ctx.folded.length,
    sessionCost: () => ctx.cost,
  }
}

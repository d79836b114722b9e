/**
 * Plans and tasks: the agent's checklist, a subagent's or workflow's label
 * with its facts, what changed in a task since last shown, and the task
 * tree (/tasks, and at the end of a run that had tasks).
 */
import type { PlanEntry, TaskInfo } from "../../../sdk/protocol.ts"
import { compactNumber, duration, firstLine, plural } from "../text.ts"
import { PLAN_GLYPH, type RenderContext, STATUS_COLOR, TASK_GLYPH } from "./context.ts"

export const planLines = (ctx: RenderContext, entries: ReadonlyArray<PlanEntry>): string[] => [
  ctx.paint("bold", "Plan"),
  ...entries.map((e) => {
    const glyph = PLAN_GLYPH[e.status]
    const text = e.status === "in_progress" ? (e.active_form ?? e.content) : e.content
    const painted =
      e.status === "completed"
        ? ctx.paint("green", `${glyph} ${text}`)
        : e.status === "in_progress"
          ? ctx.paint("cyan", `${glyph} ${text}`)
          : `${glyph} ${text}`
    return `  ${painted}`
  }),
]

export const taskLabel = (ctx: RenderContext, task: TaskInfo): string => {
  const glyph = ctx.paint(STATUS_COLOR[task.status], TASK_GLYPH[task.status])
  const facts = [
    task.phase ? `[${task.phase}]` : undefined,
    task.name,
    task.model,
    ctx.paint(STATUS_COLOR[task.status], task.status),
    task.background ? "background" : undefined,
    task.usage?.tool_uses !== undefined ? plural(task.usage.tool_uses, "tool use") : undefined,
    task.usage?.used_tokens !== undefined ? `${compactNumber(task.usage.used_tokens)} tokens` : undefined,
    task.usage?.duration_ms !== undefined ? duration(task.usage.duration_ms) : undefined,
  ].filter((f): f is string => f !== undefined && f !== "")
  const kind = task.workflow ? "Workflow" : "Agent"
  return `${glyph} ${ctx.paint("bold", `${kind}: ${task.title}`)} ${ctx.dim(`· ${facts.join(" · ")}`)}`
}

/** What changed since `previous` worth a line: its status, phases, summary, a workflow's result. */
export const taskUpdate = (
  ctx: RenderContext,
  previous: TaskInfo | undefined,
  task: TaskInfo,
  label = true,
): string[] => {
  const lines: string[] = []
  // Status changes only: the task's own tool calls already show what it is doing.
  if (label && (!previous || previous.status !== task.status)) lines.push(taskLabel(ctx, task))
  if (task.workflow?.phases.length && !previous?.workflow?.phases.length)
    lines.push(ctx.dim(`  phases: ${task.workflow.phases.map((p) => p.title).join(" → ")}`))
  if (task.summary && task.summary !== previous?.summary && task.status !== "Running")
    lines.push(
      ...task.summary
        .split("\n")
        .slice(0, 4)
        .map((l) => `  ${ctx.dim(l)}`),
    )
  if (task.workflow?.result && task.workflow.result !== previous?.workflow?.result)
    lines.push(`  ${ctx.dim(firstLine(task.workflow.result))}`)
  return lines
}

/** The tree of the tasks seen (only those in `only`, when given); "" when there are none. */
export const taskTree = (ctx: RenderContext, only?: ReadonlySet<string>): string => {
  const all = [...ctx.tasks.values()].filter((t) => !only || only.has(t.id))
  if (all.length === 0) return ""
  const ids = new Set(all.map((t) => t.id))
  const children = (parent: string | undefined) =>
    all.filter(
      (t) =>
        (t.parent_task_id !== undefined && ids.has(t.parent_task_id) ? t.parent_task_id : undefined) ===
        parent,
    )
  const lines = [ctx.paint("bold", "Tasks")]
  const walk = (parent: string | undefined, indent: string) => {
    const kids = children(parent)
    kids.forEach((task, i) => {
      const last = i === kids.length - 1
      lines.push(`${indent}${ctx.dim(last ? "└─ " : "├─ ")}${taskLabel(ctx, task)}`)
      walk(task.id, `${indent}${last ? "   " : ctx.dim("│  ")}`)
    })
  }
  walk(undefined, "  ")
  return lines.map((l) => `${l}\n`).join("")
}

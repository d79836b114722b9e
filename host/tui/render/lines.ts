/**
 * The renderer's other line builders: approvals and questions as they are
 * asked, a run's summary line with its limits, the skills count, notices.
 */
import type { AgentEvent, Question, RunUsage, SkillInfo, UsageLimits } from "../../../sdk/protocol.ts"
import { compactNumber, duration, firstLine, resetTime } from "../text.ts"
import type { Format, RenderContext } from "./context.ts"
import { inputText } from "./tools.ts"

export const approvalLines = (
  ctx: RenderContext,
  e: Extract<AgentEvent, { type: "ApprovalRequested" }>,
): string[] => {
  const { paint, dim } = ctx
  const what = e.title && e.title !== e.tool_name ? e.title : inputText(e.input)
  const lines = [
    `${paint(["yellow", "bold"], "? Allow")} ${paint("bold", e.tool_name)}${what ? `: ${what}` : ""}`,
  ]
  if (e.description && e.description !== what) lines.push(`  ${dim(e.description)}`)
  lines.push(
    `  ${paint("bold", "a")} allow · ${paint("bold", "d")} [reason] deny${e.can_always === false ? "" : ` · ${paint("bold", "A")} always (until this session ends)`}`,
  )
  return lines
}

export const questionLines = (ctx: RenderContext, questions: ReadonlyArray<Question>): string[] =>
  questions.flatMap((q) => [
    `${ctx.paint(["yellow", "bold"], "?")} ${q.header ? `${ctx.paint("bold", q.header)}: ` : ""}${q.question}`,
    ...q.options.map(
      (o, i) =>
        `  ${ctx.paint("bold", `${i + 1}.`)} ${o.label}${o.description ? ctx.dim(` — ${o.description}`) : ""}`,
    ),
    `  ${ctx.dim(q.multi_select ? "numbers separated by commas, or type your own answer" : "a number, or type your own answer")}`,
  ])

export const limitsText = (ctx: RenderContext, l: UsageLimits | undefined): string => {
  if (!l || l.windows.length === 0) return "rate limits: none reported"
  return `rate limits: ${l.windows
    .map((w) => {
      const reset = w.resets_at ? ` (resets ${resetTime(w.resets_at, ctx.now())})` : ""
      const flag = w.status === "rejected" ? " REJECTED" : w.status === "allowed_warning" ? " warning" : ""
      return `${w.label} ${Math.round(w.used * 100)}%${flag}${reset}`
    })
    .join(" · ")}`
}

/** The facts of a run's usage, in the order the summary line gives them (`cost`: the run's own). */
const usageFacts = (usage: RunUsage, cost: number | undefined): string[] => {
  const facts: string[] = []
  if (usage.duration_ms !== undefined) facts.push(duration(usage.duration_ms))
  if (usage.num_turns !== undefined) facts.push(`${usage.num_turns} turn${usage.num_turns === 1 ? "" : "s"}`)
  const thinking = usage.thinking_tokens ? ` (${compactNumber(usage.thinking_tokens)} thinking)` : ""
  facts.push(`${compactNumber(usage.input_tokens)} in / ${compactNumber(usage.output_tokens)} out${thinking}`)
  if (usage.cache_read_tokens) facts.push(`${compactNumber(usage.cache_read_tokens)} cached`)
  // A run that never reached the model has no context to report.
  if (usage.context_window && usage.context_used) {
    const used = usage.context_used ?? 0
    const pct = Math.round((used / usage.context_window) * 100)
    facts.push(`context ${compactNumber(used)}/${compactNumber(usage.context_window)} (${pct}%)`)
  }
  if (cost !== undefined) facts.push(`$${cost.toFixed(4)}`)
  return facts
}

/** The run's own cost: the CLI reports the session's running total (none when the total before is unknown). */
const runCost = (ctx: RenderContext, usage: RunUsage | undefined): number | undefined => {
  const total = usage?.cost_usd
  if (total === undefined) return undefined
  const before = ctx.cost
  ctx.cost = total
  if (before === undefined) return undefined
  // A total below the last one is a new process's own count.
  return total >= before ? total - before : total
}

export const usageLine = (
  ctx: RenderContext,
  outcome: string,
  usage: RunUsage | undefined,
  error: string | undefined,
): string[] => {
  const color: Format = outcome === "Completed" ? "green" : outcome === "Failed" ? "red" : "yellow"
  const facts = usage ? usageFacts(usage, runCost(ctx, usage)) : []
  const lines = [
    `${ctx.paint(color, `── ${outcome}`)}${facts.length ? ctx.dim(` · ${facts.join(" · ")}`) : ""}`,
  ]
  if (error) lines.push(ctx.paint("red", `   ${firstLine(error)}`))
  // Only meters worth reading: an API key reports none, and saying so after every run is noise.
  if (ctx.limits && ctx.limits.windows.length > 0) lines.push(ctx.dim(`   ${limitsText(ctx, ctx.limits)}`))
  return lines
}

/** A count, not the list: the CLI brings dozens of commands; /skills lists them. */
export const skillsLines = (ctx: RenderContext, skills: ReadonlyArray<SkillInfo>): string[] => {
  const offered = skills.filter((s) => !s.hidden_from_picker).length
  if (ctx.oneShot) return []
  return [ctx.dim(`skills: ${offered === 0 ? "none" : `${offered} available (/skills lists them)`}`)]
}

export const noticeLine = (ctx: RenderContext, level: "info" | "warning" | "error", text: string): string =>
  level === "error"
    ? ctx.paint("red", `✗ ${text}`)
    : level === "warning"
      ? ctx.paint("yellow", `! ${text}`)
      : ctx.dim(`i ${text}`)

export const compactedLines = (ctx: RenderContext, summary: string): string[] => [
  ctx.paint("cyan", "⟳ Context compacted"),
  ...summary
    .split("\n")
    .slice(0, 3)
    .map((l) => `  ${ctx.dim(l)}`),
]

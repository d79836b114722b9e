/**
 * The protocol's own event shapes (sdk/protocol.ts) as Zod, to tell a
 * malformed event: what the mapper's property test and the long fuzz run
 * (testkit/fuzz-kit.ts, bench/fuzz.ts) hold every event they see to.
 */
import { z } from "zod"
import type { MapOutput } from "../map.ts"

const str = z.string()
const optStr = str.optional()
const count = z.number().refine(Number.isFinite, "not finite")
const optCount = count.optional()
const ToolKind = z.enum(["execute", "edit", "read", "search", "fetch", "think", "task", "mcp", "other"])
const ToolStatus = z.enum(["Running", "Completed", "Failed", "Cancelled"])
const ToolCall = z.object({
  id: str,
  name: str,
  kind: ToolKind,
  title: str,
  input: z.unknown(),
  diff: optStr,
  new_text: optStr,
  path: optStr,
  status: ToolStatus,
  output: z.unknown().optional(),
  output_text: optStr,
  exit_code: optCount,
  task_id: optStr,
})
const PlanEntry = z.object({
  content: str,
  status: z.enum(["pending", "in_progress", "completed"]),
  active_form: optStr,
})
const TaskInfo = z.object({
  id: str,
  parent_task_id: optStr,
  title: str,
  name: optStr,
  model: optStr,
  prompt: optStr,
  status: z.enum(["Running", "Waiting", "Completed", "Failed", "Cancelled"]),
  summary: optStr,
  activity: optStr,
  usage: z.object({ used_tokens: optCount, tool_uses: optCount, duration_ms: optCount }).optional(),
  background: z.boolean().optional(),
  workflow: z
    .object({
      name: optStr,
      run_id: optStr,
      phases: z.array(z.object({ index: count, title: str })),
      result: optStr,
      log: z.array(str).optional(),
    })
    .optional(),
  phase: optStr,
})
export const RunUsageShape = z.object({
  input_tokens: count,
  output_tokens: count,
  cache_read_tokens: optCount,
  cache_write_tokens: optCount,
  thinking_tokens: optCount,
  context_window: optCount,
  context_used: optCount,
  cost_usd: optCount,
  duration_ms: optCount,
  num_turns: optCount,
})
const iso = str.refine((s) => !Number.isNaN(Date.parse(s)), "not an ISO time")
const UsageLimits = z.object({
  windows: z.array(
    z.object({
      id: str,
      label: str,
      used: count.refine((n) => n >= 0 && n <= 1, "not a share"),
      resets_at: iso.optional(),
      status: z.enum(["allowed", "allowed_warning", "rejected"]).optional(),
    }),
  ),
  reset_credits: z.array(z.never()),
  blocking_window: optStr,
  updated_at: iso,
})
const base = { session_id: str, run_id: optStr, task_id: optStr }
const event = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.object({ type: z.literal(type), ...base, ...shape })
const Question = z.object({
  question: str,
  header: optStr,
  multi_select: z.boolean(),
  options: z.array(z.object({ label: str, description: optStr })),
})
export const AgentEventShape = z.discriminatedUnion("type", [
  event("RunStarted", { run_id: str, delivery_ids: z.array(str).optional() }),
  event("RunEnded", {
    run_id: str,
    outcome: z.enum(["Completed", "Failed", "Cancelled"]),
    usage: RunUsageShape.optional(),
    error: optStr,
    delivery_ids: z.array(str).optional(),
  }),
  event("TextDelta", { item_id: str, text: str }),
  event("ReasoningDelta", { item_id: str, text: str }),
  event("ToolCallStarted", { call: ToolCall }),
  event("output_delta", { tool_call_id: str, text: str }),
  event("ToolCallFinished", { call: ToolCall }),
  event("Plan", { entries: z.array(PlanEntry) }),
  event("ApprovalRequested", {
    approval_id: str,
    tool_call_id: optStr,
    tool_name: str,
    title: str,
    input: z.unknown(),
    description: optStr,
    can_always: z.boolean().optional(),
  }),
  event("approval_resolved", { approval_id: str, reason: optStr }),
  event("QuestionAsked", { question_id: str, questions: z.array(Question) }),
  event("question_resolved", { question_id: str, reason: optStr }),
  event("Task", { task: TaskInfo }),
  event("Compacted", { summary: str }),
  event("Skills", { skills: z.array(z.object({ name: str })) }),
  event("UsageLimits", { limits: UsageLimits }),
  event("usage_blocked", { run_id: str, window: optStr, resets_at: iso.optional(), message: str }),
  event("Notice", { level: z.enum(["info", "warning", "error"]), text: str }),
  event("SessionInfo", { info: z.object({}).loose() }),
  event("UserMessage", { item_id: str, text: str }),
])

/** Why an event breaks the protocol (its shape, or JSON.stringify), or undefined when it does not. */
export const malformed = (value: unknown): string | undefined => {
  const parsed = AgentEventShape.safeParse(value)
  if (!parsed.success)
    return parsed.error.issues
      .slice(0, 2)
      .map((i) => `${i.path.join(".")}: ${i.message}`)
      .join("; ")
  try {
    JSON.stringify(value)
  } catch (cause) {
    return `JSON.stringify: ${String(cause)}`
  }
  return undefined
}

/** Why a mapper's output breaks the protocol: its events, and the run usage its result signals carry. */
export const malformedOutput = (out: MapOutput): string | undefined => {
  for (const e of out.events) {
    const why = malformed(e)
    if (why !== undefined) return `${(e as { type?: unknown }).type}: ${why}`
  }
  for (const signal of out.signals) {
    if (signal.type !== "result") continue
    const parsed = RunUsageShape.safeParse(signal.usage)
    if (!parsed.success) return `result usage: ${parsed.error.issues[0]?.message}`
    if (!signal.errors.every((e) => typeof e === "string")) return "result errors: not strings"
  }
  return undefined
}

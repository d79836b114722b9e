/**
 * One plan rule for the task tools, live and stored: a TaskCreate, TaskUpdate
 * or TaskList call changes the plan when its result says it completed, and
 * only then (a failed call changed nothing in the CLI's list). The same
 * conversation is given to the live mapper as frames and to the transcript
 * reader as records; both must show the same plans, each after its call's
 * result. Shapes as CLI 2.1.332 writes them (testdata/tasks).
 */
import { describe, expect, it } from "vitest"
import { makeMapper } from "./map.ts"
import { recordsToItems } from "./records.ts"
import type { PlanEntry } from "./sdk/protocol.ts"
import { decodeLine, type Frame } from "./wire.ts"

const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "assistant",
  uuid: `u-${id}`,
  message: { id: `msg_${id}`, role: "assistant", content: [{ type: "tool_use", id, name, input }] },
})
const result = (id: string, content: string, toolUseResult: unknown, isError = false) => ({
  type: "user",
  uuid: `u-${id}-result`,
  message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] },
  toolUseResult,
})

/** A conversation as records; `asFrames` renames the structured result to its frame field. */
const conversation = (updateFails: boolean) => [
  call("t1", "TaskCreate", { subject: "Fix the parser", description: "d" }),
  result("t1", "Task #1 created", { task: { id: "1", subject: "Fix the parser" } }),
  call("t2", "TaskUpdate", { taskId: "1", status: "in_progress" }),
  updateFails
    ? result("t2", "<tool_use_error>update refused</tool_use_error>", "Error: update refused", true)
    : result("t2", "Updated task #1 status", { success: true, taskId: "1", updatedFields: ["status"] }),
]

const asFrames = (records: ReadonlyArray<Record<string, unknown>>): Frame[] =>
  records.map(({ toolUseResult, ...rest }) => {
    const d = decodeLine(
      JSON.stringify({ ...rest, ...(toolUseResult === undefined ? {} : { tool_use_result: toolUseResult }) }),
    )
    if (d.kind !== "frame") throw new Error(d.kind === "error" ? d.message : "blank")
    return d.frame
  })

/** Live: each plan, and the kinds of event around it. */
const livePlans = (records: ReadonlyArray<Record<string, unknown>>) => {
  const mapper = makeMapper({ sessionId: "s" })
  const kinds: string[] = []
  const plans: PlanEntry[][] = []
  for (const f of asFrames(records))
    for (const e of mapper.map(f, "run").events) {
      kinds.push(e.type)
      if (e.type === "Plan") plans.push([...e.entries])
    }
  return { kinds, plans }
}

const storedPlans = (records: ReadonlyArray<Record<string, unknown>>) => {
  const items = recordsToItems(records)
  return {
    kinds: items.map((i) => (i.type === "tool_call" ? `${i.type}:${i.call.status}` : i.type)),
    plans: items.flatMap((i) => (i.type === "plan" ? [[...i.entries]] : [])),
  }
}

describe("task tools: one plan rule live and stored", () => {
  it("a successful TaskUpdate: the same plans, the update's after its result", () => {
    const live = livePlans(conversation(false))
    const stored = storedPlans(conversation(false))
    expect(stored.plans).toEqual(live.plans)
    expect(live.plans.map((p) => p[0]?.status)).toEqual(["pending", "in_progress"])
    expect(live.kinds).toEqual([
      "ToolCallStarted",
      "ToolCallFinished",
      "Plan",
      "ToolCallStarted",
      "ToolCallFinished",
      "Plan",
    ])
    // Stored, a call's item holds its result: the plan follows it.
    expect(stored.kinds).toEqual(["tool_call:Completed", "plan", "tool_call:Completed", "plan"])
  })

  it("a failed TaskUpdate changes no plan, live or stored", () => {
    const live = livePlans(conversation(true))
    const stored = storedPlans(conversation(true))
    expect(live.plans.map((p) => p[0]?.status)).toEqual(["pending"])
    expect(stored.plans).toEqual(live.plans)
    expect(stored.kinds).toEqual(["tool_call:Completed", "plan", "tool_call:Failed"])
  })

  it("a TaskUpdate whose result never came changes no plan", () => {
    const records = conversation(false).slice(0, 3)
    expect(livePlans(records).plans).toHaveLength(1)
    expect(storedPlans(records).plans).toEqual(livePlans(records).plans)
  })
})

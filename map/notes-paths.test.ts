/**
 * Mapper paths of the product notes that no recording exercises, each held
 * on hand-built frames: `tool_progress` is read and produces nothing; a
 * tool's progress line inside a subagent is tagged with that subagent; a
 * `SendMessage` whose work the CLI announces by re-sending `task_started`
 * lands in the agent's task.
 */
import { describe, expect, it } from "vitest"
import { makeMapper } from "../map.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { decodeLine, type Frame } from "../wire.ts"

const frame = (value: Record<string, unknown>): Frame => {
  const d = decodeLine(JSON.stringify(value))
  if (d.kind !== "frame") throw new Error(d.kind === "error" ? d.message : d.kind)
  return d.frame
}

const mapAll = (frames: ReadonlyArray<Frame>) => {
  const mapper = makeMapper({ sessionId: "s" })
  const events: AgentEvent[] = []
  const signals: unknown[] = []
  for (const f of frames) {
    const out = mapper.map(f, "run-1")
    events.push(...out.events)
    signals.push(...out.signals)
  }
  return { events, signals }
}

const toolUse = (id: string, name: string, input: unknown, parent: string | null = null) =>
  frame({
    type: "assistant",
    message: { id: `msg_${id}`, model: "claude-opus-5-5", content: [{ type: "tool_use", id, name, input }] },
    parent_tool_use_id: parent,
  })

const started = (taskId: string, toolUseId: string) =>
  frame({
    type: "system",
    subtype: "task_started",
    task_id: taskId,
    tool_use_id: toolUseId,
    description: "Look around",
    task_type: "local_agent",
  })

describe("tool_progress", () => {
  it("is decoded as its own frame and produces no event and no signal", () => {
    const line = JSON.stringify({
      type: "tool_progress",
      tool_use_id: "b1",
      tool_name: "Bash",
      parent_tool_use_id: null,
      elapsed_time_seconds: 3,
    })
    const decoded = decodeLine(line)
    expect(decoded.kind).toBe("frame")
    if (decoded.kind !== "frame") return
    expect(decoded.frame.type).toBe("tool_progress")
    const before = mapAll([toolUse("b1", "Bash", { command: "sleep 9" })])
    const after = mapAll([toolUse("b1", "Bash", { command: "sleep 9" }), decoded.frame])
    expect(after.events).toEqual(before.events)
    expect(after.signals).toEqual(before.signals)
  })
})

describe("output_delta", () => {
  it("is tagged with the subagent the call ran in", () => {
    const { events } = mapAll([
      toolUse("A", "Agent", { description: "Look around", prompt: "Look" }),
      started("agentA", "A"),
      toolUse("b1", "Bash", { command: "make" }, "A"),
      frame({ type: "system", subtype: "informational", content: "Still building", tool_use_id: "b1" }),
    ])
    const deltas = events.filter((e) => e.type === "output_delta")
    expect(deltas).toEqual([
      expect.objectContaining({ tool_call_id: "b1", text: "Still building", task_id: "A" }),
    ])
  })
})

describe("SendMessage", () => {
  it("routes the agent's new work by the re-sent task_started, with no `to` to go by", () => {
    const { events } = mapAll([
      toolUse("A", "Agent", { description: "Look around", prompt: "Look" }),
      started("agentA", "A"),
      frame({
        type: "system",
        subtype: "task_notification",
        task_id: "agentA",
        tool_use_id: "A",
        status: "completed",
      }),
      toolUse("S", "SendMessage", { message: "Now count lines" }),
      // The CLI announces the continued agent under the SendMessage call.
      started("agentA", "S"),
      frame({
        type: "assistant",
        message: { id: "mS", model: "claude-haiku-4-5", content: [{ type: "text", text: "12 lines" }] },
        parent_tool_use_id: "S",
      }),
    ])
    expect(events.find((e) => e.type === "TextDelta" && e.text === "12 lines")?.task_id).toBe("A")
    const statuses = events.flatMap((e) => (e.type === "Task" && e.task.id === "A" ? [e.task.status] : []))
    expect(statuses.at(-1)).toBe("Running")
    expect(events.some((e) => e.type === "Task" && e.task.id === "S")).toBe(false)
  })
})

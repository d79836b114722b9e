/**
 * A long session's state stays bounded (map/forget.ts): every recording
 * under testdata/ mapped again and again by one mapper, its message, call
 * and agent ids made new each time, keeps each of the state's maps and sets
 * within the sizes it reached in the first rounds; and the finished tasks it forgets
 * are the old ones, while a SendMessage to a recent finished agent still
 * finds it.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { dispatch } from "./dispatch.ts"
import { KEEP_FINISHED, MESSAGE_BATCH } from "./forget.ts"
import { type MapState, newMapState, newOut } from "./state.ts"
import { decodeLine } from "../wire.ts"

const ids = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16}(?:_[A-Za-z0-9]+)*)\b/g

/** Every recording's lines, its ids made its own (the scenarios reuse the scripted model's ids). */
const recorded: string[] = readdirSync("testdata")
  .filter((d) => existsSync(`testdata/${d}/stdout.jsonl`))
  .sort()
  .flatMap((d, k) =>
    readFileSync(`testdata/${d}/stdout.jsonl`, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.replace(ids, `$1_s${k}`)),
  )

const mapRound = (s: MapState, round: number): void => {
  for (const line of recorded) {
    const d = decodeLine(line.replace(ids, `$1_${round}`))
    if (d.kind === "frame") dispatch(s, d.frame, newOut(`run-${round}`))
  }
}

const sizes = (s: MapState): Record<string, number> => ({
  tasks: s.agents.tasks.size,
  byAgent: s.agents.byAgent.size,
  byCliTask: s.agents.byCliTask.size,
  routes: s.agents.routes.size,
  promptSeen: s.agents.promptSeen.size,
  ignoredCliTasks: s.agents.ignoredCliTasks.size,
  streamed: s.stream.streamed.size,
  blockCounts: s.stream.blockCounts.size,
  streamMessage: s.stream.streamMessage.size,
  turnMessages: s.stream.turnMessages.size,
  taskMessages: s.stream.taskMessages.size,
  callsOpen: s.calls.open.size,
  outputLines: s.calls.outputLines.size,
  taskLists: s.calls.taskLists.size,
})

describe("a long session's state", () => {
  it("stays within the sizes a few rounds of the recordings reach, round after round", () => {
    const s = newMapState("s")
    // Enough rounds for the finished tasks to pass their bound (twice: they are looked for in steps).
    const settle = KEEP_FINISHED
    const most: Record<string, number> = {}
    const later: Record<string, number> = {}
    for (let round = 0; round < settle * 2; round++) {
      mapRound(s, round)
      const into = round < settle ? (round >= settle / 2 ? most : undefined) : later
      if (into !== undefined)
        for (const [name, size] of Object.entries(sizes(s))) into[name] = Math.max(into[name] ?? 0, size)
    }
    for (const [name, size] of Object.entries(later))
      expect({ [name]: size }).toEqual({ [name]: Math.min(size, most[name] ?? 0) })
    expect(later.tasks).toBeLessThanOrEqual(KEEP_FINISHED * 8)
    expect(later.streamed).toBeLessThanOrEqual(MESSAGE_BATCH * 2)
  })

  it("forgets the oldest finished agents, and a SendMessage still reaches a recent one", () => {
    const s = newMapState("s")
    const frame = (value: Record<string, unknown>) => {
      const d = decodeLine(JSON.stringify(value))
      if (d.kind !== "frame") throw new Error("bad frame")
      dispatch(s, d.frame, newOut("r"))
    }
    const result = () => frame({ type: "result", subtype: "success", usage: {} })
    const agents = KEEP_FINISHED + 10
    for (let n = 0; n < agents; n++) {
      frame({
        type: "assistant",
        message: {
          id: `msg_${n}`,
          content: [{ type: "tool_use", id: `call_${n}`, name: "Agent", input: { prompt: `job ${n}` } }],
        },
      })
      frame({
        type: "system",
        subtype: "task_started",
        task_id: `a${n}`,
        tool_use_id: `call_${n}`,
        task_type: "local_agent",
      })
      frame({
        type: "user",
        message: { content: [{ type: "tool_result", tool_use_id: `call_${n}`, content: "done" }] },
        tool_use_result: { agentId: `a${n}`, status: "completed" },
      })
      result()
    }
    expect(s.agents.tasks.has("call_0")).toBe(false)
    expect(s.agents.byAgent.has("a0")).toBe(false)
    expect(s.agents.tasks.has(`call_${agents - 1}`)).toBe(true)
    // More work for the newest agent: its task runs again.
    const out = newOut("r")
    const d = decodeLine(
      JSON.stringify({
        type: "assistant",
        message: {
          id: "msg_send",
          content: [
            { type: "tool_use", id: "call_send", name: "SendMessage", input: { to: `a${agents - 1}` } },
          ],
        },
      }),
    )
    if (d.kind !== "frame") throw new Error("bad frame")
    dispatch(s, d.frame, out)
    expect(out.events.some((e) => e.type === "Task" && e.task.status === "Running")).toBe(true)
  })

  it("a late frame for a forgotten finished task leaves it finished: no fresh Running task", () => {
    const s = newMapState("s")
    const frame = (value: Record<string, unknown>) => {
      const d = decodeLine(JSON.stringify(value))
      if (d.kind !== "frame") throw new Error("bad frame")
      const out = newOut("r")
      dispatch(s, d.frame, out)
      return out.events
    }
    const agents = KEEP_FINISHED * 3
    for (let n = 0; n < agents; n++) {
      frame({
        type: "assistant",
        message: {
          id: `msg_${n}`,
          content: [{ type: "tool_use", id: `call_${n}`, name: "Agent", input: { prompt: `job ${n}` } }],
        },
      })
      frame({
        type: "system",
        subtype: "task_started",
        task_id: `a${n}`,
        tool_use_id: `call_${n}`,
        task_type: "local_agent",
      })
      frame({
        type: "user",
        message: { content: [{ type: "tool_result", tool_use_id: `call_${n}`, content: "done" }] },
        tool_use_result: { agentId: `a${n}`, status: "completed" },
      })
      frame({ type: "result", subtype: "success", usage: {} })
    }
    // Forgotten in batches: the five oldest are gone by now.
    for (const n of [0, 1, 2, 3, 4]) expect(s.agents.tasks.has(`call_${n}`)).toBe(false)
    const late = [
      ...frame({
        type: "assistant",
        parent_tool_use_id: "call_0",
        agent_id: "a0",
        message: { id: "msg_late", content: [{ type: "text", text: "one more thing" }] },
      }),
      ...frame({
        type: "stream_event",
        parent_tool_use_id: "call_1",
        api_message_id: "msg_late_stream",
        event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "late" } },
      }),
      ...frame({
        type: "user",
        parent_tool_use_id: "call_2",
        message: { content: [{ type: "text", text: "a late user line" }] },
      }),
      ...frame({
        type: "system",
        subtype: "task_progress",
        task_id: "a3",
        description: "x",
        usage: { total_tokens: 9 },
      }),
      ...frame({
        type: "system",
        subtype: "task_notification",
        task_id: "a4",
        status: "completed",
        summary: "x",
      }),
    ]
    expect(late).toEqual([])
    for (const id of ["call_0", "call_1", "call_2", "call_3", "call_4"])
      expect(s.agents.tasks.has(id)).toBe(false)
    // More work for a forgotten agent (its task_started again) brings it back, running.
    const again = frame({
      type: "system",
      subtype: "task_started",
      task_id: "a0",
      tool_use_id: "call_0",
      task_type: "local_agent",
    })
    expect(again).toEqual([
      expect.objectContaining({
        type: "Task",
        task: expect.objectContaining({ id: "call_0", status: "Running" }),
      }),
    ])
  })
})

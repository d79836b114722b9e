import { describe, expect, it } from "vitest"
import { makeMapper } from "../map.ts"
import type { AgentEvent, TaskInfo } from "../sdk/protocol.ts"
import type { Frame } from "../wire.ts"

const started = {
  type: "system",
  subtype: "task_started",
  task_id: "w1",
  tool_use_id: "toolu_wf",
  description: "Flow",
  task_type: "local_workflow",
  workflow_name: "flow",
}
const progress = (phases: string[], duration: number) => ({
  type: "system",
  subtype: "task_progress",
  task_id: "w1",
  tool_use_id: "toolu_wf",
  usage: { total_tokens: 0, tool_uses: 0, duration_ms: duration },
  workflow_progress: phases.map((title, i) => ({ type: "workflow_phase", index: i + 1, title })),
})

const workflowTasks = (events: AgentEvent[]): TaskInfo[] =>
  events.flatMap((e) => (e.type === "Task" && e.task.id === "toolu_wf" ? [e.task] : []))

describe("workflow snapshots", () => {
  it("sends the workflow again when a phase changes, and not when a snapshot repeats it", () => {
    const mapper = makeMapper({ sessionId: "s" })
    const map = (frame: object) => workflowTasks(mapper.map(frame as Frame, "run").events)
    map(started)
    expect(map(progress(["Gather", "Report"], 1))[0]?.workflow?.phases).toEqual([
      { index: 1, title: "Gather" },
      { index: 2, title: "Report" },
    ])
    // Same phases, same usage: nothing changed, nothing sent.
    expect(map(progress(["Gather", "Report"], 1))).toEqual([])
    // A usage change alone: the snapshot is sent with the same phases.
    expect(map(progress(["Gather", "Report"], 2))[0]?.workflow?.phases).toHaveLength(2)
    // One title changed, same count: the phases are replaced.
    expect(map(progress(["Gather", "Write"], 2))[0]?.workflow?.phases).toEqual([
      { index: 1, title: "Gather" },
      { index: 2, title: "Write" },
    ])
    expect(map(progress(["Gather", "Write", "Check"], 2))[0]?.workflow?.phases).toHaveLength(3)
    expect(map(progress(["Gather", "Write", "Check"], 2))).toEqual([])
  })
})

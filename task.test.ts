import { describe, expect, it } from "vitest"
import {
  changedSnapshot,
  handBackReport,
  newTaskState,
  sameTask,
  snapshot,
  spawnAnswer,
  taskStatusOf,
  taskTitle,
} from "./task.ts"

describe("task rules", () => {
  it("titles a task by its description, else the prompt's first line", () => {
    expect(taskTitle("Count files", "ignored")).toBe("Count files")
    expect(taskTitle("  ", "\n  First line\nsecond")).toBe("First line")
    expect(taskTitle(undefined, undefined)).toBeUndefined()
  })

  it("maps CLI statuses, a workflow run's `cancelled` among them (the one rule tasks and runs share)", () => {
    expect(
      ["pending", "paused", "running", "completed", "failed", "killed", "stopped", "cancelled", "odd"].map(
        taskStatusOf,
      ),
    ).toEqual([
      "Waiting",
      "Waiting",
      "Running",
      "Completed",
      "Failed",
      "Cancelled",
      "Cancelled",
      "Cancelled",
      undefined,
    ])
  })

  it("summarises: progress while running; then the answer, else the last text, else the error", () => {
    const s = newTaskState("t", "agent")
    s.summary = "Reading files"
    s.lastText = "Last words"
    expect(snapshot(s).summary).toBe("Reading files")
    s.status = "Completed"
    expect(snapshot(s).summary).toBe("Last words")
    s.answer = "The answer"
    expect(snapshot(s).summary).toBe("The answer")
    const f = newTaskState("f", "agent")
    f.status = "Failed"
    f.error = "API error 500"
    f.summary = 'Agent "x" failed'
    expect(snapshot(f).summary).toBe("API error 500")
  })

  it("shows Waiting while an approval is open, never over a terminal status", () => {
    const s = newTaskState("t", "agent")
    s.waiting = true
    expect(snapshot(s).status).toBe("Waiting")
    s.status = "Completed"
    expect(snapshot(s).status).toBe("Completed")
  })

  it("reuses the sent copy of a workflow only while the state holds that same workflow object", () => {
    const s = newTaskState("w", "workflow")
    s.workflow = { phases: [{ index: 1, title: "A" }] }
    const first = changedSnapshot(s)
    expect(first?.workflow).not.toBe(s.workflow)
    s.summary = "moved"
    const second = changedSnapshot(s)
    expect(second?.summary).toBe("moved")
    expect(second?.workflow).toBe(first?.workflow)
    // A replaced workflow (how the mapper changes one) is copied anew and sent.
    s.workflow = {
      ...s.workflow,
      phases: [
        { index: 1, title: "A" },
        { index: 2, title: "B" },
      ],
    }
    const third = changedSnapshot(s)
    expect(third?.workflow?.phases).toEqual([
      { index: 1, title: "A" },
      { index: 2, title: "B" },
    ])
    expect(changedSnapshot(s)).toBeUndefined()
    s.workflow = { ...s.workflow, name: "named" }
    expect(changedSnapshot(s)?.workflow?.name).toBe("named")
  })

  it("sends a snapshot only when it changed, never for a hidden task", () => {
    const s = newTaskState("t", "agent")
    s.title = "T"
    const first = changedSnapshot(s)
    expect(first).toEqual({ id: "t", title: "T", status: "Running" })
    expect(changedSnapshot(s)).toBeUndefined()
    s.usedTokens = 10
    expect(changedSnapshot(s)).toEqual({ id: "t", title: "T", status: "Running", usage: { used_tokens: 10 } })
    s.workflow = { phases: [{ index: 1, title: "A" }] }
    const withWorkflow = changedSnapshot(s)
    ;(s.workflow.phases as unknown[]).length = 0 // the snapshot holds a copy
    expect(withWorkflow?.workflow?.phases).toEqual([{ index: 1, title: "A" }])
    const hidden = newTaskState("h", "agent")
    hidden.hidden = true
    expect(changedSnapshot(hidden)).toBeUndefined()
    expect(sameTask(undefined, { id: "x", title: "x", status: "Running" })).toBe(false)
    expect(
      sameTask(
        { id: "x", title: "x", status: "Running" },
        { id: "x", title: "x", status: "Running", name: "n" },
      ),
    ).toBe(false)
  })

  it("takes a foreground agent's answer from the spawning call, without harness notes", () => {
    const result = {
      status: "completed",
      agentId: "a1",
      content: [
        { type: "text", text: "<tools-used-before-summary>Bash</tools-used-before-summary>\n" },
        { type: "text", text: "There are 3 files." },
      ],
    }
    expect(spawnAnswer(result, "  [Subagent hand-back] …")).toBe("There are 3 files.")
    expect(spawnAnswer({ status: "async_launched", agentId: "a1" }, "Async agent launched")).toBeUndefined()
    expect(spawnAnswer("Error", " plain text ")).toBe("plain text")
  })
})

describe("handBackReport", () => {
  it("takes the agent's report out of the CLI's hand-back framing", () => {
    const framed =
      "  <tools-used-before-summary>Bash</tools-used-before-summary>\n  \n[Subagent hand-back] The text below is the final report. The report follows:\n  There are 1 files.\n  Second line.\nagentId: a816 (use SendMessage…)\n<usage>subagent_tokens: 2671</usage>"
    expect(handBackReport(framed)).toBe("There are 1 files.\nSecond line.")
    expect(handBackReport("<tools-used-before-summary>Read</tools-used-before-summary>\nPlain answer.")).toBe(
      "Plain answer.",
    )
  })
  it("reads a nested agent's result given as a bare content list", () => {
    const framed = "[Subagent hand-back] preface. The report follows:\n  Depth two done.\nagentId: x\n"
    expect(spawnAnswer([{ type: "text", text: framed }], framed)).toBe("Depth two done.")
    expect(spawnAnswer({ status: "async_launched" }, "launched")).toBeUndefined()
  })
})

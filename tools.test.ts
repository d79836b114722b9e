import { describe, expect, it } from "vitest"
import {
  describeToolCall,
  planFromTaskTools,
  planFromTodoWrite,
  resultText,
  TaskList,
  toolResultOf,
} from "./tools.ts"

describe("describeToolCall", () => {
  it("titles a command with the command itself", () => {
    expect(describeToolCall("Bash", { command: "ls -la", description: "List" })).toEqual({
      kind: "execute",
      title: "ls -la",
    })
  })

  it("gives Edit a unified diff of the replaced fragment", () => {
    const d = describeToolCall("Edit", {
      file_path: "/ws/src/a.ts",
      old_string: "const a = 1\n",
      new_string: "const a = 2\n",
    })
    expect(d.kind).toBe("edit")
    expect(d.path).toBe("/ws/src/a.ts")
    expect(d.diff?.split("\n").slice(0, 2)).toEqual(["--- a/ws/src/a.ts", "+++ b/ws/src/a.ts"])
    expect(d.diff).toContain("-const a = 1")
    expect(d.diff).toContain("+const a = 2")
    expect(d.new_text).toBeUndefined()
  })

  it("joins MultiEdit's edits under one header", () => {
    const d = describeToolCall("MultiEdit", {
      file_path: "/ws/b.txt",
      edits: [
        { old_string: "one", new_string: "uno" },
        { old_string: "two", new_string: "dos" },
      ],
    })
    expect(d.diff?.match(/^--- /gm)).toHaveLength(1)
    expect(d.diff?.match(/^@@/gm)).toHaveLength(2)
    expect(d.diff).toContain("+uno")
    expect(d.diff).toContain("+dos")
  })

  it("diffs a NotebookEdit's new source, and shows nothing for a delete", () => {
    const edit = describeToolCall("NotebookEdit", {
      notebook_path: "/ws/n.ipynb",
      cell_id: "c1",
      new_source: "print(1)",
    })
    expect(edit).toMatchObject({ kind: "edit", title: "Edit /ws/n.ipynb (cell c1)", path: "/ws/n.ipynb" })
    expect(edit.diff).toContain("+print(1)")
    expect(
      describeToolCall("NotebookEdit", { notebook_path: "/ws/n.ipynb", edit_mode: "delete", new_source: "" })
        .diff,
    ).toBeUndefined()
  })

  it("gives Write the whole file as new_text", () => {
    expect(describeToolCall("Write", { file_path: "/ws/c.txt", content: "hello\n" })).toEqual({
      kind: "edit",
      title: "Write /ws/c.txt",
      path: "/ws/c.txt",
      new_text: "hello\n",
    })
  })

  it("classifies reads, searches, fetches, tasks and MCP tools", () => {
    expect(describeToolCall("Read", { file_path: "/ws/a" })).toEqual({
      kind: "read",
      title: "Read /ws/a",
      path: "/ws/a",
    })
    expect(describeToolCall("Grep", { pattern: "TODO", path: "src" })).toEqual({
      kind: "search",
      title: "Grep TODO in src",
    })
    expect(describeToolCall("Glob", { pattern: "**/*.ts" })).toEqual({
      kind: "search",
      title: "Glob **/*.ts",
    })
    expect(describeToolCall("WebFetch", { url: "https://example.com", prompt: "x" })).toEqual({
      kind: "fetch",
      title: "https://example.com",
    })
    expect(describeToolCall("Agent", { description: "Count files", prompt: "p" })).toEqual({
      kind: "task",
      title: "Count files",
    })
    expect(describeToolCall("Task", { prompt: "First line\nsecond" })).toEqual({
      kind: "task",
      title: "First line",
    })
    expect(describeToolCall("mcp__convergence__shout", { text: "hi" })).toEqual({
      kind: "mcp",
      title: "shout",
    })
    expect(describeToolCall("TodoWrite", { todos: [] }).kind).toBe("think")
    expect(describeToolCall("SomethingNew", {})).toEqual({ kind: "other", title: "SomethingNew" })
  })

  it("titles a Workflow call with its script's meta description", () => {
    const script =
      "export const meta = {\n  name: 'probe-flow',\n  description: 'Gather facts then report',\n}\n"
    expect(describeToolCall("Workflow", { script })).toEqual({
      kind: "task",
      title: "Gather facts then report",
    })
    expect(describeToolCall("Workflow", { name: "deep-research" })).toEqual({
      kind: "task",
      title: "deep-research",
    })
  })
})

describe("toolResultOf", () => {
  it("reads a failed command's exit code and keeps the whole tool_use_result as output", () => {
    const r = toolResultOf("Exit code 3\nout\nerr", "Error: Exit code 3\nout\nerr", true, "Bash")
    expect(r).toEqual({
      status: "Failed",
      output: "Error: Exit code 3\nout\nerr",
      output_text: "Exit code 3\nout\nerr",
      exit_code: 3,
    })
  })

  it("gives a successful command exit code 0", () => {
    const result = { stdout: "fine", stderr: "", interrupted: false, isImage: false, noOutputExpected: false }
    expect(toolResultOf("fine", result, false)).toEqual({
      status: "Completed",
      output: result,
      output_text: "fine",
      exit_code: 0,
    })
  })

  it("marks an interrupted call Cancelled", () => {
    expect(
      toolResultOf("The user doesn't want to proceed with this tool use.", undefined, true, "Bash").status,
    ).toBe("Cancelled")
    expect(toolResultOf("partial", { stdout: "partial", stderr: "", interrupted: true }, false).status).toBe(
      "Cancelled",
    )
  })

  it("leaves exit codes to commands and falls back to the content as output", () => {
    const r = toolResultOf(
      [
        { type: "text", text: "a" },
        { type: "image", source: {} },
      ],
      undefined,
      false,
      "Read",
    )
    expect(r).toEqual({
      status: "Completed",
      output: [
        { type: "text", text: "a" },
        { type: "image", source: {} },
      ],
      output_text: "a\n[image]",
    })
    expect(resultText(undefined)).toBe("")
  })
})

describe("plans", () => {
  it("maps TodoWrite todos to plan entries", () => {
    expect(
      planFromTodoWrite({
        todos: [
          { content: "A", status: "pending", activeForm: "Doing A" },
          { content: "B", status: "weird" },
        ],
      }),
    ).toEqual([
      { content: "A", status: "pending", active_form: "Doing A" },
      { content: "B", status: "pending" },
    ])
    expect(planFromTodoWrite({})).toBeUndefined()
  })

  it("follows TaskCreate, TaskUpdate (including delete) and TaskList", () => {
    const list = new TaskList()
    expect(
      list.created({ subject: "Read", activeForm: "Reading" }, { task: { id: "1", subject: "Read" } }),
    ).toBe(true)
    expect(list.created({ subject: "Write" }, { task: { id: "2", subject: "Write" } })).toBe(true)
    expect(list.created({ subject: "no id" }, "Error")).toBe(false)
    expect(list.updated({ taskId: "1", status: "in_progress" })).toBe(true)
    expect(list.updated({ taskId: "9", status: "completed" })).toBe(false)
    expect(list.plan()).toEqual([
      { content: "Read", status: "in_progress", active_form: "Reading" },
      { content: "Write", status: "pending" },
    ])
    expect(list.updated({ taskId: "2", status: "deleted" })).toBe(true)
    expect(list.plan().map((e) => e.content)).toEqual(["Read"])
    expect(
      list.listed({
        tasks: [
          { id: "1", subject: "Read", status: "completed" },
          { id: "3", subject: "New", status: "pending" },
        ],
      }),
    ).toBe(true)
    expect(list.plan()).toEqual([
      { content: "Read", status: "completed", active_form: "Reading" },
      { content: "New", status: "pending" },
    ])
    expect(planFromTaskTools([{ id: "x", subject: "S", status: "completed" }])).toEqual([
      { content: "S", status: "completed" },
    ])
  })
})

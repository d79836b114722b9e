/** What each editing tool wrote, read from the CLI's tool results (shapes as 2.1.332 sends them). */
import { describe, expect, it } from "vitest"
import type { ToolCall } from "../sdk/protocol.ts"
import { type Fingerprints, isShort, remember, writtenBy } from "./fingerprints.ts"

const call = (
  name: string,
  input: unknown,
  output: unknown,
  status: ToolCall["status"] = "Completed",
): ToolCall => ({
  id: "t1",
  name,
  kind: "edit",
  title: name,
  input,
  output,
  status,
})

describe("writtenBy", () => {
  it("takes a Write's whole content from the result (testdata/write_edit shape)", () => {
    const result = {
      type: "create",
      filePath: "/ws/notes.md",
      content: "# Notes\n\nline one\n",
      structuredPatch: [],
    }
    expect(writtenBy(call("Write", { file_path: "/ws/notes.md", content: "x" }, result))).toEqual({
      path: "/ws/notes.md",
      lines: ["# Notes", "", "line one", ""],
    })
  })
  it("takes an Edit's + lines from the structured patch", () => {
    const result = {
      filePath: "/ws/notes.md",
      structuredPatch: [
        { oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [" # Notes", "-line two", "+line 2"] },
      ],
    }
    expect(
      writtenBy(call("Edit", { file_path: "/ws/notes.md", new_string: "ignored" }, result))?.lines,
    ).toEqual(["line 2"])
  })
  it("falls back to the input when the result has no patch (MultiEdit's new strings)", () => {
    const input = {
      file_path: "/ws/a.ts",
      edits: [{ old_string: "a", new_string: "b()\nc()" }, { new_string: "d()" }],
    }
    expect(writtenBy(call("MultiEdit", input, "ok"))).toEqual({
      path: "/ws/a.ts",
      lines: ["b()", "c()", "d()"],
    })
  })
  it("takes a NotebookEdit's source also as the JSON lines the notebook stores", () => {
    const lines = writtenBy(
      call("NotebookEdit", { notebook_path: "/ws/n.ipynb", new_source: "x = 1" }, "ok"),
    )?.lines
    expect(lines).toEqual(["x = 1", '"x = 1\\n",'])
  })
  it("takes nothing from a failed call or another tool", () => {
    expect(writtenBy(call("Write", { file_path: "/a", content: "x" }, "denied", "Failed"))).toBeUndefined()
    expect(writtenBy(call("Bash", { command: "echo > a" }, "ok"))).toBeUndefined()
  })
})

describe("remember", () => {
  it("keeps trimmed lines per repository and file, the latest writer owning a line, short lines not at all", () => {
    const prints: Fingerprints = {}
    remember(prints, "/repo", "a.ts", ["  shared()", "}", "", "mine()"], "main")
    remember(prints, "/repo", "a.ts", ["shared()"], "Explore")
    expect(prints).toEqual({ "/repo": { "a.ts": { "shared()": "Explore", "mine()": "main" } } })
  })
  it("counts as short only lines of at most 3 characters with no letter or digit", () => {
    expect(["", "}", "});", "]"].every(isShort)).toBe(true)
    expect(["end", "x", "}}}}", "1"].some(isShort)).toBe(false)
  })
})

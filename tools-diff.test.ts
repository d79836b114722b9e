/**
 * An edit's diff, once the CLI's result is in, is the CLI's own patch of the
 * file: true line numbers, context, indentation. Shapes as CLI 2.1.332 writes
 * an Edit's tool_use_result.
 */
import { describe, expect, it } from "vitest"
import { recordsToItems } from "./records.ts"
import { changedLines, diffOfHunks } from "./sdk/diff.ts"
import { describeToolCall, toolResultOf } from "./tools.ts"

const input = { file_path: "/ws/app.py", old_string: '    print("hi")', new_string: '    print("hello")' }
const result = {
  filePath: "/ws/app.py",
  oldString: input.old_string,
  newString: input.new_string,
  originalFile: 'def main():\n    print("hi")\n    return 0\n',
  structuredPatch: [
    {
      oldStart: 1,
      oldLines: 3,
      newStart: 1,
      newLines: 3,
      lines: [" def main():", '-    print("hi")', '+    print("hello")', "     return 0"],
    },
  ],
  userModified: false,
  replaceAll: false,
}

describe("an edit's diff from the CLI's patch", () => {
  it("the started call's diff counts from the fragment; the finished one has the file's lines and indent", () => {
    expect(describeToolCall("Edit", input).diff).toContain("@@ -1,1 +1,1 @@")
    const finished = toolResultOf("The file has been updated.", result, false, "Edit")
    expect(finished.diff).toBe(
      [
        "--- a/ws/app.py",
        "+++ b/ws/app.py",
        "@@ -1,3 +1,3 @@",
        " def main():",
        '-    print("hi")',
        '+    print("hello")',
        "     return 0",
        "",
      ].join("\n"),
    )
  })

  it("a failed edit, another tool, or a patch of the wrong shape keeps the started diff", () => {
    expect(toolResultOf("error", result, true, "Edit").diff).toBeUndefined()
    expect(toolResultOf("ok", result, false, "Read").diff).toBeUndefined()
    expect(diffOfHunks("/x", [{ oldStart: "1", lines: [] }])).toBeUndefined()
    expect(diffOfHunks("/x", [])).toBeUndefined()
  })

  it("finds where each hunk's change lies in the new file, past its leading context", () => {
    const hunk = (newStart: number, lines: string[]) => ({
      oldStart: newStart,
      oldLines: 0,
      newStart,
      newLines: 0,
      lines,
    })
    expect(changedLines([hunk(1, [" # Notes", " ", " line one", "-line two", "+line 2"])])).toEqual([4])
    expect(changedLines([hunk(7, ["+new"]), hunk(20, [" a", "-gone", " b"])])).toEqual([7, 21])
    expect(changedLines([{ newStart: "1", lines: [] }])).toEqual([])
  })

  it("a stored chat's finished edit carries the same diff", () => {
    const items = recordsToItems([
      {
        type: "assistant",
        uuid: "a1",
        message: { content: [{ type: "tool_use", id: "t1", name: "Edit", input }] },
      },
      {
        type: "user",
        uuid: "u1",
        message: {
          content: [{ type: "tool_result", tool_use_id: "t1", content: "The file has been updated." }],
        },
        toolUseResult: result,
      },
    ])
    const call = items.find((i) => i.type === "tool_call")
    expect(call?.type === "tool_call" && call.call.diff).toContain("@@ -1,3 +1,3 @@\n def main():")
  })
})

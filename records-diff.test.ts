/**
 * A stored Edit whose result carries the CLI's patch never builds the diff of
 * its input's fragments (the patch replaces it), and its item is exactly the
 * one building it first gave, key order included.
 */
import { describe, expect, it, vi } from "vitest"

const built = vi.hoisted(() => ({ diffs: 0 }))
vi.mock("./sdk/diff.ts", async (original) => {
  const real = await original<typeof import("./sdk/diff.ts")>()
  return {
    ...real,
    unifiedDiff: (...args: Parameters<typeof real.unifiedDiff>) => {
      // An empty pair is what describePatchedEdit asks for: nothing to diff.
      if (args[1] !== "" || args[2] !== "") built.diffs++
      return real.unifiedDiff(...args)
    },
  }
})

const { describePatchedEdit, recordsToItems } = await import("./records.ts")
const { describeToolCall, toolResultOf } = await import("./tools.ts")

const input = { file_path: "/ws/a.ts", old_string: "one\ntwo\n", new_string: "one\n2\n" }
const patch = [{ oldStart: 10, oldLines: 2, newStart: 10, newLines: 2, lines: [" one", "-two", "+2"] }]
const useOf = (id: string, name = "Edit", args: unknown = input) => ({
  type: "assistant",
  uuid: `a-${id}`,
  message: { content: [{ type: "tool_use", id, name, input: args }] },
})
const resultOf = (id: string, toolUseResult: unknown, isError = false) => ({
  type: "user",
  uuid: `u-${id}`,
  message: {
    content: [{ type: "tool_result", tool_use_id: id, content: "The file was updated", is_error: isError }],
  },
  toolUseResult,
})
const patched = { filePath: "/ws/a.ts", structuredPatch: patch }

/** The call as the reader built it before: described at its tool_use, the result spread over it. */
const eager = (id: string, name: string, args: unknown, result?: ReturnType<typeof resultOf>) => {
  const call = { id, name, input: args, ...describeToolCall(name, args), status: "Running" }
  if (result === undefined) return { ...call, status: "Cancelled" }
  const [block] = result.message.content
  return { ...call, ...toolResultOf(block?.content, result.toolUseResult, block?.is_error === true, name) }
}

describe("stored edits", () => {
  it("an Edit with the CLI's patch: no diff of its fragments, the item as before", () => {
    const records = [useOf("t1"), resultOf("t1", patched)]
    built.diffs = 0
    const [item] = recordsToItems(records)
    expect(built.diffs).toBe(0)
    expect(item?.type === "tool_call" && item.call.diff).toBe(
      "--- a/ws/a.ts\n+++ b/ws/a.ts\n@@ -10,2 +10,2 @@\n one\n-two\n+2\n",
    )
    expect(JSON.stringify(item?.type === "tool_call" && item.call)).toBe(
      JSON.stringify(eager("t1", "Edit", input, records[1] as ReturnType<typeof resultOf>)),
    )
  })

  it("an Edit without a patch (failed, no result, no hunks), a MultiEdit: the fragments' diff, as before", () => {
    const multi = { file_path: "/ws/b.ts", edits: [{ old_string: "x", new_string: "y" }] }
    const failed = resultOf("t1", patched, true)
    const bare = resultOf("t3", { filePath: "/ws/a.ts" })
    const multiResult = resultOf("t4", { filePath: "/ws/b.ts" })
    const records = [
      useOf("t1"),
      failed,
      useOf("t2"),
      useOf("t3"),
      bare,
      useOf("t4", "MultiEdit", multi),
      multiResult,
    ]
    const items = recordsToItems(records)
    const calls = items.flatMap((i) => (i.type === "tool_call" ? [i.call] : []))
    expect(JSON.stringify(calls)).toBe(
      JSON.stringify([
        eager("t1", "Edit", input, failed),
        eager("t2", "Edit", input),
        eager("t3", "Edit", input, bare),
        eager("t4", "MultiEdit", multi, multiResult),
      ]),
    )
    expect(calls.every((c) => c.diff?.includes("@@"))).toBe(true)
  })

  it("an Edit's kind, title and path do not depend on its fragments (what describePatchedEdit relies on)", () => {
    for (const args of [
      input,
      { file_path: "/x y/ü.md", old_string: "", new_string: "z" },
      {},
      "not an object",
    ]) {
      const { diff: _, ...described } = describeToolCall("Edit", args)
      expect(describePatchedEdit(args)).toEqual(described)
    }
  })
})

/**
 * The Edit diff's fast path is the library's answer: for any path and any
 * two fragments (lines drawn from a small alphabet so that shared lines,
 * empty lines, final line breaks and carriage returns all occur), `editDiff`
 * equals sdk/diff.ts's `unifiedDiff`, and the fast path answers every pair
 * that shares no line.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { disjointEditDiff, editDiff } from "./edit-diff.ts"
import { unifiedDiff } from "./sdk/diff.ts"

const line = fc.oneof(
  fc.constantFrom(
    "",
    "a",
    "b",
    " a",
    "a ",
    "\\ No newline at end of file",
    "--- x",
    "@@ -1 +1 @@",
    "====",
    "Index: x",
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: fc.constantFrom("a", "b", " ", "\r", "\t", "é", "\u2028"), maxLength: 4 }),
)
const fragment = fc
  .tuple(fc.array(line, { maxLength: 6 }), fc.boolean())
  .map(([lines, finalBreak]) => lines.join("\n") + (finalBreak && lines.length > 0 ? "\n" : ""))
const path = fc.oneof(
  fc.constantFrom("/home/dev/ws/notes.md", "", "/", "//x", "a b/c.ts"),
  fc.string({ maxLength: 12 }),
)

describe("an Edit's diff at its start", () => {
  it("equals the library's for any two fragments", () => {
    fc.assert(
      fc.property(path, fragment, fragment, (p, before, after) => {
        expect(editDiff(p, before, after)).toBe(unifiedDiff(p, before, after))
      }),
      { numRuns: 3000 },
    )
  })

  it("takes the fast path for fragments that share no line, and it is the library's answer", () => {
    const distinct = fc
      .tuple(
        fc.uniqueArray(
          fc.string({ maxLength: 8 }).filter((l) => !l.includes("\n") && !l.includes("\r")),
          { maxLength: 8 },
        ),
        fc.nat(),
        fc.boolean(),
        fc.boolean(),
      )
      .map(([lines, cut, endA, endB]) => {
        const at = lines.length === 0 ? 0 : cut % (lines.length + 1)
        const a = lines.slice(0, at)
        const b = lines.slice(at)
        return [
          a.join("\n") + (endA && a.length > 0 ? "\n" : ""),
          b.join("\n") + (endB && b.length > 0 ? "\n" : ""),
        ] as const
      })
    fc.assert(
      fc.property(distinct, ([before, after]) => {
        const fast = disjointEditDiff("/ws/f.txt", before, after)
        expect(fast).toBeDefined()
        expect(fast).toBe(unifiedDiff("/ws/f.txt", before, after))
      }),
      { numRuns: 3000 },
    )
  })

  it("leaves shared lines to the library", () => {
    expect(disjointEditDiff("/f", "a\nb", "a\nc")).toBeUndefined()
    expect(disjointEditDiff("/f", "x", "x")).toBeUndefined()
    expect(disjointEditDiff("/f", "a\r\n", "b\r\n")).toBeUndefined()
  })

  it("writes one line replaced as the library does", () => {
    expect(editDiff("/home/dev/ws/notes.md", "line two", "line 2 (edited)")).toBe(
      "--- a/home/dev/ws/notes.md\n+++ b/home/dev/ws/notes.md\n@@ -1,1 +1,1 @@\n-line two\n\\ No newline at end of file\n+line 2 (edited)\n\\ No newline at end of file\n",
    )
  })
})

/**
 * The attribution rules on hand-built commits: matches by trimmed text,
 * short lines by their neighbours, ranges per agent with their hashes, and
 * the person's lines left out; and the commit patch read from git's output.
 */
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { additionsOf, attributeFile, contentHash } from "./attribute.ts"

const added = (...texts: string[]) => texts.map((text, i) => ({ line: i + 1, text }))

describe("attributeFile", () => {
  it("gives a line to the agent that wrote the same trimmed text; leaves the rest out", () => {
    const ranges = attributeFile(added("  const a = 1", "const person = 2", "const b = 3"), {
      "const a = 1": "main",
      "const b = 3": "main",
    })
    expect(ranges.map((r) => [r.agent, r.start_line, r.end_line])).toEqual([
      ["main", 1, 1],
      ["main", 3, 3],
    ])
  })
  it("lets a short line follow the line before it, else the line after it", () => {
    const prints = { "function f() {": "main", "return 1": "main", "// by the helper": "Explore" }
    const ranges = attributeFile(added("", "function f() {", "return 1", "}", "", "// by the helper"), prints)
    // Line 1 (blank) has no line before: it follows line 2. Lines 4 and 5 follow line 3.
    expect(ranges.map((r) => [r.agent, r.start_line, r.end_line])).toEqual([
      ["main", 1, 5],
      ["Explore", 6, 6],
    ])
  })
  it("never gives a short line on its own, nor one between the person's lines", () => {
    expect(attributeFile(added("}", "", "person()"), { "}": "main", "": "main" })).toEqual([])
    expect(attributeFile(added("person()", "}", "other()"), { "x()": "main" })).toEqual([])
  })
  it("splits ranges where the agent changes and where lines are not consecutive", () => {
    const lines = [
      { line: 3, text: "alpha()" },
      { line: 4, text: "beta()" },
      { line: 9, text: "gamma()" },
    ]
    const ranges = attributeFile(lines, { "alpha()": "main", "beta()": "Explore", "gamma()": "Explore" })
    expect(ranges.map((r) => [r.agent, r.start_line, r.end_line])).toEqual([
      ["main", 3, 3],
      ["Explore", 4, 4],
      ["Explore", 9, 9],
    ])
  })
  it("hashes a range's lines joined by newlines: sha256 and 16 hex digits", () => {
    const [range] = attributeFile(added("one()", "two()"), { "one()": "main", "two()": "main" })
    const expected = createHash("sha256").update("one()\ntwo()").digest("hex").slice(0, 16)
    expect(range?.content_hash).toBe(`sha256:${expected}`)
    expect(contentHash(["one()", "two()"])).toBe(`sha256:${expected}`)
  })
  it("attributes nothing in a file the session never wrote", () => {
    expect(attributeFile(added("one()"), undefined)).toEqual([])
  })
})

describe("additionsOf", () => {
  it("reads the added lines of every file with their new line numbers", () => {
    const patch = [
      "diff --git a/new.txt b/new.txt",
      "new file mode 100644",
      "index 0000000..1111111",
      "--- /dev/null",
      "+++ b/new.txt",
      "@@ -0,0 +1,2 @@",
      "+first",
      "+second",
      "diff --git a/dir/old.ts b/dir/old.ts",
      "index 2222222..3333333 100644",
      "--- a/dir/old.ts",
      "+++ b/dir/old.ts",
      "@@ -3 +3 @@",
      "-was",
      "+now",
      "@@ -10,0 +11,1 @@",
      "+appended",
      "\\ No newline at end of file",
      "diff --git a/gone.txt b/gone.txt",
      "deleted file mode 100644",
      "--- a/gone.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-bye",
      "",
    ].join("\n")
    expect(additionsOf(patch)).toEqual([
      {
        path: "new.txt",
        added: [
          { line: 1, text: "first" },
          { line: 2, text: "second" },
        ],
      },
      {
        path: "dir/old.ts",
        added: [
          { line: 3, text: "now" },
          { line: 11, text: "appended" },
        ],
      },
    ])
  })
})

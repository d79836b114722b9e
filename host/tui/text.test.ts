/**
 * Word wrap for the terminal: at 40 and 120 columns no word is broken
 * except one wider than a row, rows hang under the line's own text (indent,
 * gutter, bullet), wide characters count double, and ANSI styles neither
 * count nor leak into the next row's indent.
 */
import { styleText } from "node:util"
import stringWidth from "string-width"
import { describe, expect, it } from "vitest"
import { stripAnsi, wrapStyled } from "./text.ts"

const ANSWER =
  "Hello! I am the scripted demo model: every answer here comes from testkit/demo.ts, not from Claude. Sign in with npx claude auth login (or set ANTHROPIC_API_KEY) and run npm start again to talk to the real model."

/** Every word of `text` appears whole in the rows (none split across two). */
const wordsWhole = (text: string, rows: ReadonlyArray<string>) => {
  const seen = rows.flatMap((r) => stripAnsi(r).trim().split(/\s+/))
  return text.split(/\s+/).every((w) => seen.includes(w))
}

describe("wrapStyled", () => {
  for (const width of [40, 120]) {
    it(`breaks only between words at ${width} columns, every row within the width`, () => {
      const rows = wrapStyled(ANSWER, width)
      expect(rows.length).toBeGreaterThan(1)
      expect(rows.every((r) => stringWidth(r) <= width)).toBe(true)
      expect(wordsWhole(ANSWER, rows)).toBe(true)
      expect(rows.join(" ")).toBe(ANSWER)
    })
  }

  it("hangs rows under the indent, the bullet or the ⎿ mark, and keeps a subagent's gutter", () => {
    expect(wrapStyled("  ⎿ ✓ Completed · exit 0 and then a few more words here", 30)).toEqual([
      "  ⎿ ✓ Completed · exit 0 and",
      "    then a few more words here",
    ])
    expect(wrapStyled("  12. a numbered item that runs past the width", 24)).toEqual([
      "  12. a numbered item",
      "      that runs past the",
      "      width",
    ])
    expect(wrapStyled("│ │ what the subagent said about hello.py", 24)).toEqual([
      "│ │ what the subagent",
      "│ │ said about hello.py",
    ])
  })

  it("counts wide characters as two columns and cuts only a word wider than the row", () => {
    const rows = wrapStyled("  こんにちは 世界 の みなさん、 今日 は いい 天気 です ね", 18)
    expect(rows.every((r) => stringWidth(r) <= 18)).toBe(true)
    expect(rows[0]).toBe("  こんにちは 世界")
    const long = wrapStyled("see https://example.com/a/very/long/path/that/does/not/fit here", 20)
    expect(long.every((r) => stringWidth(r) <= 20)).toBe(true)
    expect(long[0]).toBe("see")
    expect(long.at(-1)).toMatch(/ here$/)
  })

  it("keeps styles to the words they cover: closed at a break, opened again after the indent", () => {
    const line = `  ${styleText("red", "a red phrase that wraps over the row", { validateStream: false })} plain`
    const rows = wrapStyled(line, 20)
    expect(rows.map(stripAnsi)).toEqual(["  a red phrase that", "  wraps over the row", "  plain"])
    expect(rows.every((r) => stringWidth(r) <= 20)).toBe(true)
    // The second row's indent is not red; its words are.
    expect(rows[1]?.startsWith("  \u001b[31mwraps")).toBe(true)
    expect(rows[0]?.endsWith("\u001b[0m")).toBe(true)
  })

  it("leaves a line that fits, and plain text plain", () => {
    expect(wrapStyled("short", 40)).toEqual(["short"])
    expect(wrapStyled(ANSWER, 40).join("")).not.toContain("\u001b")
  })
})

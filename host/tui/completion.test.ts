/** Tab completion over commands, skills, option values and paths. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { commonPrefix, complete } from "./completion.ts"

const cwd = mkdtempSync(join(tmpdir(), "cvg-complete-"))
mkdirSync(join(cwd, "shots"))
writeFileSync(join(cwd, "shots", "screen.png"), "")
const sources = {
  commands: ["model", "effort", "expand", "quit"],
  skills: ["debug", "demo-summary"],
  args: { model: ["opus", "sonnet", "claude-opus-5-5"] },
  pathArgs: ["image"],
  cwd,
}

describe("tab completion", () => {
  it("completes commands and skills by their start", () => {
    expect(complete("/de", sources)).toEqual([["/debug", "/demo-summary"], "/de"])
    expect(complete("/ex", sources)).toEqual([["/expand"], "/ex"])
    expect(commonPrefix(["/debug", "/demo-summary"])).toBe("/de")
  })

  it("completes an argument from its values, and a path for /image", () => {
    expect(complete("/model so", sources)).toEqual([["sonnet"], "so"])
    expect(complete("/image sh", sources)).toEqual([["shots/"], "sh"])
    expect(complete("/image shots/", sources)).toEqual([["shots/screen.png"], "shots/"])
  })

  it("leaves prompts alone", () => {
    expect(complete("hello wor", sources)).toEqual([[], "hello wor"])
  })
})

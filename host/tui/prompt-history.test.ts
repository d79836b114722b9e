/** The prompt history survives a restart; a damaged line costs only itself. */
import { appendFileSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { appendHistory, loadHistory } from "./prompt-history.ts"

describe("prompt history", () => {
  it("reads back what was appended, oldest first, past a damaged line", () => {
    const file = join(mkdtempSync(join(tmpdir(), "cvg-history-")), "deep", "prompt-history.jsonl")
    expect(loadHistory(file)).toEqual([])
    appendHistory(file, "first prompt")
    appendFileSync(file, "{not json\n")
    appendHistory(file, "/model sonnet")
    appendHistory(file, "   ")
    expect(loadHistory(file)).toEqual(["first prompt", "/model sonnet"])
  })
})

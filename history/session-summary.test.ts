import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { promptOf } from "../records.ts"
import {
  endsFacts,
  headFacts,
  needHeadTitles,
  plainPromptLine,
  summaryOf,
  tailFacts,
  titleOfSidecar,
  titlesIn,
} from "./session-summary.ts"

const bytes = (text: string) => new TextEncoder().encode(text)
const lines = (...records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`
const user = (text: unknown, extra: Record<string, unknown> = {}) => ({
  parentUuid: null,
  isSidechain: false,
  type: "user",
  message: { role: "user", content: text },
  timestamp: "2026-01-02T03:04:05.000Z",
  cwd: "/w",
  gitBranch: "main",
  ...extra,
})

describe("the head", () => {
  it("takes the first prompt's first line, its cwd and the first timestamp", () => {
    const head = lines(
      { type: "queue-operation", operation: "enqueue", timestamp: "2026-01-01T00:00:00.000Z" },
      user("\n\n  Fix the bug  \nmore"),
      { type: "assistant", gitBranch: "feature" },
    )
    expect(headFacts(bytes(head), false)).toEqual({
      sidechain: false,
      prompt: "Fix the bug",
      cwd: "/w",
      created: "2026-01-01T00:00:00.000Z",
    })
  })

  it("skips harness text and takes the prompt after it", () => {
    const head = lines(
      user([{ type: "text", text: "<local-command-caveat>x</local-command-caveat>" }], { isMeta: true }),
      user([{ type: "text", text: "real prompt" }]),
    )
    expect(headFacts(bytes(head), false).prompt).toBe("real prompt")
  })

  it("marks a subagent's transcript", () => {
    expect(headFacts(bytes(lines(user("hi", { isSidechain: true }))), false).sidechain).toBe(true)
  })

  it("takes what a cut head holds of a long prompt: escapes decoded, a split character and a cut escape dropped", () => {
    const full = lines(user(`Ünïcode "quoted" first line\\n${"x".repeat(100)}`))
    const at = full.indexOf("first") + 5
    const cut = bytes(full).subarray(0, new TextEncoder().encode(full.slice(0, at)).length)
    expect(headFacts(cut, true).prompt).toBe('Ünïcode "quoted" first')
    // Cut inside the two bytes of "Ü": nothing half-decoded is kept.
    const start = full.indexOf("Ü")
    const split = bytes(full).subarray(0, new TextEncoder().encode(full.slice(0, start)).length + 1)
    expect(headFacts(split, true).prompt).toBe("")
    // Cut inside an escape (after the backslash of \").
    const esc = full.indexOf('\\"')
    const inEscape = bytes(full).subarray(0, new TextEncoder().encode(full.slice(0, esc + 1)).length)
    expect(headFacts(inEscape, true).prompt).toBe("Ünïcode")
  })
})

describe("the tail", () => {
  const title = (type: "custom-title" | "ai-title", value: string) =>
    type === "custom-title" ? { type, customTitle: value } : { type, aiTitle: value }

  it("finds the last custom and AI titles, the last branch, and the first cwd only when asked", () => {
    const tail = `cut record","gitBranch":"old"}\n${lines(
      title("ai-title", "first ai"),
      title("custom-title", "first custom"),
      { type: "user", cwd: "/a", gitBranch: "b1" },
      title("ai-title", "last ai"),
      title("custom-title", "last custom"),
      { type: "assistant", cwd: "/b", gitBranch: "b2" },
      { type: "last-prompt", lastPrompt: "x" },
    )}`
    expect(tailFacts(bytes(tail), true, false)).toEqual({
      custom: "last custom",
      ai: "last ai",
      branch: "b2",
      whole: false,
    })
    expect(tailFacts(bytes(tail), true, true).cwd).toBe("/a")
  })

  it("does not parse a line the tail's start cut, nor take an empty title", () => {
    const full = lines(title("custom-title", "cut off"), title("ai-title", "   "))
    const cut = bytes(full).subarray(3)
    expect(tailFacts(cut, true, false)).toEqual({ whole: false })
    expect(tailFacts(bytes(full), false, false)).toEqual({ custom: "cut off", whole: true })
  })

  it("reads a title line laid out as the CLI writes it without parsing it, as the parser would", () => {
    const values = ['quote " and \\ slash', "line\nbreak", "é 😀 \u0001", "plain"]
    for (const value of values) {
      const written = `${JSON.stringify(title("custom-title", value)).slice(0, -1)},"sessionId":"s"}`
      const parse = vi.spyOn(JSON, "parse")
      const found = titlesIn(bytes(`${written}\n${JSON.stringify(title("ai-title", value))}\n`), false, false)
      const parsedLines = parse.mock.calls.filter(([t]) => String(t).includes("Title"))
      parse.mockRestore()
      expect(found).toEqual({ custom: value, ai: value })
      expect(parsedLines).toEqual([])
    }
    // Another layout (keys in another order, a title key inside another record) is parsed.
    const other = lines(
      { customTitle: "reordered", type: "custom-title" },
      { type: "user", aiTitle: "not a title" },
    )
    expect(titlesIn(bytes(other), false, false)).toEqual({ custom: "reordered" })
  })

  it("a head searched for titles leaves a line its end cut", () => {
    const head = lines(title("ai-title", "whole"))
    expect(titlesIn(bytes(`${head}{"type":"custom-title","customTitle":"cut`), false, true)).toEqual({
      ai: "whole",
    })
  })
})

describe("the entry", () => {
  const file = { id: "s1", size: 10, mtimeMs: Date.UTC(2026, 0, 2), birthtimeMs: Date.UTC(2026, 0, 1) }
  const head = { sidechain: false, prompt: "prompt", branch: "hb", cwd: "/h" }

  it("titles by priority: title file, custom (tail, then head), AI (tail, then head), prompt", () => {
    const tail = { whole: false, ai: "tail ai" }
    expect(summaryOf(file, head, { custom: "head custom" }, tail, "renamed")?.title).toBe("renamed")
    expect(
      summaryOf(file, head, { custom: "head custom" }, { ...tail, custom: "tc" }, undefined)?.title,
    ).toBe("tc")
    expect(summaryOf(file, head, { custom: "head custom" }, tail, undefined)?.title).toBe("head custom")
    expect(summaryOf(file, head, { ai: "head ai" }, tail, undefined)?.title).toBe("tail ai")
    expect(summaryOf(file, head, { ai: "head ai" }, { whole: false }, undefined)?.title).toBe("head ai")
    expect(summaryOf(file, head, {}, { whole: false }, undefined)?.title).toBe("prompt")
    expect(summaryOf(file, { sidechain: false }, {}, { whole: false }, undefined)).toBeNull()
  })

  it("the tail's branch is newer than the head's; the head's cwd first; created from the file without a timestamp", () => {
    expect(summaryOf(file, head, {}, { whole: false, branch: "tb", cwd: "/t" }, undefined)).toEqual({
      session_id: "s1",
      title: "prompt",
      created_at: "2026-01-01T00:00:00.000Z",
      modified_at: "2026-01-02T00:00:00.000Z",
      size_bytes: 10,
      cwd: "/h",
      branch: "tb",
    })
  })

  it("the head is searched for titles only when the tail has no custom title and does not hold the whole file", () => {
    expect(needHeadTitles({ whole: false })).toBe(true)
    expect(needHeadTitles({ whole: true })).toBe(false)
    expect(needHeadTitles({ whole: false, custom: "c" })).toBe(false)
  })

  it("reads a rename's title file, and nothing from a damaged one", () => {
    expect(titleOfSidecar('{"customTitle":"Mine"}')).toBe("Mine")
    expect(titleOfSidecar("{bad")).toBeUndefined()
    expect(titleOfSidecar(null)).toBeUndefined()
  })
})

describe("both ends", () => {
  const head = bytes(
    lines(
      user("prompt", { cwd: undefined }),
      { type: "ai-title", aiTitle: "head ai" },
      { gitBranch: "head-branch" },
    ),
  )
  const tailOf = (...records: unknown[]) => bytes(`cut","x":1}\n${lines(...records)}`)

  it("the head's branch and titles when the tail has none, the tail's cwd when the head has none", () => {
    const facts = endsFacts(head, tailOf({ type: "user", cwd: "/t" }), 10_000)
    expect(facts.head.branch).toBe("head-branch")
    expect(facts.headTitles).toEqual({ ai: "head ai" })
    expect(facts.tail.cwd).toBe("/t")
  })

  it("the tail's branch and custom title make the head's unneeded", () => {
    const facts = endsFacts(
      head,
      tailOf({ type: "custom-title", customTitle: "mine" }, { gitBranch: "tail-branch" }),
      10_000,
    )
    expect(facts.head.branch).toBeUndefined()
    expect(facts.headTitles).toEqual({})
    expect(facts.tail).toMatchObject({ custom: "mine", branch: "tail-branch" })
  })

  it("stops at a sidechain", () => {
    const facts = endsFacts(
      bytes(lines(user("x", { isSidechain: true }))),
      tailOf({ gitBranch: "b" }),
      10_000,
    )
    expect(facts.head.sidechain).toBe(true)
    expect(facts.tail.branch).toBeUndefined()
  })
})

describe("a prompt's line read without parsing it", () => {
  const answerOf = (line: string) => {
    const b = bytes(line)
    return plainPromptLine(b, 0, b.length)
  }

  it("answers as the parser does for every user line of the recorded transcripts, and declines what it cannot be sure of", () => {
    const root = join(import.meta.dirname, "..", "testdata")
    const userLines = readdirSync(root, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".jsonl") && f.includes("projects"))
      .flatMap((f) => readFileSync(join(root, f), "utf8").split("\n"))
      .filter((l) => l.includes('"type":"user"'))
    let answered = 0
    for (const line of userLines) {
      const plain = answerOf(line)
      if (plain === undefined) continue
      answered++
      const record = JSON.parse(line)
      expect(plain.prompt).toBe(promptOf(record)?.text)
      expect(plain.cwd).toBe(record.cwd)
      expect(record.isSidechain).toBe(false)
    }
    // Typed prompts are the usual case; tool results, meta lines and notifications are declined.
    expect(answered).toBeGreaterThan(20)
    expect(answered).toBeLessThan(userLines.length)
  })

  const prompt = (content: unknown, extra = "") =>
    `{"parentUuid":null,"isSidechain":false${extra},"type":"user","message":{"role":"user","content":${JSON.stringify(content)}},"uuid":"u","cwd":"/w"}`

  it("takes a string or one text block, escapes decoded", () => {
    expect(answerOf(prompt('say "hi"\n'))).toEqual({ prompt: 'say "hi"\n', cwd: "/w" })
    expect(answerOf(prompt([{ type: "text", text: "é\\" }]))).toEqual({ prompt: "é\\", cwd: "/w" })
  })

  it("declines markup, two blocks, an image, blank text, meta and sidechain records", () => {
    expect(answerOf(prompt("<command-name>/x</command-name>"))).toBeUndefined()
    expect(
      answerOf(
        prompt([
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ]),
      ),
    ).toBeUndefined()
    expect(answerOf(prompt([{ type: "image", source: {} }]))).toBeUndefined()
    expect(answerOf(prompt("  "))).toBeUndefined()
    expect(answerOf(prompt("x", ',"isMeta":false'))).toBeUndefined()
    expect(answerOf(prompt("x").replace('"isSidechain":false', '"isSidechain":true'))).toBeUndefined()
    expect(answerOf(prompt('text that says "isMeta":true'))).toEqual({
      prompt: 'text that says "isMeta":true',
      cwd: "/w",
    })
  })
})

/**
 * What a list's summaries hold in memory: the values cut out of each file's
 * two ends, never the ends themselves (a view into a decoded end keeps the
 * whole end alive). Measured as the heap after a full collection, the ends'
 * bytes dropped and only the facts kept.
 */
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { describe, expect, it } from "vitest"
import { endsFacts } from "./session-summary.ts"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const FILES = 400
const END_BYTES = 32 * 1024
const encoder = new TextEncoder()

/** One file's ends: a typed prompt, a title, a branch and a cwd, each end padded with a long line to END_BYTES. */
const endsOf = (i: number, accent: string) => {
  const filler = (n: number) => `${JSON.stringify({ type: "attachment", text: "w".repeat(n) })}\n`
  const prompt = `${JSON.stringify({
    parentUuid: null,
    isSidechain: false,
    type: "user",
    message: { role: "user", content: `prompt number ${i} ${accent} that is long enough to be a view` },
    timestamp: "2026-01-02T03:04:05.000Z",
    cwd: `/home/dev/code/project-${i}`,
  })}\n`
  const last = `${JSON.stringify({ type: "ai-title", aiTitle: `the title of session number ${i} ${accent}` })}\n${JSON.stringify({ type: "assistant", gitBranch: `feature/branch-${i}` })}\n`
  const head = prompt + filler(END_BYTES - prompt.length - 40)
  const tail = `${filler(END_BYTES - last.length - 40)}${last}`
  return { head: encoder.encode(head), tail: encoder.encode(tail) }
}

const heap = () => {
  gc()
  return process.memoryUsage().heapUsed
}

describe("a list's summaries in memory", () => {
  it.each([
    ["plain text", ""],
    ["text with non-ASCII characters", "é 😀"],
  ])("hold the values cut from the ends, not the ends (%s)", (_, accent) => {
    let ends: { head: Uint8Array; tail: Uint8Array }[] | undefined = Array.from({ length: FILES }, (_, i) =>
      endsOf(i, accent),
    )
    const before = heap()
    const facts = ends.map((e) => endsFacts(e.head, e.tail, 10 * END_BYTES))
    ends = undefined
    const held = heap() - before
    expect(facts[7]?.head.prompt).toBe(`prompt number 7 ${accent} that is long enough to be a view`.trim())
    expect(facts[7]?.tail).toMatchObject({
      ai: `the title of session number 7 ${accent}`,
      branch: "feature/branch-7",
    })
    expect(facts[7]?.head).toMatchObject({
      cwd: "/home/dev/code/project-7",
      created: "2026-01-02T03:04:05.000Z",
    })
    // The ends are 25 MB of text (in one or two bytes a character); the values, well under 1 KB a file.
    expect(held).toBeLessThan(FILES * 2048)
  })
})

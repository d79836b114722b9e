import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { join, relative } from "node:path"
import { describe, expect, it } from "vitest"
import { SCENARIOS } from "./scenarios.ts"
import {
  DROP_ATTACHMENT_TYPES,
  DROP_RECORD_TYPES,
  encodePath,
  findLeaks,
  makePathMap,
  replacePaths,
  SYSTEM_PROMPT_MARKERS,
  scrubJsonl,
} from "./scrub.ts"

const TESTDATA = join(import.meta.dirname, "..", "testdata")

function files(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n)
    return statSync(p).isDirectory() ? files(p) : [p]
  })
}

describe("scrub", () => {
  const sb = {
    root: "/tmp/cvg-tk-x-AbC123",
    home: "/tmp/cvg-tk-x-AbC123/home",
    ws: "/tmp/cvg-tk-x-AbC123/ws",
    tmp: "/tmp/cvg-tk-x-AbC123/tmp",
    bin: "/tmp/cvg-tk-x-AbC123/bin",
  }
  const map = makePathMap(sb)

  it("maps sandbox paths and their encoded project folder names to placeholders", () => {
    expect(replacePaths(`${sb.ws}/notes.md`, map)).toBe("/home/dev/ws/notes.md")
    expect(replacePaths(`${sb.home}/.claude/projects/${encodePath(sb.ws)}/s.jsonl`, map)).toBe(
      "/home/dev/.claude/projects/-home-dev-ws/s.jsonl",
    )
    expect(replacePaths(`${sb.tmp}/claude-0/${encodePath(sb.ws)}/x`, map)).toBe(
      "/tmp/cvg/claude-0/-home-dev-ws/x",
    )
  })

  it("leaves a content-free stub of a dropped chain link, so the chain has no hole", () => {
    const lines = [
      {
        parentUuid: null,
        isSidechain: false,
        type: "user",
        uuid: "u1",
        message: { role: "user", content: "hi" },
      },
      {
        parentUuid: "u1",
        isSidechain: false,
        attachment: { type: "prompt_snapshot", text: "You are Claude Code", tools: ["x"] },
        type: "attachment",
        uuid: "p1",
        timestamp: "2026-01-01T00:00:00.000Z",
        rendered: "system text",
        cwd: sb.ws,
        sessionId: "s1",
      },
      { type: "api-request", sessionId: "s1", id: "r1" },
      { parentUuid: "p1", isSidechain: false, type: "assistant", uuid: "a1", message: { content: [] } },
    ]
    const text = scrubJsonl(lines.map((l) => JSON.stringify(l)).join("\n"), map)
    const out = text
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(out.map((r) => r.uuid)).toEqual(["u1", "p1", "a1"])
    // Only the links and stamps, in the CLI's key order; the api-request (no uuid) is gone.
    expect(text.split("\n")[1]).toBe(
      '{"parentUuid":"u1","isSidechain":false,"attachment":{"type":"scrubbed"},"type":"attachment","uuid":"p1","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1"}',
    )
    expect(findLeaks(text)).toEqual([])
    // Every parent named is in the file.
    const uuids = new Set(out.map((r) => r.uuid))
    for (const r of out) if (r.parentUuid !== null) expect(uuids.has(r.parentUuid)).toBe(true)
  })

  it("drops system-prompt records and blanks rendered text", () => {
    const lines = [
      { type: "user", cwd: sb.ws, message: { role: "user", content: "hi" } },
      { type: "api-request-shape", system: "You are Claude Code" },
      { type: "api-request-blob", data: "x" },
      { type: "api-request", x: 1 },
      { type: "attachment", attachment: { type: "prompt_snapshot", text: "x" } },
      { type: "attachment", attachment: { type: "date" }, rendered: [{ content: "<system-reminder>x" }] },
      { type: "assistant", message: { content: [{ type: "text", text: "You are an interactive agent" }] } },
    ]
    const out = scrubJsonl(lines.map((l) => JSON.stringify(l)).join("\n"), map)
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
    expect(out.map((r) => r.type)).toEqual(["user", "attachment", "assistant"])
    expect(out[0].cwd).toBe("/home/dev/ws")
    expect(out[1].rendered[0].content).toMatch(/^«redacted: \d+ chars»$/)
    expect(out[2].message.content[0].text).toMatch(/^«redacted/)
    expect(findLeaks(out.map((r) => JSON.stringify(r)).join("\n"))).toEqual([])
  })
})

describe("testdata/ holds no system prompt", () => {
  const all = files(TESTDATA)
  it("has recordings", () => {
    expect(all.some((f) => f.endsWith("stdout.jsonl"))).toBe(true)
  })
  it.each(all.filter((f) => /\.(jsonl|json)$/.test(f)).map((f) => relative(TESTDATA, f)))("%s", (rel) => {
    const text = readFileSync(join(TESTDATA, rel), "utf8")
    for (const m of SYSTEM_PROMPT_MARKERS) expect(text.includes(m), m).toBe(false)
    if (!rel.endsWith(".jsonl")) return
    for (const line of text.split("\n")) {
      if (!line.trim()) continue
      const rec = JSON.parse(line) as { type?: string; attachment?: { type?: string } }
      expect(DROP_RECORD_TYPES).not.toContain(rec.type)
      if (rec.type === "attachment") expect(DROP_ATTACHMENT_TYPES).not.toContain(rec.attachment?.type)
    }
  })
})

describe("testdata/ transcripts recorded by the recorder keep whole chains", () => {
  // Scrubbed records leave stubs: every parentUuid names a record of the same file.
  const transcripts = SCENARIOS.flatMap((def) =>
    files(join(TESTDATA, def.name, "projects")).filter(
      (f) => f.endsWith(".jsonl") && !f.endsWith("journal.jsonl"),
    ),
  )
  it("has recorded transcripts", () => {
    expect(transcripts.length).toBeGreaterThan(SCENARIOS.length)
  })
  it.each(transcripts.map((f) => relative(TESTDATA, f)))("%s", (rel) => {
    const records = readFileSync(join(TESTDATA, rel), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as { uuid?: string; parentUuid?: string | null })
    const uuids = new Set(records.map((r) => r.uuid))
    const missing = records.filter((r) => typeof r.parentUuid === "string" && !uuids.has(r.parentUuid))
    expect(missing.map((r) => r.parentUuid)).toEqual([])
  })
})

/**
 * The Agent Trace 0.1 check: a valid record passes, and each rule of the
 * published JSON Schema (schemas/trace-record.json) refuses a record that
 * breaks it, naming the field.
 */
import { describe, expect, it } from "vitest"
import { checkRecord } from "./schema.ts"

const valid = () => ({
  version: "0.1",
  id: "550e8400-e29b-41d4-a716-446655440000",
  timestamp: "2026-01-23T14:30:00Z",
  vcs: { type: "git", revision: "a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0" },
  tool: { name: "claude-code", version: "2.1.332" },
  files: [
    {
      path: "src/app.ts",
      conversations: [
        {
          url: "cvg://session/s1",
          contributor: { type: "ai", model_id: "anthropic/claude-opus-5-5" },
          ranges: [{ start_line: 1, end_line: 3, content_hash: "sha256:0123456789abcdef" }],
          related: [{ type: "parent", url: "cvg://session/s1" }],
        },
      ],
    },
  ],
  metadata: { "dev.convergence.claude": { method: "line-fingerprint" } },
})

type Rec = ReturnType<typeof valid> & Record<string, unknown>

/** The problems of a record changed by `edit`. */
const problemsOf = (edit: (r: Rec) => void): string[] => {
  const record = valid() as Rec
  edit(record)
  const checked = checkRecord(record)
  return checked.ok ? [] : checked.problems
}

const conversation = (r: Rec) =>
  r.files[0]!.conversations[0]! as Record<string, unknown> & {
    ranges: Array<Record<string, unknown>>
    contributor: Record<string, unknown>
    related: Array<Record<string, unknown>>
  }

describe("Agent Trace 0.1 schema", () => {
  it("accepts a full record, and the specification's minimal one (with a major.minor version)", () => {
    expect(checkRecord(valid()).ok).toBe(true)
    expect(
      checkRecord({
        version: "0.1",
        id: "550e8400-e29b-41d4-a716-446655440000",
        timestamp: "2026-01-25T10:00:00Z",
        files: [{ path: "src/app.ts", conversations: [{ contributor: { type: "ai" }, ranges: [] }] }],
      }).ok,
    ).toBe(true)
  })
  it.each(["version", "id", "timestamp", "files"])("refuses a record without %s", (field) => {
    expect(problemsOf((r) => delete r[field]).join()).toMatch(field)
  })
  it("refuses a version that is not major.minor (the README's own 0.1.0 included)", () => {
    expect(problemsOf((r) => (r.version = "0.1.0")).join()).toMatch(/^version/)
    expect(problemsOf((r) => (r.version = "one")).join()).toMatch(/^version/)
  })
  it("refuses an id that is no RFC 4122 uuid", () => {
    expect(problemsOf((r) => (r.id = "550e8400-e29b-41d4-a716-44665544000")).join()).toMatch(/^id/)
    expect(problemsOf((r) => (r.id = "550e8400-e29b-41d4-c716-446655440000")).join()).toMatch(/^id/)
  })
  it("refuses a timestamp that is not RFC 3339 in UTC", () => {
    expect(problemsOf((r) => (r.timestamp = "2026-01-23 14:30:00")).join()).toMatch(/^timestamp/)
    expect(problemsOf((r) => (r.timestamp = "2026-01-23T14:30:00+01:00")).join()).toMatch(/^timestamp/)
    expect(problemsOf((r) => (r.timestamp = "2026-02-30T14:30:00Z")).join()).toMatch(/^timestamp/)
  })
  it("refuses an unknown vcs type, and a vcs without its revision", () => {
    expect(problemsOf((r) => (r.vcs.type = "cvs")).join()).toMatch(/^vcs\.type/)
    expect(problemsOf((r) => delete (r.vcs as Record<string, unknown>).revision).join()).toMatch(
      /^vcs\.revision/,
    )
  })
  it("refuses a tool without its name or its version", () => {
    expect(problemsOf((r) => delete (r.tool as Record<string, unknown>).version).join()).toMatch(
      /^tool\.version/,
    )
    expect(problemsOf((r) => delete (r.tool as Record<string, unknown>).name).join()).toMatch(/^tool\.name/)
  })
  it("refuses a file without its path or its conversations", () => {
    expect(problemsOf((r) => delete (r.files[0] as Record<string, unknown>).path).join()).toMatch(
      /^files\.0\.path/,
    )
    expect(problemsOf((r) => delete (r.files[0] as Record<string, unknown>).conversations).join()).toMatch(
      /^files\.0\.conversations/,
    )
  })
  it("refuses a conversation without ranges, or with a url that is no URI", () => {
    expect(problemsOf((r) => delete (conversation(r) as Record<string, unknown>).ranges).join()).toMatch(
      /conversations\.0\.ranges/,
    )
    expect(problemsOf((r) => (conversation(r).url = "not a uri")).join()).toMatch(/conversations\.0\.url/)
  })
  it("refuses a related resource without its type or with a url that is no URI", () => {
    expect(problemsOf((r) => delete conversation(r).related[0]!.type).join()).toMatch(/related\.0\.type/)
    expect(problemsOf((r) => (conversation(r).related[0]!.url = "parent")).join()).toMatch(/related\.0\.url/)
  })
  it("refuses an unknown contributor type, and a model id longer than 250 characters", () => {
    expect(problemsOf((r) => (conversation(r).contributor.type = "robot")).join()).toMatch(
      /contributor\.type/,
    )
    expect(problemsOf((r) => (conversation(r).contributor.model_id = "m".repeat(251))).join()).toMatch(
      /contributor\.model_id/,
    )
  })
  it("refuses a range whose lines are not whole numbers from 1", () => {
    expect(problemsOf((r) => (conversation(r).ranges[0]!.start_line = 0)).join()).toMatch(/start_line/)
    expect(problemsOf((r) => (conversation(r).ranges[0]!.end_line = 2.5)).join()).toMatch(/end_line/)
    expect(problemsOf((r) => delete conversation(r).ranges[0]!.end_line).join()).toMatch(/end_line/)
  })
  it("refuses a range whose content hash or contributor is of the wrong kind", () => {
    expect(problemsOf((r) => (conversation(r).ranges[0]!.content_hash = 12)).join()).toMatch(/content_hash/)
    expect(problemsOf((r) => (conversation(r).ranges[0]!.contributor = { model_id: "x" })).join()).toMatch(
      /ranges\.0\.contributor\.type/,
    )
  })
  it("refuses metadata that is not an object", () => {
    expect(problemsOf((r) => ((r as Record<string, unknown>).metadata = ["x"])).join()).toMatch(/^metadata/)
  })
  it("refuses fields the schema does not name, at every level (every object is closed)", () => {
    expect(problemsOf((r) => (r.extra = 1)).join()).toMatch(/extra/)
    expect(problemsOf((r) => ((r.vcs as Record<string, unknown>).branch = "main")).join()).toMatch(/branch/)
    expect(problemsOf((r) => ((r.files[0] as Record<string, unknown>).lines = 3)).join()).toMatch(/lines/)
    expect(problemsOf((r) => (conversation(r).title = "x")).join()).toMatch(/title/)
    expect(problemsOf((r) => (conversation(r).ranges[0]!.text = "x")).join()).toMatch(/text/)
  })
})

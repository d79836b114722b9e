/** A commit's record: one conversation per agent, links, metadata, and a record that passes the schema. */
import { describe, expect, it } from "vitest"
import { buildRecord, CLI_SESSION_URL, conversationUrl, METADATA_KEY } from "./record.ts"
import { checkRecord } from "./schema.ts"

const base = {
  id: "550e8400-e29b-41d4-a716-446655440000",
  timestamp: "2026-12-01T09:00:00.123Z",
  revision: "a".repeat(40),
  sessionId: "s 1",
  toolVersion: "2.1.332",
  agents: { main: { model: "claude-opus-5-5" }, Explore: { model: "claude-haiku-5-5" } },
}
const range = (agent: string, start: number, end: number) => ({
  agent,
  start_line: start,
  end_line: end,
  content_hash: "sha256:0123456789abcdef",
})

describe("buildRecord", () => {
  it("makes one conversation per agent, main first, a subagent linked to its parent, and passes the schema", () => {
    const record = buildRecord({
      ...base,
      files: [
        { path: "a.ts", ranges: [range("Explore", 5, 6), range("main", 1, 2), range("main", 8, 8)] },
        { path: "person.ts", ranges: [] },
      ],
    })
    expect(checkRecord(record).ok).toBe(true)
    expect(record?.files.map((f) => f.path)).toEqual(["a.ts"])
    const [main, sub] = record?.files[0]?.conversations ?? []
    expect(main).toEqual({
      url: "cvg://session/s%201",
      contributor: { type: "ai", model_id: "anthropic/claude-opus-5-5" },
      ranges: [
        { start_line: 1, end_line: 2, content_hash: "sha256:0123456789abcdef" },
        { start_line: 8, end_line: 8, content_hash: "sha256:0123456789abcdef" },
      ],
    })
    expect(sub).toMatchObject({
      url: "cvg://session/s%201?agent=Explore",
      contributor: { type: "ai", model_id: "anthropic/claude-haiku-5-5" },
      related: [{ type: "parent", url: conversationUrl("s 1", "main") }],
    })
    expect(record?.vcs).toEqual({ type: "git", revision: "a".repeat(40) })
    expect(record?.tool).toEqual({ name: "claude-code", version: "2.1.332" })
    expect(record?.metadata?.[METADATA_KEY]).toEqual({
      method: "line-fingerprint",
      session: "s 1",
      agents: [
        {
          name: "Explore",
          url: "cvg://session/s%201?agent=Explore",
          model: "claude-haiku-5-5",
          parent: "main",
        },
        { name: "main", url: "cvg://session/s%201", model: "claude-opus-5-5" },
      ],
    })
  })
  it("makes no record for a commit without a line of the session's", () => {
    expect(buildRecord({ ...base, files: [{ path: "a.ts", ranges: [] }] })).toBeUndefined()
  })
  it("leaves the model out when it is not known", () => {
    const record = buildRecord({
      ...base,
      agents: {},
      files: [{ path: "a.ts", ranges: [range("main", 1, 1)] }],
    })
    expect(record?.files[0]?.conversations[0]?.contributor).toEqual({ type: "ai" })
    expect(checkRecord(record).ok).toBe(true)
  })
  it("names the CLI's own session when the plugin's hooks make the record", () => {
    const record = buildRecord({
      ...base,
      sessionUrl: CLI_SESSION_URL,
      files: [{ path: "a.ts", ranges: [range("main", 1, 1), range("Explore", 3, 3)] }],
    })
    expect(checkRecord(record).ok).toBe(true)
    expect(record?.files[0]?.conversations.map((c) => [c.url, c.related])).toEqual([
      ["claude-code://session/s%201", undefined],
      ["claude-code://session/s%201?agent=Explore", [{ type: "parent", url: "claude-code://session/s%201" }]],
    ])
  })
})

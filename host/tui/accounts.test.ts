/** `/account add` words into a stored entry, checked by the plugin's own rule; `/plugins` from the manifest. */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseManifest } from "../core/manifest.ts"
import { parseAccountAdd } from "./accounts.ts"
import { grantLines } from "./plugins.ts"
import manifestJson from "../../plugin.manifest.json" with { type: "json" }

const parse = (line: string) => parseAccountAdd(line.split(" "))

describe("/account add", () => {
  it("makes a proxy account from a key and a base URL, and a login account from a config dir", () => {
    expect(parse("work --name Work --api-key sk-1 --base-url http://127.0.0.1:9")).toEqual(
      Result.succeed({
        id: "work",
        name: "Work",
        env: { ANTHROPIC_API_KEY: "sk-1", ANTHROPIC_BASE_URL: "http://127.0.0.1:9" },
      }),
    )
    expect(parse("second --config-dir ~/.claude-second")).toEqual(
      Result.succeed({ id: "second", configDir: "~/.claude-second" }),
    )
  })

  it("refuses what the plugin would refuse, each with a reason", () => {
    const why = (line: string) => {
      const r = parse(line)
      return Result.isFailure(r) ? r.failure : "accepted"
    }
    expect(why("claude --api-key k")).toContain('the id "claude" is the default account\'s')
    expect(why("bad/id --api-key k")).toContain("id may hold only letters")
    expect(why("x")).toContain("say how it signs in")
    expect(why("x --config-dir d --api-key k")).toContain("not both")
    expect(why("x --base-url ftp://h")).toContain("not an http(s) URL")
  })
})

describe("/plugins", () => {
  it("lists every grant of the manifest with its reason", () => {
    const lines = grantLines(parseManifest(manifestJson))
    expect(lines.map((l) => l.grant)).toEqual([
      "agents.provide",
      "process",
      "fs.read",
      "fs.read",
      "fs.read",
      "fs.read",
      "fs.read",
      "fs.read",
      "env",
    ])
    expect(lines[1]?.what).toMatch(/^commands claude, npm, git\n/)
    expect(lines[1]?.what).toContain("npm only: view @anthropic-ai/claude-code version")
    expect(lines[1]?.what).toContain("may set CLAUDE_*")
    expect(lines[2]).toMatchObject({ what: "~/.claude/**" })
    expect(lines.every((l) => l.reason.length > 10)).toBe(true)
  })
})

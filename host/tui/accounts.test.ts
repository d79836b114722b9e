/** `/account add` words into a stored entry, checked by the plugin's own rule; `/plugins` from the manifest. */
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { parseManifest } from "../core/manifest.ts"
import { parseAccountAdd } from "./accounts.ts"
import { grantGroups, pluginLines } from "./plugins.ts"
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
  it("groups the grants by what they let the plugin do, each with its reasons; the patterns on request", () => {
    const manifest = parseManifest(manifestJson)
    const groups = grantGroups(manifest)
    expect(groups.map((g) => g.title.split(/[ :(]/)[0])).toEqual(["provide", "run", "read", "read"])
    expect(groups[1]?.title).toMatch(
      /^run claude, npm, git \(\d+ argument patterns; may set \d+ variables\)$/,
    )
    expect(groups[1]?.details).toContain("npm view @anthropic-ai/claude-code version")
    expect(groups[2]?.title).toContain("~/.claude/**")
    expect(groups[2]?.reasons).toHaveLength(6)
    expect(groups.flatMap((g) => g.reasons).every((r) => r.length > 10)).toBe(true)
    const plain = (_f: unknown, text: string) => text
    const short = pluginLines(manifest, plain)
    // Each group and its reasons, not every pattern: the view stays short.
    expect(short.length).toBeLessThan(20)
    expect(short.join("\n")).not.toContain("rev-parse")
    expect(pluginLines(manifest, plain, { details: true }).join("\n")).toContain("git -C * rev-parse")
  })
})

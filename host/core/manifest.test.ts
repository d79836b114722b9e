import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { HOST_API_VERSION, loadManifest, ManifestError, parseManifest, satisfies } from "./manifest.ts"

const repoRoot = join(import.meta.dirname, "../..")

describe("manifest", () => {
  it("loads the repo's plugin.manifest.json with its grants", async () => {
    const manifest = await loadManifest(repoRoot)
    expect(manifest.id).toBe("convergence/claude")
    expect(manifest.main).toBe("main.ts")
    expect(satisfies(HOST_API_VERSION, manifest.pluginApi)).toBe(true)
    expect(manifest.grants.process?.commands).toEqual(["claude", "npm", "git"])
    expect(manifest.grants["agents.provide"]).toBeDefined()
    expect(manifest.grants.env?.names).toEqual(["HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_*", "API_TIMEOUT_MS"])
    expect(manifest.grants["fs.read"]?.map((s) => s.scope)).toEqual([
      "~/.claude/**",
      "~/.agents/skills/**",
      "workspace",
      "data",
      "/Library/Application Support/ClaudeCode/managed-settings.json",
      "/etc/claude-code/managed-settings.json",
    ])
  })

  const base = { id: "a/b", version: "1.0.0", main: "main.ts", pluginApi: ">=2 <3", grants: {} }

  it("rejects a plugin API range this host does not implement", () => {
    expect(() => parseManifest({ ...base, pluginApi: ">=3" })).toThrow(ManifestError)
    expect(() => parseManifest({ ...base, pluginApi: ">=3" })).toThrow(
      /needs plugin API >=3; this host implements 2/,
    )
    expect(parseManifest({ ...base, pluginApi: "^2" }).id).toBe("a/b")
  })

  it("rejects a malformed manifest and keeps unknown fields", () => {
    expect(() => parseManifest({ ...base, id: "no-owner" })).toThrow(/id/)
    expect(() => parseManifest({ ...base, main: "../escape.ts" })).toThrow(/main/)
    expect(() => parseManifest({ ...base, grants: { process: { commands: "claude" } } })).toThrow(
      ManifestError,
    )
    expect(parseManifest({ ...base, icon: "icon.svg" })).toMatchObject({ icon: "icon.svg" })
    expect(parseManifest({ ...base, grants: undefined }).grants).toEqual({})
  })

  it("range checks", () => {
    expect(satisfies(2, ">=2 <3")).toBe(true)
    expect(satisfies(3, ">=2 <3")).toBe(false)
    expect(satisfies(1, ">=2 <3")).toBe(false)
    expect(satisfies("2.5.1", "^2.1")).toBe(true)
    expect(satisfies("2.0.0", "^2.1")).toBe(false)
    expect(satisfies(2, "2.x")).toBe(true)
    expect(satisfies(2, "2")).toBe(true)
    expect(satisfies(4, ">=2 <3 || >=4")).toBe(true)
    expect(satisfies(2, "*")).toBe(true)
    expect(satisfies(2, "nonsense")).toBe(false)
  })
})

/**
 * The plugin folder's manifests, as each client reads them: Claude Code's
 * `.claude-plugin/plugin.json` and hooks, the Agent Plugins 1.0.0
 * `plugin.json` (valid against the published schema, an unchanged copy in
 * agent-plugins-1.0.0/), the marketplace at the repository root, and the
 * skill (Agent Skills front matter). Versions and names agree everywhere.
 * `claude plugin validate` runs in e2e/trace-plugin.e2e.test.ts, on each CLI.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Ajv2020 } from "ajv/dist/2020.js"
import { describe, expect, it } from "vitest"
import { parse as parseYaml } from "yaml"
import { BUNDLE, root } from "../../scripts/build-trace-plugin.ts"

const folder = join(root, "agent-trace-plugin")
const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>
const agentPlugin = json(join(folder, "plugin.json"))
const claudePlugin = json(join(folder, ".claude-plugin/plugin.json"))
const marketplace = json(join(root, ".claude-plugin/marketplace.json")) as {
  name: string
  plugins: Array<{ name: string; source: string; version?: string }>
}

const validator = () => {
  const schema = json(join(import.meta.dirname, "agent-plugins-1.0.0/plugin.schema.json"))
  return new Ajv2020({ strict: true, allErrors: true }).compile(schema)
}

describe("the Agent Plugins 1.0.0 manifest (plugin.json)", () => {
  it("is valid against the published schema, which refuses what it should", () => {
    const validate = validator()
    expect(validate(agentPlugin), JSON.stringify(validate.errors)).toBe(true)
    expect(agentPlugin.$schema).toBe("https://agent-plugins.org/schemas/1.0.0/plugin.schema.json")
    // The check can fail: an unknown field, a bad name, a missing $schema.
    expect(validate({ ...agentPlugin, hooks: "hooks/hooks.json" })).toBe(false)
    expect(validate({ ...agentPlugin, name: "Agent--Trace" })).toBe(false)
    const { $schema: _, ...unversioned } = agentPlugin
    expect(validate(unversioned)).toBe(false)
  })

  it("has the same name and version as Claude Code's manifest and the marketplace entry", () => {
    const [entry, ...others] = marketplace.plugins
    expect(others).toEqual([])
    expect([claudePlugin.name, entry?.name]).toEqual([agentPlugin.name, agentPlugin.name])
    expect([claudePlugin.version, entry?.version]).toEqual([agentPlugin.version, agentPlugin.version])
  })
})

describe("the marketplace (.claude-plugin/marketplace.json)", () => {
  it("names the plugin folder by a relative path from the repository root", () => {
    expect(marketplace.plugins[0]?.source).toBe("./agent-trace-plugin")
    expect(existsSync(join(root, marketplace.plugins[0]!.source, ".claude-plugin/plugin.json"))).toBe(true)
    // Copilot CLI and VS Code look in these first: none may exist, or they would shadow this one.
    for (const other of ["marketplace.json", ".plugin/marketplace.json", ".github/plugin/marketplace.json"])
      expect(existsSync(join(root, other)), other).toBe(false)
  })
})

describe("Claude Code's hooks (hooks/hooks.json)", () => {
  it("run the bundled script with `hook` on the five events, edits and Bash by matcher", () => {
    const hooks = json(join(folder, "hooks/hooks.json")).hooks as Record<
      string,
      Array<{ matcher?: string; hooks: Array<{ type: string; command: string; timeout: number }> }>
    >
    expect(Object.keys(hooks).sort()).toEqual(["PostToolUse", "SessionEnd", "Stop", "UserPromptSubmit"])
    expect(hooks.PostToolUse?.map((h) => h.matcher)).toEqual(["Write|Edit|MultiEdit|NotebookEdit", "Bash"])
    const script = BUNDLE.replace("agent-trace-plugin/", "")
    for (const entry of Object.values(hooks).flat())
      for (const hook of entry.hooks) {
        expect(hook.type).toBe("command")
        expect(hook.command).toBe(`node "\${CLAUDE_PLUGIN_ROOT}/${script}" hook`)
        expect(hook.timeout).toBeGreaterThan(0)
      }
    expect(existsSync(join(root, BUNDLE))).toBe(true)
  })
})

describe("the skill (skills/<name>/SKILL.md, Agent Skills)", () => {
  it("has front matter the Agent Skills specification accepts, named as its folder, and the script it runs", () => {
    const skills = readdirSync(join(folder, "skills"))
    expect(skills).toEqual(["agent-trace-report"])
    for (const name of skills) {
      const text = readFileSync(join(folder, "skills", name, "SKILL.md"), "utf8")
      const front = /^---\n([\s\S]*?)\n---\n/.exec(text)?.[1]
      const meta = parseYaml(front ?? "") as Record<string, unknown>
      expect(meta.name).toBe(name)
      expect(name).toMatch(/^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/)
      expect(typeof meta.description === "string" && meta.description.length).toBeGreaterThan(0)
      expect((meta.description as string).length).toBeLessThanOrEqual(1024)
      expect(String(meta.compatibility ?? "").length).toBeLessThanOrEqual(500)
      expect(text).toContain("node scripts/agent-trace.mjs report --base")
      expect(existsSync(join(folder, "skills", name, "scripts/agent-trace.mjs"))).toBe(true)
    }
  })
})

import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { withBroker } from "./sdk/context.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import { settingSourcesOf } from "./config.ts"
import { parseFrontMatter, promptWithSkill, readSkills, skillsChanged } from "./skills.ts"

const run = <A, E, R>(broker: ReturnType<typeof makeMemoryBroker>, effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>)

const cfg = "/home/user/.claude"
const ws = "/work/project"
const skill = (front: string, body = "Do the thing.") => `---\n${front}\n---\n\n${body}\n`

const world = (extra: Record<string, string> = {}) =>
  makeMemoryBroker({
    files: {
      [`${cfg}/skills/alpha/SKILL.md`]: skill("name: alpha\ndescription: First skill"),
      [`${cfg}/skills/manual/SKILL.md`]: skill("description: Only by hand\ndisable-model-invocation: true"),
      [`${cfg}/skills/hidden/SKILL.md`]: skill("description: Model only\nuser-invocable: false"),
      [`${cfg}/skills/clash/SKILL.md`]: skill("description: from the config dir"),
      [`${cfg}/skills/broken/SKILL.md`]: skill("description: [unclosed"),
      [`${cfg}/skills/no-skill-file/README.md`]: "not a skill",
      "/home/user/.agents/skills/shared/SKILL.md": skill('description: "Linked in"'),
      [`${ws}/.claude/skills/clash/SKILL.md`]: skill("description: from the project"),
      [`${ws}/.claude/skills/proj/SKILL.md`]: skill("description: Project skill"),
      [`${ws}/.claude/skills/plain/SKILL.md`]: "No front matter at all.",
      ...extra,
    },
    links: { [`${cfg}/skills/shared`]: "/home/user/.agents/skills/shared" },
  })

const byName = (skills: ReadonlyArray<{ name: string }>) => Object.fromEntries(skills.map((s) => [s.name, s]))

describe("readSkills", () => {
  it("reads both folders, follows links, parses front matter, config dir wins a clash", async () => {
    const broker = world()
    const skills = byName(await run(broker, readSkills(cfg, ws)))
    expect(Object.keys(skills).sort()).toEqual([
      "alpha",
      "clash",
      "hidden",
      "manual",
      "plain",
      "proj",
      "shared",
    ])
    expect(skills.alpha).toEqual({ name: "alpha", description: "First skill", source: "user" })
    expect(skills.manual).toMatchObject({ manual_only: true, source: "user" })
    expect(skills.hidden).toMatchObject({ hidden_from_picker: true })
    expect(skills.hidden).not.toHaveProperty("manual_only")
    expect(skills.shared).toMatchObject({ description: "Linked in", source: "user" })
    expect(skills.clash).toMatchObject({ description: "from the config dir", source: "user" })
    expect(skills.proj).toMatchObject({ source: "project" })
    expect(skills.plain).toEqual({ name: "plain", source: "project" })
    expect(broker.logs.some((l) => l.level === "warn" && l.message.includes("broken"))).toBe(true)
  })

  it("applies skillOverrides: off hides, user-invocable-only makes it manual", async () => {
    const broker = world({
      [`${cfg}/settings.json`]: JSON.stringify({
        skillOverrides: { alpha: "off", proj: "user-invocable-only", x: "on" },
      }),
    })
    const skills = byName(await run(broker, readSkills(cfg, ws)))
    expect(skills.alpha).toBeUndefined()
    expect(skills.proj).toMatchObject({ manual_only: true })
  })

  it("drops every override of a file with one unknown value, with a warning; other files still count", async () => {
    const broker = world({
      [`${cfg}/settings.json`]: JSON.stringify({ skillOverrides: { alpha: "off", proj: "sometimes" } }),
      "/Library/Application Support/ClaudeCode/managed-settings.json": JSON.stringify({
        skillOverrides: { manual: "off" },
      }),
    })
    const skills = byName(await run(broker, readSkills(cfg, ws)))
    expect(skills.alpha).toBeDefined()
    expect(skills.proj).not.toHaveProperty("manual_only")
    expect(skills.manual).toBeUndefined()
    const warning = broker.logs.find((l) => l.level === "warn" && l.message.includes("skillOverrides"))
    expect(warning?.message).toContain(`${cfg}/settings.json`)
    expect(warning?.message).toContain("proj")
  })

  it("reads the project's .claude/settings.json and settings.local.json over the user's, under the administrator's", async () => {
    const broker = world({
      [`${cfg}/settings.json`]: JSON.stringify({ skillOverrides: { alpha: "off", proj: "off" } }),
      [`${ws}/.claude/settings.json`]: JSON.stringify({ skillOverrides: { alpha: "on", manual: "off" } }),
      [`${ws}/.claude/settings.local.json`]: JSON.stringify({
        skillOverrides: { proj: "user-invocable-only" },
      }),
      "/etc/claude-code/managed-settings.json": JSON.stringify({ skillOverrides: { clash: "off" } }),
    })
    const skills = byName(await run(broker, readSkills(cfg, ws)))
    expect(skills.alpha).toBeDefined()
    expect(skills.manual).toBeUndefined()
    expect(skills.proj).toMatchObject({ manual_only: true })
    expect(skills.clash).toBeUndefined()
  })

  it("lets the administrator's managed settings win over the user's", async () => {
    const broker = world({
      [`${cfg}/settings.json`]: JSON.stringify({ skillOverrides: { alpha: "on" } }),
      "/etc/claude-code/managed-settings.json": JSON.stringify({ skillOverrides: { alpha: "off" } }),
    })
    expect(byName(await run(broker, readSkills(cfg, ws))).alpha).toBeUndefined()
  })

  it("adds a skill only the CLI's command list names, skipping internal and overridden ones", async () => {
    const broker = world({ [`${cfg}/settings.json`]: JSON.stringify({ skillOverrides: { gone: "off" } }) })
    const skills = byName(
      await run(
        broker,
        readSkills(cfg, ws, [
          { name: "alpha", description: "CLI's copy" },
          { name: "plugin-skill", description: "From a plugin" },
          { name: "__remote-workflow" },
          { name: "gone" },
        ]),
      ),
    )
    expect(skills["plugin-skill"]).toEqual({
      name: "plugin-skill",
      description: "From a plugin",
      source: "cli",
    })
    expect(skills.alpha).toMatchObject({ description: "First skill", source: "user" })
    expect(skills["__remote-workflow"]).toBeUndefined()
    expect(skills.gone).toBeUndefined()
  })

  it("reads only the setting sources the CLI reads (CLAUDE_SETTING_SOURCES), as 2.1.332 does", async () => {
    const broker = world({
      [`${cfg}/settings.json`]: JSON.stringify({ skillOverrides: { manual: "off" } }),
      [`${ws}/.claude/settings.json`]: JSON.stringify({ skillOverrides: { alpha: "off" } }),
      [`${ws}/.claude/settings.local.json`]: JSON.stringify({ skillOverrides: { shared: "off" } }),
      "/etc/claude-code/managed-settings.json": JSON.stringify({ skillOverrides: { clash: "off" } }),
    })
    const names = async (sources: string) =>
      Object.keys(byName(await run(broker, readSkills(cfg, ws, [], settingSourcesOf(sources))))).sort()
    // user: the config dir's folder and overrides; the project's neither; managed always.
    expect(await names("user")).toEqual(["alpha", "hidden", "shared"])
    // project: the workspace's folder and overrides, nothing of the user's.
    expect(await names("project")).toEqual(["plain", "proj"])
    expect(await names("user,local")).toEqual(["alpha", "hidden"])
    expect(await names("user,project,local")).toEqual(await names(""))
  })

  it("answers [] when no folder exists", async () => {
    expect(await run(makeMemoryBroker(), readSkills(cfg, undefined))).toEqual([])
  })
})

describe("front matter", () => {
  it("takes quoted YAML and string booleans", () => {
    expect(parseFrontMatter(skill('description: "a: b"\ndisable-model-invocation: "true"'))).toEqual({
      description: "a: b",
      manualOnly: true,
      hiddenFromPicker: false,
    })
    expect(parseFrontMatter(skill("- a list"))).toBeUndefined()
  })
})

describe("skillsChanged", () => {
  const a = [
    { name: "x", source: "user" as const },
    { name: "y", source: "cli" as const, manual_only: true },
  ]
  it("ignores order and notices any field", () => {
    expect(skillsChanged(a, [...a].reverse())).toBe(false)
    expect(skillsChanged(a, [a[0]!, { ...a[1]!, manual_only: false }])).toBe(true)
    expect(skillsChanged(a, [a[0]!])).toBe(true)
    expect(skillsChanged(a, [a[0]!, { ...a[1]!, description: "new" }])).toBe(true)
  })
})

describe("promptWithSkill", () => {
  it("puts images first and the skill as the closing /name block", () => {
    expect(promptWithSkill("check this", [{ media_type: "image/png", data: "AAAA" }], "review")).toEqual([
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      { type: "text", text: "check this" },
      { type: "text", text: "/review" },
    ])
  })
  it("sends only the text without a skill, and only the skill without text", () => {
    expect(promptWithSkill("hello", undefined, undefined)).toEqual([{ type: "text", text: "hello" }])
    expect(promptWithSkill("", [], "/simplify")).toEqual([{ type: "text", text: "/simplify" }])
  })
  it("an empty prompt with no skill and no image is still one text block, as on the default path", () => {
    expect(promptWithSkill("", undefined, undefined)).toEqual([{ type: "text", text: "" }])
    expect(promptWithSkill("", [], undefined)).toEqual([{ type: "text", text: "" }])
    // With an image the image alone is the message.
    expect(promptWithSkill("", [{ media_type: "image/png", data: "AAAA" }], undefined)).toHaveLength(1)
  })
})

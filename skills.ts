/**
 * Skills: SKILL.md files from the account's configuration directory and the
 * workspace, their front matter, and the `skillOverrides` settings of the
 * user, the project (`.claude/settings.json`, `.claude/settings.local.json`)
 * and the administrator. Also how a picked skill rides in a prompt.
 */
import { Effect } from "effect"
import { parse as parseYaml } from "yaml"
import { z } from "zod"
import { ALL_SETTING_SOURCES, type SettingSource } from "./config.ts"
import { Fs, Log } from "./sdk/plugin-api.ts"
import { join } from "./sdk/paths.ts"
import type { ImageInput, SkillInfo } from "./sdk/protocol.ts"

/** Where administrators put managed settings (Linux, macOS). */
export const MANAGED_SETTINGS_PATHS = [
  "/etc/claude-code/managed-settings.json",
  "/Library/Application Support/ClaudeCode/managed-settings.json",
] as const

/** The CLI's own values; anything else makes it drop the whole map, and so do we. */
export const SkillOverrides = z.record(z.string(), z.enum(["on", "name-only", "user-invocable-only", "off"]))
export type SkillOverrides = z.infer<typeof SkillOverrides>

/** A row of the CLI's command list (initialize `commands`, init `slash_commands` names). */
export interface CliCommand {
  readonly name: string
  readonly description?: string
}

interface FrontMatter {
  readonly name?: string
  readonly description?: string
  readonly manualOnly: boolean
  readonly hiddenFromPicker: boolean
}

const isTrue = (v: unknown) => v === true || (typeof v === "string" && v.trim().toLowerCase() === "true")
const isFalse = (v: unknown) => v === false || (typeof v === "string" && v.trim().toLowerCase() === "false")

/** The YAML between the leading `---` lines; a file without it has none. */
export const parseFrontMatter = (text: string): FrontMatter | undefined => {
  const match = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/.exec(text)
  if (!match) return { manualOnly: false, hiddenFromPicker: false }
  let data: unknown
  try {
    data = parseYaml(match[1] ?? "")
  } catch {
    return undefined
  }
  if (data === null || data === undefined) return { manualOnly: false, hiddenFromPicker: false }
  if (typeof data !== "object" || Array.isArray(data)) return undefined
  const fm = data as Record<string, unknown>
  return {
    ...(typeof fm.name === "string" && { name: fm.name }),
    ...(typeof fm.description === "string" && { description: fm.description.trim() }),
    manualOnly: isTrue(fm["disable-model-invocation"]),
    hiddenFromPicker: isFalse(fm["user-invocable"]),
  }
}

/** The skills of one `skills` folder; a link to a folder is followed by the broker. */
const readSkillDir = (dir: string, source: SkillInfo["source"]) =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const log = yield* Log
    const entries = yield* fs.list(dir)
    if (entries === null) return []
    const skills: Array<{ name: string; fm: FrontMatter; source: SkillInfo["source"] }> = []
    for (const entry of entries) {
      if (entry.kind !== "directory" && entry.kind !== "link") continue
      const text = yield* fs.read(join(dir, entry.name, "SKILL.md"))
      if (text === null) continue
      const fm = parseFrontMatter(text)
      if (!fm) {
        yield* log.warn(
          `skill ${join(dir, entry.name, "SKILL.md")}: its front matter is not valid YAML; skipped`,
        )
        continue
      }
      // The folder is the command the CLI runs (`/name`).
      skills.push({ name: entry.name, fm, source })
    }
    return skills
  })

/** One settings file's `skillOverrides`, validated whole. */
const readOverrides = (path: string) =>
  Effect.gen(function* () {
    const text = yield* (yield* Fs).read(path)
    if (text === null) return {}
    let settings: unknown
    try {
      settings = JSON.parse(text)
    } catch {
      return {}
    }
    if (typeof settings !== "object" || settings === null || !("skillOverrides" in settings)) return {}
    const raw = (settings as { skillOverrides: unknown }).skillOverrides
    if (raw === undefined) return {}
    const parsed = SkillOverrides.safeParse(raw)
    if (parsed.success) return parsed.data
    const issue = parsed.error.issues[0]
    yield* (yield* Log).warn(
      `${path}: skillOverrides ignored (${issue ? `${issue.path.join(".")}: ${issue.message}` : "invalid"}); ` +
        `one bad value drops every override in the file, as the CLI does`,
    )
    return {}
  })

/**
 * The overrides as the CLI layers them: the user's, the workspace's project
 * and local settings over them, the administrator's over everything; of the
 * first three only the `sources` the CLI reads. Each file is validated whole
 * on its own.
 */
export const readSkillOverrides = (
  configDir: string,
  workspace?: string,
  sources: ReadonlySet<SettingSource> = ALL_SETTING_SOURCES,
): Effect.Effect<SkillOverrides, never, Fs | Log> =>
  Effect.gen(function* () {
    const files = [
      ...(sources.has("user") ? [join(configDir, "settings.json")] : []),
      ...(workspace && sources.has("project") ? [join(workspace, ".claude", "settings.json")] : []),
      ...(workspace && sources.has("local") ? [join(workspace, ".claude", "settings.local.json")] : []),
      ...MANAGED_SETTINGS_PATHS,
    ]
    const layered: SkillOverrides = {}
    for (const path of files) Object.assign(layered, yield* readOverrides(path))
    return layered
  })

/**
 * Every skill the account can use in this workspace: the config directory's
 * (winning a name clash), the project's, then any the CLI's command list
 * names that no file showed (plugins, folders outside the grants). A folder
 * counts only when its setting source is one the CLI reads (`user`: the
 * config directory's, `project`: the workspace's).
 */
export const readSkills = (
  configDir: string,
  workspace: string | undefined,
  cliCommands?: ReadonlyArray<CliCommand>,
  sources: ReadonlySet<SettingSource> = ALL_SETTING_SOURCES,
): Effect.Effect<SkillInfo[], never, Fs | Log> =>
  Effect.gen(function* () {
    const overrides = yield* readSkillOverrides(configDir, workspace, sources)
    const found = [
      ...(sources.has("user") ? yield* readSkillDir(join(configDir, "skills"), "user") : []),
      ...(workspace && sources.has("project")
        ? yield* readSkillDir(join(workspace, ".claude", "skills"), "project")
        : []),
    ]
    const byName = new Map<string, SkillInfo>()
    for (const { name, fm, source } of found) {
      if (byName.has(name)) continue
      const override = overrides[name]
      if (override === "off") continue
      byName.set(name, {
        name,
        ...(fm.description && { description: fm.description }),
        source,
        ...((fm.manualOnly || override === "user-invocable-only") && { manual_only: true }),
        ...(fm.hiddenFromPicker && { hidden_from_picker: true }),
      })
    }
    for (const command of cliCommands ?? []) {
      const name = command.name.replace(/^\//, "")
      // `__name` rows are the CLI's internal commands.
      if (name === "" || name.startsWith("__") || byName.has(name)) continue
      const override = overrides[name]
      if (override === "off") continue
      byName.set(name, {
        name,
        ...(command.description && { description: command.description }),
        source: "cli",
        ...(override === "user-invocable-only" && { manual_only: true }),
      })
    }
    return [...byName.values()]
  })

/** True when a `Skills` event is due (order-insensitive). */
export const skillsChanged = (a: ReadonlyArray<SkillInfo>, b: ReadonlyArray<SkillInfo>): boolean => {
  if (a.length !== b.length) return true
  const key = (s: SkillInfo) =>
    JSON.stringify([s.name, s.description ?? null, s.source, !!s.manual_only, !!s.hidden_from_picker])
  const left = a.map(key).sort()
  const right = b.map(key).sort()
  return left.some((k, i) => k !== right[i])
}

export type PromptBlock =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "image"
      readonly source: { readonly type: "base64"; readonly media_type: string; readonly data: string }
    }

/**
 * A user message's content: images first, then the text, then the picked
 * skill as the closing `/name` block (the CLI expands a command only from
 * the last block).
 */
export const promptWithSkill = (
  text: string,
  images: ReadonlyArray<ImageInput> | undefined,
  skill: string | undefined,
): PromptBlock[] => {
  const blocks: PromptBlock[] = (images ?? []).map((image) => ({
    type: "image" as const,
    source: { type: "base64" as const, media_type: image.media_type, data: image.data },
  }))
  const name = skill?.trim().replace(/^\//, "")
  // A message with no block at all is refused by the CLI: an empty prompt is still one text block.
  if (text.trim() !== "" || (blocks.length === 0 && !name)) blocks.push({ type: "text", text })
  if (name) blocks.push({ type: "text", text: `/${name}` })
  return blocks
}

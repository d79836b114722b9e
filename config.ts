/**
 * Where an account's CLI keeps its state, the environment its child runs in,
 * and the launch knobs read from the login environment at every launch.
 */
import { Effect } from "effect"
import { parse as shellParse } from "shell-quote"
import { type Account, FORBIDDEN_ENV } from "./instances.ts"
import { Env, Fs, Log } from "./sdk/plugin-api.ts"
import { expandHome, join, normalize } from "./sdk/paths.ts"
import { isObject } from "./values.ts"

// ---------------------------------------------------------------------------
// Configuration directory

/**
 * The account's effective configuration directory: its own `configDir`
 * (`~` expanded), else the login `CLAUDE_CONFIG_DIR`, else `~/.claude`.
 */
export const configDirFor = (account: Account): Effect.Effect<string, never, Env | Fs> =>
  Effect.gen(function* () {
    const fs = yield* Fs
    const env = yield* Env
    const home = fs.paths.home
    if (account.configDir) return normalize(expandHome(account.configDir, home))
    const login = (yield* env.get("CLAUDE_CONFIG_DIR"))?.trim()
    if (login) return normalize(expandHome(login, home))
    return join(home, ".claude")
  })

/**
 * Two agents with the same key can continue each other's chats: the
 * effective configuration directory, links resolved where the broker can.
 */
export const continuationKey = (account: Account): Effect.Effect<string, never, Env | Fs> =>
  Effect.gen(function* () {
    const dir = yield* configDirFor(account)
    const real = yield* (yield* Fs).realpath(dir)
    return real ?? dir
  })

// ---------------------------------------------------------------------------
// The child's environment

/**
 * The overrides the session passes to spawn (added to the login
 * environment). HOME is never set: on macOS it also moves the keychain.
 * CLAUDE_CONFIG_DIR only for an account with its own directory: setting it
 * at all, even to ~/.claude, makes the CLI read a credentials file instead
 * of the keychain. `home` expands a `~` in the account's `configDir`.
 */
export const childEnv = (account: Account, home?: string): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [name, value] of Object.entries(account.env ?? {}))
    if (!(FORBIDDEN_ENV as ReadonlyArray<string>).includes(name)) out[name] = value
  out.CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS = "1"
  if (account.configDir)
    out.CLAUDE_CONFIG_DIR = home ? normalize(expandHome(account.configDir, home)) : account.configDir
  return out
}

/** childEnv with `~` expanded against the broker's home folder. */
export const childEnvFor = (account: Account): Effect.Effect<Record<string, string | undefined>, never, Fs> =>
  Fs.useSync((fs) => childEnv(account, fs.paths.home))

// ---------------------------------------------------------------------------
// Launch knobs

export interface LaunchKnobs {
  /** CLAUDE_EXTRA_ARGS, appended last. */
  readonly extraArgs: string[]
  /** CLAUDE_MCP_CONFIG: files or JSON strings, one --mcp-config each. */
  readonly mcpConfigs: string[]
  readonly strictMcpConfig: boolean
  /** CLAUDE_SETTING_SOURCES, normalized (`user,project`). */
  readonly settingSources?: string
  /** CLAUDE_APPEND_SYSTEM_PROMPT: sent in `initialize`, before the host's instructions. */
  readonly appendSystemPrompt?: string
  /** CLAUDE_ADD_DIRS, one --add-dir each. */
  readonly addDirs: string[]
  /** What was refused while reading the knobs (one line each). */
  readonly warnings: string[]
}

const TRUE_WORDS = new Set(["1", "true", "yes", "on"])

/**
 * Split like a shell command line (quotes and backslashes honoured). `$VAR`
 * stays literal: nothing is expanded. Operators and comments are refused.
 */
export const splitShellWords = (
  line: string,
  variable: string,
): { readonly words: string[]; readonly warnings: string[] } => {
  const words: string[] = []
  const warnings: string[] = []
  for (const token of shellParse(line, (name) => `$${name}`)) {
    if (typeof token === "string") words.push(token)
    // A glob is just a word the shell would pass through unmatched.
    else if ("op" in token && token.op === "glob") words.push((token as { pattern: string }).pattern)
    else
      warnings.push(
        `${variable}: ${"op" in token ? `shell operator "${token.op}"` : `comment "#${token.comment}"`} ignored (no shell runs these arguments)`,
      )
  }
  return { words, warnings }
}

/**
 * CLAUDE_MCP_CONFIG: a value that opens with `{` is one JSON document (shell
 * splitting would strip its quotes: `{"a":1}` → `{a:1}`); anything else is
 * files or quoted JSON strings, split like a shell line. A `{` value that is
 * not one JSON document is refused, with how to quote it.
 */
const splitMcpConfigs = (value: string): { readonly words: string[]; readonly warnings: string[] } => {
  const text = value.trim()
  if (!text.startsWith("{")) return splitShellWords(value, "CLAUDE_MCP_CONFIG")
  try {
    JSON.parse(text)
    return { words: [text], warnings: [] }
  } catch (error) {
    return {
      words: [],
      warnings: [
        `CLAUDE_MCP_CONFIG ignored: it starts with "{" but is not one JSON document (${(error as Error).message}); ` +
          `to give several configurations, put each JSON one in single quotes: '{"mcpServers":{…}}' /path/other.json`,
      ],
    }
  }
}

/** CLAUDE_ADD_DIRS: a PATH-style list when it holds ':', else shell words. */
const splitDirs = (value: string) =>
  value.includes(":")
    ? {
        words: value
          .split(":")
          .map((d) => d.trim())
          .filter((d) => d !== ""),
        warnings: [],
      }
    : splitShellWords(value, "CLAUDE_ADD_DIRS")

export const readLaunchKnobs: Effect.Effect<LaunchKnobs, never, Env> = Effect.gen(function* () {
  const env = yield* Env
  const get = (name: string) => Effect.map(env.get(name), (v) => (v?.trim() ? v : undefined))
  const warnings: string[] = []
  // Each read is a broker round trip at every launch: all of them at once.
  const [home, extra, mcp, strict, sources, append, dirs] = yield* Effect.all(
    [
      env.get("HOME"),
      get("CLAUDE_EXTRA_ARGS"),
      get("CLAUDE_MCP_CONFIG"),
      get("CLAUDE_STRICT_MCP_CONFIG"),
      get("CLAUDE_SETTING_SOURCES"),
      get("CLAUDE_APPEND_SYSTEM_PROMPT"),
      get("CLAUDE_ADD_DIRS"),
    ],
    { concurrency: "unbounded" },
  )

  const extraArgs = extra ? splitShellWords(extra, "CLAUDE_EXTRA_ARGS") : { words: [], warnings: [] }
  warnings.push(...extraArgs.warnings)

  const mcpConfigs = mcp ? splitMcpConfigs(mcp) : { words: [], warnings: [] }
  warnings.push(...mcpConfigs.warnings)

  const addDirs = dirs ? splitDirs(dirs) : { words: [], warnings: [] }
  warnings.push(...addDirs.warnings)

  return {
    extraArgs: extraArgs.words,
    mcpConfigs: mcpConfigs.words,
    strictMcpConfig: strict !== undefined && TRUE_WORDS.has(strict.trim().toLowerCase()),
    ...(sources !== undefined && {
      settingSources: sources
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
        .join(","),
    }),
    ...(append !== undefined && { appendSystemPrompt: append }),
    addDirs: addDirs.words.map((d) => (home ? expandHome(d, home) : d)),
    warnings,
  }
})

/** readLaunchKnobs, with its warnings written to the log. */
export const readLaunchKnobsLogged: Effect.Effect<LaunchKnobs, never, Env | Log> = Effect.gen(function* () {
  const knobs = yield* readLaunchKnobs
  const log = yield* Log
  for (const warning of knobs.warnings) yield* log.warn(warning)
  return knobs
})

/**
 * The knobs' own flags on a session's command line (session/launch.ts puts
 * them after the options; the extra directories and the user's arguments
 * have places of their own there). List flags swallow the words after them,
 * so every value gets its own flag.
 */
export const knobFlags = (knobs: LaunchKnobs): string[] => [
  ...knobs.mcpConfigs.flatMap((c) => ["--mcp-config", c]),
  ...(knobs.strictMcpConfig ? ["--strict-mcp-config"] : []),
  ...(knobs.settingSources !== undefined ? ["--setting-sources", knobs.settingSources] : []),
]

// ---------------------------------------------------------------------------
// Setting sources

/** The settings the CLI layers: the user's, the project's `.claude/settings.json` (and `.claude/skills`), its local file. */
export type SettingSource = "user" | "project" | "local"

export const ALL_SETTING_SOURCES: ReadonlySet<SettingSource> = new Set(["user", "project", "local"])

/**
 * The sources `--setting-sources` (CLAUDE_SETTING_SOURCES) leaves the CLI,
 * every one when unset. 2.1.332: `user` governs `<config dir>/settings.json`
 * and `<config dir>/skills`, `project` `.claude/settings.json` and
 * `.claude/skills`, `local` `.claude/settings.local.json`; managed settings
 * apply whatever it says. An unknown name is the CLI's to refuse.
 */
export const settingSourcesOf = (value: string | undefined): ReadonlySet<SettingSource> => {
  if (value === undefined || value.trim() === "") return ALL_SETTING_SOURCES
  const named = value.split(",").map((s) => s.trim())
  return new Set([...ALL_SETTING_SOURCES].filter((source) => named.includes(source)))
}

/** The setting sources of the login environment as they are now (read at every use, like the knobs). */
export const readSettingSources: Effect.Effect<ReadonlySet<SettingSource>, never, Env> = Effect.gen(
  function* () {
    return settingSourcesOf(yield* (yield* Env).get("CLAUDE_SETTING_SOURCES"))
  },
)

// ---------------------------------------------------------------------------
// Settings files

/** A settings file as an object; missing, unreadable or non-object → undefined. */
export const readJsonObject = (path: string): Effect.Effect<Record<string, unknown> | undefined, never, Fs> =>
  Effect.gen(function* () {
    const text = yield* (yield* Fs).read(path)
    if (text === null) return undefined
    try {
      const value: unknown = JSON.parse(text)
      return isObject(value) ? value : undefined
    } catch {
      return undefined
    }
  })

/** `<configDir>/settings.json` (the user's settings), `{}` when absent. */
export const readUserSettings = (configDir: string): Effect.Effect<Record<string, unknown>, never, Fs> =>
  Effect.map(readJsonObject(join(configDir, "settings.json")), (s) => s ?? {})

/**
 * User settings with the workspace's project and local settings over them
 * (top-level keys; later files win), as the CLI layers them for the switches
 * the plugin reads (workflows, the ultracode keyword); only the `sources`
 * the CLI reads (CLAUDE_SETTING_SOURCES).
 */
export const readMergedSettings = (
  configDir: string,
  workspace?: string,
  sources: ReadonlySet<SettingSource> = ALL_SETTING_SOURCES,
): Effect.Effect<Record<string, unknown>, never, Fs> =>
  Effect.gen(function* () {
    const none = Effect.succeed(undefined)
    // Three independent reads (broker round trips): side by side, merged in their order.
    const [user, project, local] = yield* Effect.all(
      [
        sources.has("user") ? readUserSettings(configDir) : none,
        workspace && sources.has("project")
          ? readJsonObject(join(workspace, ".claude", "settings.json"))
          : none,
        workspace && sources.has("local")
          ? readJsonObject(join(workspace, ".claude", "settings.local.json"))
          : none,
      ],
      { concurrency: "unbounded" },
    )
    return { ...(user ?? {}), ...(project ?? {}), ...(local ?? {}) }
  })

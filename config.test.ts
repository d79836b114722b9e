import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import {
  childEnv,
  childEnvFor,
  configDirFor,
  continuationKey,
  knobFlags,
  readLaunchKnobs,
  readLaunchKnobsLogged,
  readMergedSettings,
  readSettingSources,
  settingSourcesOf,
  splitShellWords,
} from "./config.ts"
import { DEFAULT_ACCOUNT } from "./instances.ts"
import { withBroker } from "./sdk/context.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const run = <A, E, R>(broker: ReturnType<typeof makeMemoryBroker>, effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>)

const home = "/home/user"

describe("configDirFor and continuationKey", () => {
  it("uses the account's own directory, ~ expanded", async () => {
    const broker = makeMemoryBroker({ home, env: { CLAUDE_CONFIG_DIR: "/elsewhere" } })
    expect(await run(broker, configDirFor({ id: "p", name: "P", configDir: "~/.claude_personal" }))).toBe(
      "/home/user/.claude_personal",
    )
  })
  it("else the login CLAUDE_CONFIG_DIR, else ~/.claude", async () => {
    const withLogin = makeMemoryBroker({ home, env: { CLAUDE_CONFIG_DIR: "~/.claude-work" } })
    expect(await run(withLogin, configDirFor(DEFAULT_ACCOUNT))).toBe("/home/user/.claude-work")
    const plain = makeMemoryBroker({ home })
    expect(await run(plain, configDirFor(DEFAULT_ACCOUNT))).toBe("/home/user/.claude")
  })
  it("gives accounts sharing a directory (through a link) the same key", async () => {
    const broker = makeMemoryBroker({
      home,
      files: { "/home/user/.claude/settings.json": "{}" },
      links: { "/home/user/.claude-link": "/home/user/.claude" },
    })
    const a = await run(broker, continuationKey(DEFAULT_ACCOUNT))
    const b = await run(broker, continuationKey({ id: "b", name: "B", configDir: "~/.claude-link" }))
    const c = await run(broker, continuationKey({ id: "c", name: "C", configDir: "~/.claude-other" }))
    expect(a).toBe("/home/user/.claude")
    expect(b).toBe(a)
    expect(c).toBe("/home/user/.claude-other")
  })
})

describe("childEnv", () => {
  it("emits session state events and leaves HOME and CLAUDE_CONFIG_DIR alone for the default account", () => {
    const env = childEnv(DEFAULT_ACCOUNT, home)
    expect(env).toEqual({ CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" })
    expect("HOME" in env).toBe(false)
    expect("CLAUDE_CONFIG_DIR" in env).toBe(false)
  })
  it("sets CLAUDE_CONFIG_DIR only for an account with its own directory, plus the account's env", () => {
    const env = childEnv(
      {
        id: "or",
        name: "OR",
        configDir: "~/.claude_or",
        env: { ANTHROPIC_BASE_URL: "https://x", HOME: "/evil" },
      },
      home,
    )
    expect(env).toEqual({
      ANTHROPIC_BASE_URL: "https://x",
      CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1",
      CLAUDE_CONFIG_DIR: "/home/user/.claude_or",
    })
  })
  it("expands ~ against the broker's home in childEnvFor", async () => {
    const broker = makeMemoryBroker({ home: "/Users/me" })
    const env = await run(broker, childEnvFor({ id: "a", name: "A", configDir: "~/.a" }))
    expect(env.CLAUDE_CONFIG_DIR).toBe("/Users/me/.a")
  })
})

describe("shell splitting", () => {
  it("honours quotes and backslashes and keeps $VAR literal", () => {
    expect(splitShellWords(`--append "two words" 'single $X' back\\ slash $HOME`, "V").words).toEqual([
      "--append",
      "two words",
      "single $X",
      "back slash",
      "$HOME",
    ])
  })
  it("refuses operators and comments with a warning and keeps a glob as a word", () => {
    const out = splitShellWords("--a x; rm -rf / | cat *.json # note", "CLAUDE_EXTRA_ARGS")
    expect(out.words).toEqual(["--a", "x", "rm", "-rf", "/", "cat", "*.json"])
    expect(out.warnings).toHaveLength(3)
    expect(out.warnings[0]).toContain("CLAUDE_EXTRA_ARGS")
    expect(out.warnings[0]).toContain(";")
  })
})

describe("launch knobs", () => {
  it("reads every knob from the login environment", async () => {
    const broker = makeMemoryBroker({
      home,
      env: {
        HOME: home,
        CLAUDE_EXTRA_ARGS: `--max-turns 3 --allowedTools "Bash(git log:*)"`,
        CLAUDE_MCP_CONFIG: `/cfg/a.json '{"mcpServers":{"x":{"command":"y"}}}'`,
        CLAUDE_STRICT_MCP_CONFIG: "Yes",
        CLAUDE_SETTING_SOURCES: " user , project ",
        CLAUDE_APPEND_SYSTEM_PROMPT: "Be brief.",
        CLAUDE_ADD_DIRS: "~/src/lib:/opt/shared dir",
      },
    })
    const knobs = await run(broker, readLaunchKnobs)
    expect(knobs).toEqual({
      extraArgs: ["--max-turns", "3", "--allowedTools", "Bash(git log:*)"],
      mcpConfigs: ["/cfg/a.json", '{"mcpServers":{"x":{"command":"y"}}}'],
      strictMcpConfig: true,
      settingSources: "user,project",
      appendSystemPrompt: "Be brief.",
      addDirs: ["/home/user/src/lib", "/opt/shared dir"],
      warnings: [],
    })
    expect(knobFlags(knobs)).toEqual([
      "--mcp-config",
      "/cfg/a.json",
      "--mcp-config",
      '{"mcpServers":{"x":{"command":"y"}}}',
      "--strict-mcp-config",
      "--setting-sources",
      "user,project",
    ])
  })
  it("takes an unquoted CLAUDE_MCP_CONFIG that opens with { as one JSON document, its quotes kept", async () => {
    const json = '{"mcpServers": {"x": {"command": "y", "args": ["a b"]}}}'
    const broker = makeMemoryBroker({ env: { CLAUDE_MCP_CONFIG: ` ${json} ` } })
    const knobs = await run(broker, readLaunchKnobs)
    expect(knobs.mcpConfigs).toEqual([json])
    expect(knobs.warnings).toEqual([])
  })
  it("refuses a CLAUDE_MCP_CONFIG opening with { that is not one JSON document, saying how to quote it", async () => {
    const broker = makeMemoryBroker({ env: { CLAUDE_MCP_CONFIG: '{"a":1} /cfg/b.json' } })
    const knobs = await run(broker, readLaunchKnobs)
    expect(knobs.mcpConfigs).toEqual([])
    expect(knobs.warnings).toEqual([expect.stringMatching(/not one JSON document.*single quotes: '\{/)])
  })
  it("splits CLAUDE_ADD_DIRS like a shell line when it has no ':'", async () => {
    const broker = makeMemoryBroker({ env: { CLAUDE_ADD_DIRS: `/a "/b c"` } })
    expect((await run(broker, readLaunchKnobs)).addDirs).toEqual(["/a", "/b c"])
  })
  it("has no knobs by default, and strict only for 1/true/yes/on", async () => {
    const none = await run(makeMemoryBroker(), readLaunchKnobs)
    expect(none).toEqual({ extraArgs: [], mcpConfigs: [], strictMcpConfig: false, addDirs: [], warnings: [] })
    expect(knobFlags(none)).toEqual([])
    for (const [value, strict] of [
      ["1", true],
      ["on", true],
      ["TRUE", true],
      ["0", false],
      ["nope", false],
    ] as const) {
      const broker = makeMemoryBroker({ env: { CLAUDE_STRICT_MCP_CONFIG: value } })
      expect((await run(broker, readLaunchKnobs)).strictMcpConfig).toBe(strict)
    }
  })
  it("reads the environment again at every launch", async () => {
    const broker = makeMemoryBroker({ env: { CLAUDE_EXTRA_ARGS: "--a" } })
    expect((await run(broker, readLaunchKnobs)).extraArgs).toEqual(["--a"])
    broker.env.set("CLAUDE_EXTRA_ARGS", "--b")
    expect((await run(broker, readLaunchKnobs)).extraArgs).toEqual(["--b"])
  })
  it("logs what it refused", async () => {
    const broker = makeMemoryBroker({ env: { CLAUDE_EXTRA_ARGS: "--a && --b" } })
    const knobs = await run(broker, readLaunchKnobsLogged)
    expect(knobs.extraArgs).toEqual(["--a", "--b"])
    expect(broker.logs).toEqual([{ level: "warn", message: expect.stringContaining("&&") }])
  })
})

/**
 * The api with `env.get` and `fs.read` held open a moment each, counting how
 * many are in flight at once: every read before a launch is a broker round
 * trip, so the launch's reads must overlap, not queue.
 */
const overlapCounting = (broker: ReturnType<typeof makeMemoryBroker>) => {
  const seen = { inFlight: 0, most: 0 }
  const held = <A>(effect: Effect.Effect<A>) =>
    Effect.gen(function* () {
      seen.inFlight++
      seen.most = Math.max(seen.most, seen.inFlight)
      yield* Effect.sleep("2 millis")
      seen.inFlight--
      return yield* effect
    })
  const api = {
    ...broker.api,
    env: { ...broker.api.env, get: (name: string) => held(broker.api.env.get(name)) },
    fs: { ...broker.api.fs, read: (path: string) => held(broker.api.fs.read(path)) },
  }
  const runWith = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.runPromise(withBroker(api)(effect) as Effect.Effect<A, E, never>)
  return { seen, runWith }
}

describe("reads before a launch", () => {
  it("reads every launch knob at once", async () => {
    const { seen, runWith } = overlapCounting(makeMemoryBroker({ home, env: { CLAUDE_EXTRA_ARGS: "--a" } }))
    expect((await runWith(readLaunchKnobs)).extraArgs).toEqual(["--a"])
    expect(seen.most).toBe(7)
  })
  it("reads the three settings files at once, merged in their order", async () => {
    const { seen, runWith } = overlapCounting(
      makeMemoryBroker({
        files: {
          "/home/user/.claude/settings.json": JSON.stringify({ a: 1, b: 1, c: 1 }),
          "/ws/.claude/settings.json": JSON.stringify({ b: 2, c: 2 }),
          "/ws/.claude/settings.local.json": JSON.stringify({ c: 3 }),
        },
      }),
    )
    expect(await runWith(readMergedSettings("/home/user/.claude", "/ws"))).toEqual({ a: 1, b: 2, c: 3 })
    expect(seen.most).toBe(3)
  })
})

describe("settings", () => {
  it("layers project and local settings over the user's, tolerating broken files", async () => {
    const broker = makeMemoryBroker({
      files: {
        "/home/user/.claude/settings.json": JSON.stringify({ enableWorkflows: true, a: 1 }),
        "/ws/.claude/settings.json": JSON.stringify({ enableWorkflows: false }),
        "/ws/.claude/settings.local.json": "{ broken",
      },
    })
    expect(await run(broker, readMergedSettings("/home/user/.claude", "/ws"))).toEqual({
      enableWorkflows: false,
      a: 1,
    })
    expect(await run(broker, readMergedSettings("/nowhere"))).toEqual({})
  })
  it("reads only the sources CLAUDE_SETTING_SOURCES leaves the CLI (2.1.332: user skips the project's files)", async () => {
    const broker = makeMemoryBroker({
      env: { CLAUDE_SETTING_SOURCES: " user , local, bogus" },
      files: {
        "/home/user/.claude/settings.json": JSON.stringify({ a: 1, b: 1 }),
        "/ws/.claude/settings.json": JSON.stringify({ enableWorkflows: false, b: 2 }),
        "/ws/.claude/settings.local.json": JSON.stringify({ c: 3 }),
      },
    })
    const sources = await run(broker, readSettingSources)
    expect([...sources].sort()).toEqual(["local", "user"])
    expect(await run(broker, readMergedSettings("/home/user/.claude", "/ws", sources))).toEqual({
      a: 1,
      b: 1,
      c: 3,
    })
    expect(
      await run(broker, readMergedSettings("/home/user/.claude", "/ws", settingSourcesOf("project"))),
    ).toEqual({
      enableWorkflows: false,
      b: 2,
    })
    expect(settingSourcesOf(undefined)).toEqual(settingSourcesOf("user,project,local"))
  })
})

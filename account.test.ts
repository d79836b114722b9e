import { Effect, Exit, Stream } from "effect"
import { describe, expect, it } from "vitest"
import {
  authStatus,
  authStatusFrom,
  describeLogin,
  installerOf,
  isNewer,
  maintenance,
  parseVersion,
  signIn,
  signOut,
  update,
} from "./account.ts"
import { DEFAULT_ACCOUNT } from "./instances.ts"
import { withBroker } from "./sdk/context.ts"
import { BrokerFailure, type ProcessHandle, type RunResult } from "./sdk/plugin-api.ts"
import { type FakeRun, makeMemoryBroker, type MemoryBrokerOptions } from "./sdk/testing/memory-broker.ts"

const run = <A, E, R>(broker: ReturnType<typeof makeMemoryBroker>, effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>)
const runExit = <A, E, R>(broker: ReturnType<typeof makeMemoryBroker>, effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(Effect.exit(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>))

const ok = (stdout: string, code = 0): RunResult => ({ code, stdout, stderr: "" })
const json = (value: unknown, code = 0) => ok(JSON.stringify(value, null, 2), code)

/** A `claude` whose one-shot runs answer by their first arguments. */
const claude =
  (answers: Record<string, RunResult | BrokerFailure>): FakeRun =>
  (args) => {
    const key = args.join(" ")
    const answer = answers[key]
    if (answer === undefined)
      return Effect.fail(new BrokerFailure({ operation: "run", detail: `unexpected: ${key}` }))
    return answer instanceof BrokerFailure ? Effect.fail(answer) : Effect.succeed(answer)
  }

// ---------------------------------------------------------------------------

describe("authStatus", () => {
  const probe = (answer: RunResult | BrokerFailure, options: MemoryBrokerOptions = {}) => {
    const broker = makeMemoryBroker({ ...options, run: { claude: claude({ "auth status --json": answer }) } })
    return { broker, result: run(broker, authStatus(DEFAULT_ACCOUNT)) }
  }

  it("signed in with claude.ai: Ready, with the address and plan as the description", async () => {
    const { result } = probe(
      json({
        loggedIn: true,
        authMethod: "claude.ai",
        apiProvider: "firstParty",
        email: "ada@example.com",
        subscriptionType: "max",
        planTier: "max_20x",
        configDirectory: "/home/user/.claude",
      }),
    )
    expect(await result).toMatchObject({ status: "Ready", description: "ada@example.com · Claude Max 20x" })
  })

  it("signed in with an API key (as CLI 2.1.332 prints it): Ready, described as an API key", async () => {
    const { result } = probe(
      json({
        loggedIn: true,
        authMethod: "api_key",
        apiProvider: "firstParty",
        analyticsDisabled: false,
        projectsDirectory: "/home/user/.claude/projects",
        configDirectory: "/home/user/.claude",
        loginExpiresAt: null,
        consoleProfileSignInOffered: true,
        apiKeySource: "ANTHROPIC_API_KEY",
      }),
    )
    expect(await result).toMatchObject({ status: "Ready", description: "API key" })
  })

  it("signed out (exit 1, loggedIn false): AuthRequired naming the directory to log in against", async () => {
    const { result } = probe(
      json(
        {
          loggedIn: false,
          authMethod: "none",
          apiProvider: "firstParty",
          configDirectory: "/home/user/.claude-work",
        },
        1,
      ),
    )
    const status = await result
    expect(status.status).toBe("AuthRequired")
    expect(status.message).toContain("/home/user/.claude-work")
    expect(status.message).toContain("claude auth login")
  })

  it("cannot run at all: Unavailable", async () => {
    const { result } = probe(new BrokerFailure({ operation: "spawn claude", detail: "not found on PATH" }))
    const status = await result
    expect(status.status).toBe("Unavailable")
    expect(status.message).toContain("not found on PATH")
  })

  it("keeps output that is not a JSON object apart from signed out", async () => {
    for (const stdout of ["Error: config file is corrupt", "[]", "null", ""]) {
      const status = await probe({ code: 1, stdout, stderr: "boom" }).result
      expect(status.status, stdout).toBe("Unavailable")
      if (stdout !== "") expect(status.raw).toBe(stdout)
    }
  })

  it("runs in the account's exact environment: its config dir and env, never HOME", async () => {
    const broker = makeMemoryBroker({
      run: { claude: claude({ "auth status --json": json({ loggedIn: true }) }) },
    })
    await run(
      broker,
      authStatus({
        id: "or",
        name: "OR",
        configDir: "~/.claude_or",
        env: { ANTHROPIC_BASE_URL: "https://x" },
      }),
    )
    expect(broker.ran[0]?.options.env).toEqual({
      ANTHROPIC_BASE_URL: "https://x",
      CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1",
      CLAUDE_CONFIG_DIR: "/home/user/.claude_or",
    })
  })

  it("the default account's hint is a plain `claude auth login` (CLAUDE_CONFIG_DIR would break the keychain login)", () => {
    const status = authStatusFrom(
      json({ loggedIn: false, configDirectory: "/home/user/.claude" }, 1),
      "/home/user/.claude",
      false,
    )
    expect(status.message).toBe("Not signed in to Claude Code. Sign in, or run `claude auth login`.")
    expect(status.message).not.toContain("CLAUDE_CONFIG_DIR")
  })

  it("names the account's directory when the CLI does not", () => {
    const status = authStatusFrom(json({ loggedIn: false }, 1), "/home/user/.claude_p")
    expect(status.message).toContain("CLAUDE_CONFIG_DIR=/home/user/.claude_p")
  })

  it("describes cloud providers and plans without a tier", () => {
    expect(
      describeLogin({ authMethod: "claude.ai", email: "a@b.c", subscriptionType: "pro", planTier: "pro" }),
    ).toBe("a@b.c · Claude Pro")
    expect(describeLogin({ authMethod: "none", apiProvider: "bedrock" })).toBe("Amazon Bedrock")
    expect(describeLogin({ authMethod: "oauth_token", apiProvider: "firstParty" })).toBe("OAuth token")
  })
})

// ---------------------------------------------------------------------------

const encoder = new TextEncoder()

const fakeLogin = (stdout: string, exitCode: number | null = null): ProcessHandle => ({
  pid: 42,
  stdout: Stream.fromIterable([encoder.encode(stdout)]),
  stderr: Stream.empty,
  write: () => Effect.void,
  closeStdin: Effect.void,
  exit: exitCode === null ? Effect.never : Effect.succeed({ code: exitCode, signal: null }),
  kill: () => Effect.void,
})

describe("sign in and out", () => {
  it("signIn starts `claude auth login` in the account's env and returns the page it prints", async () => {
    const broker = makeMemoryBroker({
      spawn: {
        claude: () =>
          Effect.succeed(
            fakeLogin(
              "Opening browser to sign in…\nIf the browser didn't open, visit:\nhttps://claude.ai/oauth/authorize?code=abc\nPaste code here if prompted > ",
            ),
          ),
      },
    })
    const result = await run(broker, Effect.scoped(signIn({ id: "p", name: "P", configDir: "~/.p" })))
    expect(result.url).toBe("https://claude.ai/oauth/authorize?code=abc")
    expect(broker.spawned[0]?.args).toEqual(["auth", "login"])
    expect(broker.spawned[0]?.options.env?.CLAUDE_CONFIG_DIR).toBe("/home/user/.p")
  })

  it("signIn fails clearly when no page appears and the process fails", async () => {
    const broker = makeMemoryBroker({
      spawn: { claude: () => Effect.succeed(fakeLogin("nothing here\n", 1)) },
    })
    const exit = await runExit(broker, Effect.scoped(signIn(DEFAULT_ACCOUNT, 100)))
    expect(Exit.isFailure(exit)).toBe(true)
  })

  it("signOut runs `claude auth logout` and reports a failure", async () => {
    const good = makeMemoryBroker({
      run: { claude: claude({ "auth logout": ok("Successfully logged out from your Anthropic account.") }) },
    })
    await run(good, signOut(DEFAULT_ACCOUNT))
    expect(good.ran[0]?.args).toEqual(["auth", "logout"])
    const bad = makeMemoryBroker({
      run: { claude: claude({ "auth logout": { code: 1, stdout: "", stderr: "keychain locked" } }) },
    })
    const exit = await runExit(bad, signOut(DEFAULT_ACCOUNT))
    expect(Exit.isFailure(exit) && JSON.stringify(exit.cause)).toContain("keychain locked")
  })
})

// ---------------------------------------------------------------------------

describe("installer ownership", () => {
  it.each([
    ["/home/u/.local/bin/claude", "native"],
    ["/home/u/.local/share/claude/versions/2.1.332", "native"],
    ["/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "npm:/usr/local"],
    ["/home/u/.npm-global/lib/node_modules/@anthropic-ai/claude-code/cli.js", "npm:/home/u/.npm-global"],
    ["/work/app/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "none"],
    ["/work/app/node_modules/tool/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe", "none"],
    ["/opt/homebrew/Caskroom/claude-code/2.1.332/claude", "none"],
    ["/usr/bin/claude", "none"],
  ])("%s → %s", (path, expected) => {
    const found = installerOf(path)
    const label =
      found === undefined ? "none" : found.manager === "npm" ? `npm:${found.prefix}` : found.manager
    expect(label).toBe(expected)
  })

  it("parses and compares versions", () => {
    expect(parseVersion("2.1.332 (Claude Code)\n")).toBe("2.1.332")
    expect(parseVersion("garbage")).toBeUndefined()
    expect(isNewer("2.1.340", "2.1.332")).toBe(true)
    expect(isNewer("2.1.332", "2.1.332")).toBe(false)
    expect(isNewer("2.0.999", "2.1.0")).toBe(false)
  })
})

describe("maintenance", () => {
  const version = { "--version": ok("2.1.332 (Claude Code)\n") }

  it("native: ~/.local/bin/claude, latest from the registry, can update", async () => {
    const broker = makeMemoryBroker({
      which: { claude: "/home/user/.local/bin/claude" },
      files: { "/home/user/.local/share/claude/versions/2.1.332": "binary" },
      links: { "/home/user/.local/bin/claude": "/home/user/.local/share/claude/versions/2.1.332" },
      run: {
        claude: claude(version),
        npm: (args) =>
          Effect.succeed(ok(args.join(" ") === "view @anthropic-ai/claude-code version" ? "2.1.340\n" : "")),
      },
    })
    expect(await run(broker, maintenance())).toMatchObject({
      version: "2.1.332",
      manager: "native",
      latest: "2.1.340",
      can_update: true,
      path: "/home/user/.local/share/claude/versions/2.1.332",
    })
  })

  it("npm: the real path under <prefix>/lib/node_modules, latest asked through that prefix", async () => {
    const pkg = "/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    const broker = makeMemoryBroker({
      which: { claude: "/usr/local/bin/claude" },
      files: { [pkg]: "binary" },
      links: { "/usr/local/bin/claude": pkg },
      run: { claude: claude(version), npm: () => Effect.succeed(ok("2.1.335\n")) },
    })
    expect(await run(broker, maintenance())).toMatchObject({
      manager: "npm",
      latest: "2.1.335",
      can_update: true,
    })
    expect(broker.ran.find((r) => r.command === "npm")?.args).toEqual([
      "view",
      "@anthropic-ai/claude-code",
      "version",
      "--prefix",
      "/usr/local",
    ])
  })

  it("a project checkout is nobody's global install: no manager, no update, npm never asked", async () => {
    const pkg = "/work/app/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    const broker = makeMemoryBroker({
      which: { claude: "/work/app/node_modules/.bin/claude" },
      files: { [pkg]: "binary" },
      links: { "/work/app/node_modules/.bin/claude": pkg },
      run: { claude: claude(version), npm: () => Effect.succeed(ok("9.9.9")) },
    })
    const info = await run(broker, maintenance())
    expect(info).toEqual({ version: "2.1.332", can_update: false, path: pkg })
    expect(broker.ran.some((r) => r.command === "npm")).toBe(false)
  })

  it("an unreadable real path counts as npm's only when that prefix's npm lists the package", async () => {
    const listed = makeMemoryBroker({
      which: { claude: "/opt/tools/bin/claude" },
      run: {
        claude: claude(version),
        npm: (args) =>
          Effect.succeed(
            args[0] === "ls"
              ? ok(JSON.stringify({ dependencies: { "@anthropic-ai/claude-code": { version: "2.1.332" } } }))
              : ok("2.1.336"),
          ),
      },
    })
    expect(await run(listed, maintenance())).toMatchObject({
      manager: "npm",
      latest: "2.1.336",
      can_update: true,
    })
    const unlisted = makeMemoryBroker({
      which: { claude: "/opt/tools/bin/claude" },
      run: { claude: claude(version), npm: () => Effect.succeed(ok("{}", 1)) },
    })
    expect(await run(unlisted, maintenance())).toEqual({
      version: "2.1.332",
      can_update: false,
      path: "/opt/tools/bin/claude",
    })
  })

  it("~/.local/bin/claude past the grants: npm's when npm at ~/.local holds the package, else native", async () => {
    const local = "/home/user/.local/bin/claude"
    const npmAt = (answer: RunResult) =>
      makeMemoryBroker({
        which: { claude: local },
        run: {
          claude: claude({ ...version, update: ok("Updated") }),
          npm: (args) => Effect.succeed(args[0] === "ls" ? answer : ok("2.1.336")),
        },
      })
    const held = npmAt(
      ok(JSON.stringify({ dependencies: { "@anthropic-ai/claude-code": { version: "2.1.332" } } })),
    )
    expect(await run(held, maintenance())).toMatchObject({ manager: "npm", can_update: true })
    expect(held.ran.find((r) => r.args[0] === "ls")?.args).toContain("/home/user/.local")
    await run(held, update())
    expect(held.ran.some((r) => r.command === "claude" && r.args[0] === "update")).toBe(false)
    expect(held.ran.at(-2)?.args).toEqual([
      "install",
      "-g",
      "--prefix",
      "/home/user/.local",
      "@anthropic-ai/claude-code@latest",
    ])
    expect(await run(npmAt(ok("{}", 1)), maintenance())).toMatchObject({
      manager: "native",
      can_update: true,
    })
    // npm ran but said nothing readable: nobody is proven to own it.
    expect(await run(npmAt(ok("npm ERR! oops", 1)), maintenance())).toEqual({
      version: "2.1.332",
      can_update: false,
      path: local,
    })
  })

  it("a CLI that does not run reports no version", async () => {
    const broker = makeMemoryBroker({
      which: { claude: "/usr/bin/claude" },
      run: { claude: claude({ "--version": new BrokerFailure({ operation: "run", detail: "ENOENT" }) }) },
    })
    expect(await run(broker, maintenance())).toEqual({ can_update: false, path: "/usr/bin/claude" })
  })
})

describe("update", () => {
  it("native runs `claude update`, npm installs at the owning prefix, an unproven install fails", async () => {
    const native = makeMemoryBroker({
      which: { claude: "/home/user/.local/bin/claude" },
      run: { claude: claude({ update: ok("Updated"), "--version": ok("2.1.340 (Claude Code)") }) },
    })
    expect(await run(native, update())).toEqual({ version: "2.1.340", message: "Claude Code 2.1.340" })
    expect(native.ran.map((r) => r.args.join(" "))).toEqual(["update", "--version"])

    const pkg = "/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude.exe"
    const npm = makeMemoryBroker({
      which: { claude: "/usr/local/bin/claude" },
      files: { [pkg]: "x" },
      links: { "/usr/local/bin/claude": pkg },
      run: {
        claude: claude({ "--version": ok("2.1.340 (Claude Code)") }),
        npm: () => Effect.succeed(ok("")),
      },
    })
    await run(npm, update())
    expect(npm.ran.find((r) => r.command === "npm")?.args).toEqual([
      "install",
      "-g",
      "--prefix",
      "/usr/local",
      "@anthropic-ai/claude-code@latest",
    ])

    const nobody = makeMemoryBroker({ which: { claude: "/usr/bin/claude" }, run: { claude: claude({}) } })
    expect(Exit.isFailure(await runExit(nobody, update()))).toBe(true)
    expect(nobody.ran).toEqual([])
  })
})

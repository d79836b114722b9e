/**
 * The account probes and skill discovery against the real CLI (the one under test, testkit/cli.ts) and the
 * real host broker (grants enforced), offline, in a temporary HOME.
 */
import { symlinkSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type HostBroker, makeBroker } from "../host/broker/broker.ts"
import { loadManifest } from "../host/core/manifest.ts"
import { makeTempWorld, type TempWorld } from "../host/testing/testing.ts"
import { authStatus, maintenance } from "../account.ts"
import { DEFAULT_ACCOUNT } from "../instances.ts"
import { withBroker } from "../sdk/context.ts"
import { readSkills } from "../skills.ts"
import { claudeBinary, testCliVersion } from "../testkit/cli.ts"

const repoRoot = join(import.meta.dirname, "..")
let world: TempWorld
let broker: HostBroker

beforeEach(async () => {
  world = makeTempWorld("cvg-account-")
  // The CLI under test (testkit/cli.ts), the only `claude` on the login PATH.
  symlinkSync(claudeBinary(), join(world.bin, "claude"))
  broker = await makeBroker(await loadManifest(repoRoot), {
    home: world.home,
    hostDataDir: world.hostData,
    env: () => ({
      HOME: world.home,
      PATH: `${world.bin}:/usr/bin:/bin`,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
    }),
    workspaces: [world.workspace],
  })
})

afterEach(async () => {
  await broker.close()
  world.cleanup()
})

const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.runPromise(withBroker(broker.api)(effect) as Effect.Effect<A, E, never>)

describe("account probes against the real CLI", () => {
  it("signed out: AuthRequired, the default account told to run a plain `claude auth login`", async () => {
    const status = await run(authStatus(DEFAULT_ACCOUNT))
    expect(status.status).toBe("AuthRequired")
    // Naming ~/.claude in CLAUDE_CONFIG_DIR would make the CLI skip the keychain login.
    expect(status.message).toContain("`claude auth login`")
    expect(status.message).not.toContain("CLAUDE_CONFIG_DIR")
  }, 60_000)

  it("an account with its own directory and an API key in its env: Ready, described as an API key", async () => {
    const account = {
      id: "keyed",
      name: "Keyed",
      configDir: "~/.claude_keyed",
      env: { ANTHROPIC_API_KEY: "sk-test-offline" },
    }
    const status = await run(authStatus(account))
    expect(status).toMatchObject({ status: "Ready", description: "API key" })
    expect((status.raw as { configDirectory?: string }).configDirectory).toBe(
      join(world.home, ".claude_keyed"),
    )
    const signedOut = await run(authStatus({ id: "other", name: "Other", configDir: "~/.claude_other" }))
    expect(signedOut.message).toContain(join(world.home, ".claude_other"))
  }, 60_000)

  it("maintenance: the version, and a project checkout is not offered an update", async () => {
    const info = await run(maintenance())
    expect(info.version).toBe(testCliVersion())
    expect(info.can_update).toBe(false)
    expect(info.manager).toBeUndefined()
  }, 60_000)
})

describe("skills through the real broker", () => {
  it("follows a link from ~/.claude/skills into ~/.agents/skills", async () => {
    world.write(join(world.home, ".agents/skills/shared/SKILL.md"), "---\ndescription: Shared\n---\nbody\n")
    world.write(join(world.home, ".claude/skills/own/SKILL.md"), "---\ndescription: Own\n---\nbody\n")
    symlinkSync(join(world.home, ".agents/skills/shared"), join(world.home, ".claude/skills/shared"))
    world.write(join(world.workspace, ".claude/skills/proj/SKILL.md"), "---\nuser-invocable: false\n---\n")
    const skills = await run(readSkills(join(world.home, ".claude"), world.workspace))
    expect(skills.map((s) => `${s.name}:${s.source}`).sort()).toEqual([
      "own:user",
      "proj:project",
      "shared:user",
    ])
  })
})

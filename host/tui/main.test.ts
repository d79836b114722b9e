/**
 * The command line as a person meets it, the front end spawned (no CLI is
 * started): a bad flag points to --help; `install` shows what the plugin may
 * do and enables nothing; `plugins enable` turns it on; with nothing enabled
 * a prompt is refused in words that say what to do; npm prints no update
 * notice after `npm start`.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const repoRoot = join(import.meta.dirname, "../..")
const data = mkdtempSync(join(tmpdir(), "cvg-tui-main-"))
afterAll(() => rmSync(data, { recursive: true, force: true }))

const cvg = (...args: string[]) => {
  const run = spawnSync(process.execPath, ["--import", "tsx", "host/tui/main.ts", ...args], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", CVG_LAUNCHER: "" },
    input: "",
    timeout: 120_000,
  })
  return { code: run.status, out: `${run.stdout}${run.stderr}` }
}

describe("the command line", () => {
  it("answers a bad flag with what is wrong and --help, not Node's advice about --", () => {
    const { code, out } = cvg("--bogus")
    expect(code).toBe(1)
    expect(out).toBe("✗ unknown option --bogus — cvg --help lists the options\n")
  })

  it("installs the plugin this package carries, shows its grants grouped with reasons, enables nothing", () => {
    const { code, out } = cvg("install", "convergence/claude", "--data", data)
    expect(code, out).toBe(0)
    expect(out).toContain(`Installed convergence/claude 0.2.0 from ${repoRoot}`)
    expect(out).toContain("convergence/claude 0.2.0 · Claude Code · not enabled")
    expect(out).toMatch(
      / {4}run claude, npm, git \(\d+ argument patterns; may set \d+ variables\)\n {6}why: run the CLI/,
    )
    expect(out).toContain("Nothing of it runs until you enable it: cvg plugins enable convergence/claude")
    expect(out.split("\n").length).toBeLessThan(25)
    const registry = JSON.parse(readFileSync(join(data, "plugins.json"), "utf8"))
    expect(registry.plugins).toMatchObject([{ id: "convergence/claude", enabled: false }])
  })

  it("refuses a prompt while no enabled plugin provides an agent, then runs once one is enabled", () => {
    const refused = cvg("--account", "claude", "--data", data, "hello")
    expect(refused.code).toBe(1)
    expect(refused.out).toContain("no enabled plugin provides an agent")
    expect(refused.out).toContain("cvg install convergence/claude")
    const enabled = cvg("plugins", "enable", "convergence/claude", "--data", data)
    expect(enabled.out).toBe("convergence/claude enabled\n")
    expect(cvg("plugins", "--data", data).out).toContain("convergence/claude 0.2.0 · Claude Code · enabled")
  })

  it("keeps npm's update notice off after npm start (the project's .npmrc)", () => {
    // Only the project's config counts: a person's own or the machine's npmrc may say anything.
    const [user, global] = [join(data, "user-npmrc"), join(data, "global-npmrc")]
    for (const file of [user, global]) writeFileSync(file, "")
    const value = execFileSync("npm", ["config", "get", "update-notifier"], {
      cwd: repoRoot,
      encoding: "utf8",
      env: { ...process.env, npm_config_userconfig: user, npm_config_globalconfig: global },
    })
    expect(value.trim()).toBe("false")
  })
})

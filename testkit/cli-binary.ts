/**
 * Which Claude Code CLI the tests drive, its version, what the plugin's
 * capability table says it has, and where its native binary is.
 */
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type CliSupport, parseCliVersion, supportOf } from "../cli-version.ts"

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, "..")

/**
 * Which Claude Code CLI the tests drive: `CVG_TEST_CLI` names a version (one
 * installed as the `claude-code-<version>` npm alias devDependency, or the
 * pinned package's own) or a path to a `claude` binary (`npm run compat`
 * installs one elsewhere). Unset: the pinned `@anthropic-ai/claude-code`.
 */
export const TEST_CLI_VARIABLE = "CVG_TEST_CLI"

/** The pinned package's version (package.json of @anthropic-ai/claude-code). */
export function pinnedCliVersion(): string {
  const req = createRequire(import.meta.url)
  return (req("@anthropic-ai/claude-code/package.json") as { version: string }).version
}

/** The version the tests drive: CVG_TEST_CLI's, else the pinned one (read from the binary for a path). */
export function testCliVersion(): string {
  const chosen = process.env[TEST_CLI_VARIABLE]?.trim()
  if (!chosen) return pinnedCliVersion()
  if (!chosen.includes("/")) return chosen
  const printed = execFileSync(chosen, ["--version"], { encoding: "utf8", timeout: 20_000 })
  const match = /\d+\.\d+\.\d+/.exec(printed)
  if (!match) throw new Error(`${chosen} --version printed no version: ${printed.trim()}`)
  return match[0]
}

let support: CliSupport | undefined
/** What the plugin's capability table says the CLI under test has. */
export function testCliSupport(): CliSupport {
  support ??= supportOf(parseCliVersion(testCliVersion()))
  return support
}

/** Path of the native `claude` binary of the CLI under test. */
export function claudeBinary(): string {
  const chosen = process.env[TEST_CLI_VARIABLE]?.trim()
  if (chosen?.includes("/")) {
    if (!existsSync(chosen)) throw new Error(`${TEST_CLI_VARIABLE}=${chosen}: no such file`)
    return chosen
  }
  if (chosen && chosen !== pinnedCliVersion()) {
    // An alias package carries its own native binary in bin/ (its postinstall copies it there).
    const alias = join(repoRoot, `node_modules/claude-code-${chosen}/bin/claude.exe`)
    if (!existsSync(alias))
      throw new Error(
        `${TEST_CLI_VARIABLE}=${chosen}: ${alias} is missing; add the devDependency ` +
          `"claude-code-${chosen}": "npm:@anthropic-ai/claude-code@${chosen}" or give a path`,
      )
    return alias
  }
  const candidates = [
    join(repoRoot, "node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
    join(repoRoot, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`),
    join(repoRoot, `node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude.exe`),
  ]
  try {
    const req = createRequire(import.meta.url)
    const pkg = req.resolve(`@anthropic-ai/claude-code-${process.platform}-${process.arch}/package.json`)
    candidates.push(join(dirname(pkg), "claude"), join(dirname(pkg), "claude.exe"))
  } catch {}
  for (const c of candidates) if (existsSync(c)) return c
  throw new Error(`claude binary not found; looked at:\n${candidates.join("\n")}`)
}

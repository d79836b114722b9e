/**
 * `npm test` after the install check: the static checks (typecheck, lint,
 * depcheck) and one vitest run of the whole matrix (scripts/test-matrix.ts),
 * side by side:
 *
 *   - Node 20 (this machine's), the pinned CLI: unit and end to end
 *   - Node 20, CLI 2.1.282 (the alias devDependency): end to end, but the
 *     terminal front end, whose `npm start` always runs the pinned CLI
 *   - Node 24 (scripts/current-node.mjs, a registry package in .cache/):
 *     unit and end to end, Node 24 first on PATH for the processes it starts
 *
 * One run, one pool of workers: the legs' files fill the cores together
 * (test-order.ts starts the long ones first). The checks run at a lower
 * priority, on what the tests leave idle; their output is printed when they
 * end. The suite passes only if every check and every test does; the
 * summary reporter (test-report.ts) writes .tmp/vitest-report.json, which
 * .ci/run turns into its closing line. `npm test -- --quick` runs the first
 * leg only (still with the checks).
 */
import { execFileSync, spawn } from "node:child_process"
import { rmSync } from "node:fs"
import { setPriority } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { SECOND_CLI_VARIABLE, SECOND_NODE_VARIABLE } from "./test-matrix.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const vitest = join(root, "node_modules", "vitest", "vitest.mjs")

/** The older CLI every run also drives (package.json's `claude-code-<version>` alias). */
export const SECOND_CLI = "2.1.282"

/** The package.json scripts run beside the tests. */
const CHECKS = ["typecheck", "lint", "depcheck"] as const

/** How far below the tests the checks run (nice): they use what the tests leave idle. */
const CHECK_NICENESS = 10

interface Ended {
  readonly name: string
  readonly code: number | null
  readonly seconds: number
  readonly output: string
}

const run = (
  name: string,
  command: string,
  args: ReadonlyArray<string>,
  options: { env?: NodeJS.ProcessEnv; capture?: boolean; niceness?: number } = {},
): Promise<Ended> =>
  new Promise((resolve) => {
    const started = Date.now()
    const child = spawn(command, args, {
      cwd: root,
      env: options.env ?? process.env,
      stdio: options.capture ? ["ignore", "pipe", "pipe"] : "inherit",
    })
    // Set before npm has loaded far enough to start the check, which inherits it.
    if (options.niceness !== undefined && child.pid !== undefined)
      try {
        setPriority(child.pid, options.niceness)
      } catch {
        // Not allowed here: it runs at the tests' priority.
      }
    let output = ""
    child.stdout?.on("data", (d: Buffer) => {
      output += d.toString("utf8")
    })
    child.stderr?.on("data", (d: Buffer) => {
      output += d.toString("utf8")
    })
    const end = (code: number | null) =>
      resolve({ name, code, seconds: Math.round((Date.now() - started) / 1000), output })
    child.on("error", (error) => {
      output += String(error)
      end(-1)
    })
    child.on("close", end)
  })

/** The environment that asks vitest.config.ts for the whole matrix. */
const matrixEnv = (): NodeJS.ProcessEnv => {
  const node24 = execFileSync(process.execPath, [join(root, "scripts", "current-node.mjs")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim()
  return { ...process.env, [SECOND_CLI_VARIABLE]: SECOND_CLI, [SECOND_NODE_VARIABLE]: node24 }
}

const main = async () => {
  const quick = process.argv.includes("--quick")
  const started = Date.now()
  // A run that writes no summary must not leave .ci/run the last one's.
  rmSync(join(root, ".tmp", "vitest-report.json"), { force: true })
  const checks = Promise.all(
    CHECKS.map((name) => run(name, "npm", ["run", "-s", name], { capture: true, niceness: CHECK_NICENESS })),
  )
  const tests = await run(
    "vitest",
    process.execPath,
    [vitest, "run", "--reporter=default", `--reporter=${join(root, "scripts", "test-report.ts")}`],
    { env: quick ? process.env : matrixEnv() },
  )
  const ended = await checks
  console.log("\n=== checks")
  for (const check of ended)
    console.log(
      `  ${check.name.padEnd(10)} ${check.code === 0 ? "ok" : `FAILED (exit ${check.code})`}  ${check.seconds} s`,
    )
  for (const check of ended.filter((c) => c.code !== 0))
    console.log(`\n--- ${check.name}\n${check.output.trim()}`)
  console.log(`\nnpm test: tests ${tests.seconds} s, all ${Math.round((Date.now() - started) / 1000)} s`)
  process.exitCode = tests.code === 0 && ended.every((c) => c.code === 0) ? 0 : 1
}

await main()

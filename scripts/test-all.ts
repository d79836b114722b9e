/**
 * `npm test`'s vitest passes, one after another, each with its own JSON
 * report, then one summary summed over them (.tmp/vitest-report.json, which
 * .ci/run turns into its closing line):
 *
 *   1. Node 20 (this machine's), the pinned CLI: unit and end to end
 *   2. Node 20, CLI 2.1.282 (the alias devDependency): end to end, but the
 *      terminal front end, whose `npm start` always runs the pinned CLI
 *   3. Node 24 (scripts/current-node.mjs, a registry package in .cache/):
 *      unit and end to end, Node 24 first on PATH for the processes it starts
 *
 * The suite passes only if every pass does. `npm test -- --quick` runs pass 1.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { delimiter, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { COMPAT_FILTER } from "./compat-filter.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const vitest = join(root, "node_modules", "vitest", "vitest.mjs")

/** The older CLI every run also drives (package.json's `claude-code-<version>` alias). */
export const SECOND_CLI = "2.1.282"

interface Pass {
  readonly name: string
  readonly node: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

interface Assertion {
  readonly fullName?: string
  readonly status?: string
  readonly failureMessages?: ReadonlyArray<string>
}

interface Report {
  readonly testResults?: ReadonlyArray<{
    readonly name?: string
    readonly message?: string
    readonly assertionResults?: ReadonlyArray<Assertion>
  }>
  readonly numPassedTests: number
  readonly numFailedTests: number
  readonly numPendingTests: number
  readonly numTodoTests: number
  readonly numTotalTests: number
  readonly success: boolean
}

const passes = (quick: boolean): Pass[] => {
  const first: Pass = {
    name: `node ${process.versions.node}, CLI pinned`,
    node: process.execPath,
    args: [],
    env: {},
  }
  if (quick) return [first]
  const node24 = execFileSync(process.execPath, [join(root, "scripts", "current-node.mjs")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim()
  const version24 = execFileSync(node24, ["--version"], { encoding: "utf8" }).trim().slice(1)
  return [
    first,
    {
      name: `node ${process.versions.node}, CLI ${SECOND_CLI}, end to end`,
      node: process.execPath,
      args: COMPAT_FILTER,
      env: { CVG_TEST_CLI: SECOND_CLI },
    },
    {
      name: `node ${version24}, CLI pinned`,
      node: node24,
      args: [],
      env: { PATH: [dirname(node24), process.env.PATH ?? ""].join(delimiter) },
    },
  ]
}

/** One line a failed test (file, name, the message's first line), or a file that failed to run. */
const failures = (report: Report | undefined): string[] =>
  (report?.testResults ?? []).flatMap((file) => {
    const where = (file.name ?? "?").replace(`${root}/`, "")
    const failed = (file.assertionResults ?? []).filter((a) => a.status === "failed")
    if (failed.length === 0) return file.message ? [`${where}: ${firstLine(file.message)}`] : []
    return failed.map((a) => `${where} > ${a.fullName ?? "?"}: ${firstLine(a.failureMessages?.[0] ?? "")}`)
  })

const firstLine = (text: string): string =>
  (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 240)

const main = () => {
  const quick = process.argv.includes("--quick")
  mkdirSync(join(root, ".tmp"), { recursive: true })
  const results: Array<{ pass: Pass; report: Report | undefined; seconds: number }> = []
  for (const [index, pass] of passes(quick).entries()) {
    const file = join(root, ".tmp", `vitest-pass-${index + 1}.json`)
    rmSync(file, { force: true })
    console.log(`\n=== pass ${index + 1}: ${pass.name}`)
    const started = Date.now()
    // Under CI the config's own JSON reporter writes VITEST_JSON_REPORT; elsewhere these flags do.
    spawnSync(
      pass.node,
      [vitest, "run", ...pass.args, "--reporter=default", "--reporter=json", `--outputFile.json=${file}`],
      { cwd: root, stdio: "inherit", env: { ...process.env, ...pass.env, VITEST_JSON_REPORT: file } },
    )
    let report: Report | undefined
    try {
      report = JSON.parse(readFileSync(file, "utf8")) as Report
    } catch {
      report = undefined
    }
    results.push({ pass, report, seconds: Math.round((Date.now() - started) / 1000) })
  }
  const sum = (key: keyof Omit<Report, "success" | "testResults">) =>
    results.reduce((total, r) => total + (r.report?.[key] ?? 0), 0)
  const summary = {
    numPassedTests: sum("numPassedTests"),
    numFailedTests: sum("numFailedTests"),
    numPendingTests: sum("numPendingTests"),
    numTodoTests: sum("numTodoTests"),
    numTotalTests: sum("numTotalTests"),
    passes: results.map((r) => ({
      name: r.pass.name,
      seconds: r.seconds,
      ...r.report,
      testResults: undefined,
    })),
  }
  writeFileSync(join(root, ".tmp", "vitest-report.json"), `${JSON.stringify(summary, null, 2)}\n`)
  console.log("\n=== passes")
  for (const r of results)
    console.log(
      `  ${r.pass.name.padEnd(40)} ${r.report ? `${r.report.numPassedTests} passed, ${r.report.numFailedTests} failed` : "no report"}  ${r.seconds} s`,
    )
  // CI keeps only the tail of what ran, so the failures are named again here, last.
  for (const r of results)
    for (const line of failures(r.report)) console.log(`  ✗ [pass ${results.indexOf(r) + 1}] ${line}`)
  const ok = results.every((r) => r.report?.success === true && r.report.numTotalTests > 0)
  process.exitCode = ok ? 0 : 1
}

main()

/**
 * The canary: `npm run compat -- <version|latest>` installs that Claude Code
 * release from the registry into a temporary folder (its package and native
 * binary, nothing global), runs the end-to-end suite against it
 * (CVG_TEST_CLI=<its binary>), and prints one row per feature: pass, fail, or
 * not offered (the plugin's capability table, cli-version.ts, says this
 * release lacks it, and its tests passed the graceful behaviour). It ends
 * `compat <version>: <n>/<m> pass`, m counting the rows offered, and exits 1
 * when a row failed.
 *
 * The terminal front end is left out: `npm start` always runs the project's
 * pinned CLI (node_modules/.bin first on PATH).
 *
 *   npm run compat -- latest
 *   npm run compat -- 2.1.282 [--keep]     (--keep leaves the install folder)
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Feature, FEATURES, parseCliVersion, supportOf } from "../cli-version.ts"
import { COMPAT_FILTER } from "./compat-filter.ts"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const PACKAGE = "@anthropic-ai/claude-code"

/** A feature of the table: which tests prove it, and the capability it needs (if any). */
interface Row {
  readonly feature: string
  /** `<file>` or `<file>: <test title fragment>`. */
  readonly tests: ReadonlyArray<string>
  readonly needs?: Feature
}

export const ROWS: ReadonlyArray<Row> = [
  {
    feature: "version and capabilities",
    tests: ["e2e/cli-version.e2e.test.ts: the capability table", "e2e/host.e2e.test.ts"],
  },
  { feature: "sign-in state, maintenance", tests: ["account.e2e.test.ts"] },
  { feature: "catalog probe", tests: ["e2e/live.e2e.test.ts: initialize probes the catalog"] },
  {
    feature: "streamed text and reasoning",
    tests: [
      "e2e/live.e2e.test.ts: streams reasoning and text",
      "testkit/cli.e2e.test.ts: initialize answers",
    ],
  },
  {
    feature: "approvals",
    tests: ["e2e/live.e2e.test.ts: asks before Bash", "testkit/cli.e2e.test.ts: can_use_tool round trip"],
  },
  { feature: "Write and Edit diffs", tests: ["e2e/live.e2e.test.ts: shows Write"] },
  { feature: "plans", tests: ["e2e/live.e2e.test.ts: turns TodoWrite into a plan"] },
  { feature: "questions", tests: ["e2e/live.e2e.test.ts: asks AskUserQuestion"] },
  { feature: "plugin tools", tests: ["e2e/live.e2e.test.ts: calls a plugin tool"] },
  {
    feature: "cancel",
    tests: ["e2e/live.e2e.test.ts: cancels a long Bash", "testkit/cli.e2e.test.ts: killAll ends a CLI"],
  },
  { feature: "steering", tests: ["e2e/live.e2e.test.ts: steers a running turn"] },
  { feature: "exit and resume", tests: ["e2e/live.e2e.test.ts: a CLI killed mid-turn"] },
  {
    feature: "live model and effort",
    tests: ["e2e/live.e2e.test.ts: changes the model and the effort live"],
  },
  { feature: "rewind and fork", tests: ["e2e/rewind.e2e.test.ts"] },
  {
    feature: "subagents as tasks",
    tests: [
      "e2e/tasks.e2e.test.ts: a background subagent",
      "e2e/tasks.e2e.test.ts: cancelTask stops",
      "e2e/tasks.e2e.test.ts: depth 2",
    ],
  },
  {
    feature: "forwarded subagent text",
    tests: ["e2e/tasks.e2e.test.ts: a foreground subagent", "e2e/cli-version.e2e.test.ts: subagent text"],
    needs: "forwardSubagentText",
  },
  { feature: "ultracode", tests: ["e2e/cli-version.e2e.test.ts: ultracode"], needs: "ultracodeEffort" },
  {
    feature: "left-out flags and the notice",
    tests: ["e2e/cli-version.e2e.test.ts: a chat on this CLI"],
  },
  { feature: "accounts side by side", tests: ["e2e/accounts.e2e.test.ts"] },
  { feature: "rate limits", tests: ["testkit/cli.e2e.test.ts: 429 with rate-limit headers"] },
]

const run = (command: string, args: string[], cwd: string) =>
  execFileSync(command, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }).trim()

/** Install the release into a fresh folder and return its native binary. */
const install = (version: string, folder: string): string => {
  writeFileSync(
    join(folder, "package.json"),
    `${JSON.stringify({ private: true, allowScripts: { [PACKAGE]: true } }, null, 2)}\n`,
  )
  run("npm", ["install", "--no-audit", "--no-fund", "--save-exact", `${PACKAGE}@${version}`], folder)
  const binary = join(folder, "node_modules", PACKAGE, "bin", "claude.exe")
  // The package's postinstall copies the native binary over a placeholder; check it ran.
  const printed = execFileSync(binary, ["--version"], { encoding: "utf8", timeout: 30_000 })
  if (!printed.startsWith(`${version} `))
    throw new Error(`${binary} --version printed ${printed.trim()}, not ${version}`)
  return binary
}

interface Assertion {
  readonly title: string
  readonly status: string
  readonly failureMessages?: ReadonlyArray<string>
}
interface Report {
  readonly testResults: ReadonlyArray<{ readonly name: string; readonly assertionResults: Assertion[] }>
}

const main = () => {
  const args = process.argv.slice(2)
  const keep = args.includes("--keep")
  const wanted = args.find((a) => !a.startsWith("--"))
  if (!wanted) {
    console.error("usage: npm run compat -- <version|latest> [--keep]")
    process.exit(2)
  }
  const version = /^\d+\.\d+\.\d+/.test(wanted)
    ? wanted
    : run("npm", ["view", `${PACKAGE}@${wanted}`, "version"], root)
  const folder = mkdtempSync(join(tmpdir(), `cvg-compat-${version}-`))
  try {
    console.log(`compat: installing ${PACKAGE}@${version} into ${folder}`)
    const binary = install(version, folder)
    const support = supportOf(parseCliVersion(version))
    if (support.unsupported) console.log(`compat: ${support.unsupported}`)
    mkdirSync(join(root, ".tmp"), { recursive: true })
    const reportFile = join(root, ".tmp", `compat-${version}.json`)
    rmSync(reportFile, { force: true })
    console.log(`compat: running the end-to-end suite against ${binary}`)
    const vitest = spawnSync(
      process.execPath,
      [
        join(root, "node_modules", "vitest", "vitest.mjs"),
        "run",
        ...COMPAT_FILTER,
        "--reporter=dot",
        "--reporter=json",
        `--outputFile.json=${reportFile}`,
      ],
      { cwd: root, stdio: "inherit", env: { ...process.env, CVG_TEST_CLI: binary } },
    )
    if (!existsSync(reportFile)) throw new Error(`vitest wrote no report (exit ${vitest.status})`)
    const report = JSON.parse(readFileSync(reportFile, "utf8")) as Report
    const tests = report.testResults.flatMap((file) =>
      file.assertionResults.map((a) => ({ file: file.name.slice(root.length + 1), ...a })),
    )
    const claimed = new Set<(typeof tests)[number]>()
    const lines: string[] = []
    let offered = 0
    let passed = 0
    for (const row of ROWS) {
      const mine = tests.filter((t) =>
        row.tests.some((spec) => {
          const [file, fragment] = spec.split(": ")
          return t.file === file && (fragment === undefined || t.title.includes(fragment))
        }),
      )
      for (const t of mine) claimed.add(t)
      const failed = mine.filter((t) => t.status !== "passed")
      const status =
        mine.length === 0
          ? "fail (no test ran)"
          : failed.length > 0
            ? `fail (${failed.map((t) => t.title).join("; ")})`
            : row.needs && !support.has(row.needs)
              ? `not offered (${FEATURES[row.needs].flag} is ${FEATURES[row.needs].since.text} and later)`
              : "pass"
      if (!status.startsWith("not offered")) offered++
      if (status === "pass") passed++
      lines.push(`  ${row.feature.padEnd(32)} ${status}`)
    }
    const stray = tests.filter((t) => !claimed.has(t))
    if (stray.length > 0) {
      const failed = stray.filter((t) => t.status !== "passed")
      offered++
      if (failed.length === 0) passed++
      lines.push(
        `  ${"other end-to-end tests".padEnd(32)} ${failed.length === 0 ? "pass" : `fail (${failed.map((t) => t.title).join("; ")})`}`,
      )
    }
    console.log(`\nClaude Code ${version}, feature by feature:`)
    for (const line of lines) console.log(line)
    console.log(`compat ${version}: ${passed}/${offered} pass`)
    process.exitCode = passed === offered ? 0 : 1
  } finally {
    if (keep) console.log(`compat: kept ${folder}`)
    else rmSync(folder, { recursive: true, force: true })
  }
}

main()

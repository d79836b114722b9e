/**
 * How soon the terminal front end takes input: from the command's spawn to
 * its input line (`› ` drawn in a pseudo-terminal, util-linux `script`), for
 * `npm start` as a person types it and for the bundle alone (`node
 * dist/tui/main.mjs`, the `cvg` command), beside the floors: a bare `node -e
 * ''` and the pinned CLI's own `claude --version`, spawn to exit. Also the
 * time until the session is ready (the demo's skills line: a prompt typed
 * earlier runs then).
 *
 * Five runs each (BENCH_RUNS), interleaved (one of each in turn), after one
 * warm-up round that also builds the bundle; medians. Each run gets a fresh
 * data folder (XDG_DATA_HOME) and no login, so it reaches the demo as a new
 * user's first `npm start` does.
 *
 * `npm run bench -- tui-start`. Last line:
 * `tui-start: npm start input line <a> ms (bundle <b> ms; node -e <c> ms; claude --version <d> ms)`.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"

const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const root = join(import.meta.dirname, "..")
const claude = join(root, "node_modules", ".bin", "claude")

interface Timing {
  /** Spawn to the input line (or to exit, for the floors). */
  readonly first: number
  /** Spawn to the session's readiness (the demo's skills line), when measured. */
  readonly ready?: number
}

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** End a run's whole process group (the front end cleans up on SIGTERM), and wait for it. */
const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    try {
      process.kill(-child.pid!, "SIGTERM")
    } catch {}
    setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {}
    }, 10_000).unref()
  })

/** `command` in a pseudo-terminal of 120 columns: when the input line appears, and when the session is ready. */
const toInputLine = (command: string): Promise<Timing> =>
  new Promise((resolve, reject) => {
    const data = mkdtempSync(join(tmpdir(), "cvg-bench-tui-"))
    const env = {
      ...process.env,
      XDG_DATA_HOME: data,
      TERM: "xterm-256color",
      COLUMNS: "120",
      LINES: "40",
      // No login: the demo, as on a fresh machine.
      ANTHROPIC_API_KEY: "",
      npm_config_update_notifier: "false",
    }
    const started = performance.now()
    const child = spawn("script", ["-qfec", `stty cols 120 rows 40; ${command}`, "/dev/null"], {
      cwd: root,
      env,
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
    })
    let out = ""
    let first: number | undefined
    const timer = setTimeout(
      () => void stop(child).then(() => reject(new Error(`no input line:\n${out}`))),
      120_000,
    )
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
      if (first === undefined && out.includes("›")) first = performance.now() - started
      if (first !== undefined && /skills: \d+/.test(out)) {
        const ready = performance.now() - started
        clearTimeout(timer)
        void stop(child).then(() => {
          rmSync(data, { recursive: true, force: true })
          resolve({ first: first ?? ready, ready })
        })
      }
    })
  })

/** Spawn to exit. */
const toExit = (file: string, args: ReadonlyArray<string>): Promise<Timing> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const child = spawn(file, args, { stdio: "ignore" })
    child.on("error", reject)
    child.on("exit", () => resolve({ first: performance.now() - started }))
  })

const CASES: ReadonlyArray<readonly [string, () => Promise<Timing>]> = [
  ["npm start", () => toInputLine("npm start")],
  ["node dist/tui/main.mjs (cvg)", () => toInputLine(`${process.execPath} dist/tui/main.mjs`)],
  ["node -e ''", () => toExit(process.execPath, ["-e", ""])],
  ["claude --version", () => toExit(claude, ["--version"])],
]

export const main = async (): Promise<Record<string, number>> => {
  execFileSync(process.execPath, ["scripts/build-tui.mjs", "--if-stale"], { cwd: root, stdio: "inherit" })
  const results = new Map<string, Timing[]>(CASES.map(([name]) => [name, []]))
  process.stdout.write(`warm-up round, then ${RUNS} interleaved rounds…\n`)
  for (let round = 0; round <= RUNS; round++)
    for (const [name, run] of CASES) {
      const timing = await run()
      if (round > 0) results.get(name)!.push(timing)
    }
  const ms = (n: number | undefined) => (n === undefined ? "" : `${Math.round(n)} ms`)
  process.stdout.write(
    `\nmedians of ${RUNS} runs (node ${process.version}; load average ${loadavg()[0]!.toFixed(2)})\n`,
  )
  process.stdout.write(
    `${"".padEnd(30)} ${"input line / exit".padStart(18)} ${"session ready".padStart(14)}\n`,
  )
  const medians = new Map<string, number>()
  for (const [name, timings] of results) {
    const first = median(timings.map((t) => t.first))
    medians.set(name, first)
    const readies = timings.flatMap((t) => (t.ready === undefined ? [] : [t.ready]))
    const ready = readies.length > 0 ? median(readies) : undefined
    process.stdout.write(`${name.padEnd(30)} ${ms(first).padStart(18)} ${ms(ready).padStart(14)}\n`)
  }
  const [npm, bundle, node, cli] = CASES.map(([name]) => Math.round(medians.get(name)!))
  process.stdout.write(
    `tui-start: npm start input line ${npm} ms (bundle ${bundle} ms; node -e ${node} ms; claude --version ${cli} ms)\n`,
  )
  return { npmStartMs: npm!, bundleMs: bundle!, nodeMs: node!, claudeVersionMs: cli! }
}

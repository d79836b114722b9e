// Recorder: `npm run record -- <scenario|all> [more scenarios] [--debug]`
// Runs scenarios against the real CLI and writes testdata/<scenario>/ (for the
// pinned CLI) or testdata/cli-<version>/<scenario>/ (for another one, chosen
// with CVG_TEST_CLI=<version|path>: `npm run record:2.1.282 -- all`):
//   stdout.jsonl, stdin.jsonl          the first process ("main")
//   stdout.<label>.jsonl, stdin.<label>.jsonl   later processes (e.g. resume)
//   stderr[.<label>].txt               only when non-empty
//   requests.jsonl                     model request metadata (no bodies)
//   projects/                          HOME/.claude/projects, scrubbed
//   meta.json                          scenario, CLI version, args, exit codes, notes
// Everything is scrubbed (scrub.ts): no system prompt, stable placeholder paths.

import { execFileSync } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
import { basename, dirname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { claudeBinary, pinnedCliVersion, testCliVersion } from "./cli.ts"
import { runScenario, SCENARIOS, type ScenarioDef, type ScenarioRun, scenarioByName } from "./scenarios.ts"
import {
  findLeaks,
  makePathMap,
  type PathMap,
  replacePaths,
  scrubFrame,
  scrubJsonl,
  scrubValue,
} from "./scrub.ts"

const here = dirname(fileURLToPath(import.meta.url))
export const TESTDATA = resolve(here, "..", "testdata")

/** Files above this size are reported (recordings should stay small). */
const MAX_FILE_BYTES = 1_000_000

/** Where recordings of the CLI under test go: the pinned one's at the top, any other's in its own tree. */
export function recordingRoot(): string {
  const version = testCliVersion()
  return version === pinnedCliVersion() ? TESTDATA : join(TESTDATA, `cli-${version}`)
}

export function cliVersion(): string {
  try {
    return execFileSync(claudeBinary(), ["--version"], { encoding: "utf8", timeout: 20_000 }).trim()
  } catch (e) {
    return `unknown (${String(e)})`
  }
}

function jsonl(items: readonly unknown[]): string {
  return items.length ? `${items.map((x) => JSON.stringify(x)).join("\n")}\n` : ""
}

function listFiles(dir: string): string[] {
  const out: string[] = []
  let entries: string[]
  try {
    entries = readdirSync(dir)
  } catch {
    return out
  }
  for (const e of entries) {
    const p = join(dir, e)
    const st = statSync(p)
    if (st.isDirectory()) out.push(...listFiles(p))
    else if (st.isFile()) out.push(p)
  }
  return out
}

/** Copy a transcript tree with scrubbing; path segments (encoded cwd) are mapped too. */
export function copyScrubbedTree(src: string, dest: string, map: PathMap): string[] {
  const written: string[] = []
  for (const file of listFiles(src)) {
    const rel = replacePaths(relative(src, file), map)
    const target = join(dest, rel)
    mkdirSync(dirname(target), { recursive: true })
    const raw = readFileSync(file)
    let text: string
    if (file.endsWith(".jsonl")) text = scrubJsonl(raw.toString("utf8"), map)
    else if (file.endsWith(".json")) {
      try {
        text = `${JSON.stringify(scrubValue(JSON.parse(raw.toString("utf8")), map), null, 2)}\n`
      } catch {
        text = replacePaths(raw.toString("utf8"), map)
      }
    } else if (raw.includes(0)) {
      writeFileSync(target, raw)
      written.push(target)
      continue
    } else text = replacePaths(raw.toString("utf8"), map)
    writeFileSync(target, text)
    written.push(target)
  }
  return written
}

export interface RecordResult {
  readonly name: string
  readonly ok: boolean
  readonly error?: string
  readonly durationMs: number
  readonly files: string[]
  readonly leaks: string[]
  readonly bigFiles: string[]
}

export function writeRecording(
  run: ScenarioRun,
  def: ScenarioDef,
  version: string,
  outRoot = TESTDATA,
): RecordResult {
  const out = join(outRoot, def.name)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const map = makePathMap(run.sandbox)
  const files: string[] = []
  const write = (name: string, text: string) => {
    const p = join(out, name)
    mkdirSync(dirname(p), { recursive: true })
    writeFileSync(p, text)
    files.push(p)
  }
  run.processes.forEach((p, i) => {
    const suffix = i === 0 ? "" : `.${p.label}`
    write(`stdout${suffix}.jsonl`, jsonl(p.frames.map((f) => scrubFrame(f, map))))
    write(`stdin${suffix}.jsonl`, jsonl(p.sent.map((f) => scrubFrame(f, map))))
    const err = p.stderr()
    if (err.trim()) write(`stderr${suffix}.txt`, replacePaths(err, map))
  })
  write("requests.jsonl", jsonl(run.server.requests))
  files.push(...copyScrubbedTree(run.sandbox.projects, join(out, "projects"), map))
  const error = run.error === undefined ? undefined : String((run.error as Error)?.stack ?? run.error)
  const meta = {
    scenario: def.name,
    description: def.description,
    cli_version: version,
    session_id: run.sessionId,
    env: scrubValue(def.env ?? {}, map),
    processes: run.processes.map((p, i) => ({
      label: p.label,
      files:
        i === 0 ? ["stdout.jsonl", "stdin.jsonl"] : [`stdout.${p.label}.jsonl`, `stdin.${p.label}.jsonl`],
      args: scrubValue(p.args, map),
      exit_code: p.exitCode ?? null,
      frames: p.frames.length,
    })),
    notes: scrubValue(run.notes, map),
    duration_ms: run.durationMs,
    ...(error ? { error: replacePaths(error, map) } : {}),
  }
  write("meta.json", `${JSON.stringify(meta, null, 2)}\n`)
  const leaks: string[] = []
  const bigFiles: string[] = []
  for (const f of files) {
    const text = readFileSync(f, "utf8")
    for (const l of findLeaks(text)) leaks.push(`${relative(outRoot, f)}: ${l}`)
    if (text.includes(basename(run.sandbox.root))) leaks.push(`${relative(outRoot, f)}: sandbox path`)
    if (statSync(f).size > MAX_FILE_BYTES) bigFiles.push(relative(outRoot, f))
  }
  return {
    name: def.name,
    ok: error === undefined,
    ...(error ? { error } : {}),
    durationMs: run.durationMs,
    files,
    leaks,
    bigFiles,
  }
}

export async function recordScenario(
  def: ScenarioDef,
  version: string,
  debug = false,
  outRoot = TESTDATA,
): Promise<RecordResult> {
  const run = await runScenario(def, { throwOnError: false, debug })
  try {
    return writeRecording(run, def, version, outRoot)
  } finally {
    await run.cleanup()
  }
}

async function main() {
  const args = process.argv.slice(2)
  const debug = args.includes("--debug")
  const names = args.filter((a) => !a.startsWith("--"))
  if (names.length === 0) {
    console.error(
      `usage: npm run record -- <scenario|all> [...] [--debug]\nscenarios: ${SCENARIOS.map((s) => s.name).join(", ")}`,
    )
    process.exit(2)
  }
  const defs = names.includes("all") ? [...SCENARIOS] : names.map(scenarioByName)
  const version = cliVersion()
  const outRoot = recordingRoot()
  console.log(`claude ${version} → ${relative(process.cwd(), outRoot) || "."}`)
  let failed = 0
  for (const def of defs) {
    const r = await recordScenario(def, version, debug, outRoot)
    const status = r.ok ? "ok" : "FAILED"
    console.log(
      `${status.padEnd(6)} ${def.name.padEnd(22)} ${String(r.durationMs).padStart(6)} ms  ${r.files.length} files`,
    )
    if (r.error) console.log(`       ${r.error.split("\n").slice(0, 3).join("\n       ")}`)
    for (const l of r.leaks) console.log(`  LEAK ${l}`)
    for (const b of r.bigFiles) console.log(`  BIG  ${b}`)
    if (!r.ok || r.leaks.length) failed++
  }
  process.exit(failed ? 1 : 0)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  void main()
}

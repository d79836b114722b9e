/**
 * The isolation benchmark's list for two (or more) trees side by side,
 * interleaved round by round: per round and tree, one fresh host process per
 * mode (the tree's own bench/isolation-worker.ts, its host and its plugin),
 * a cold list then a warm one, in-process and isolated in turn. On a shared
 * machine wall times swing with the load, so each tree's line gives the CPU
 * (host and plugin process together) beside them, and both ratios: isolated
 * over in-process, the median of per-round ratios. Under each mode's line,
 * where its CPU went: the host's and (isolated) the plugin process's main
 * thread, then their other threads (V8's compiler and collector helpers,
 * the thread pool), medians; then each mode's fastest and slowest round.
 *
 *   npm run bench -- isolation-list-ab <rounds> main=/tmp/main-copy this=.
 *
 * Every tree's hosts start with this tree's host flags (bench/isolation.ts
 * `HOST_FLAGS`). A tree needs its own `node_modules` (copied, not linked: a linked one
 * breaks the plugin process's permission model) and a worker that reports
 * CPU (copy this tree's bench/isolation-worker.ts there when it has none).
 * Last line: `isolation-list-ab: <name> cold <c>x (CPU <p>x), warm <w>x (CPU <q>x); …`.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { ensureCorpus } from "./corpus.ts"
import { type CpuSplit, HOST_FLAGS, homeOver, type Round } from "./isolation.ts"

type Mode = "in-process" | "process"
const MODES: ReadonlyArray<Mode> = ["in-process", "process"]

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
const ms = (x: number) => `${x.toFixed(1)} ms`

const runWorker = (tree: string, mode: Mode, home: string): Round => {
  const child = spawnSync(
    process.execPath,
    [...HOST_FLAGS, "--import", "tsx", join(tree, "bench/isolation-worker.ts"), mode, "list", home],
    { cwd: tree, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  )
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${tree} ${mode} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as Round
}

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const [roundsArg = "8", ...treeArgs] = args
  const rounds = Number(roundsArg)
  if (treeArgs.length === 0) throw new Error("isolation-list-ab: name the trees, name=<dir> …")
  const trees = treeArgs.map((arg) => {
    const at = arg.indexOf("=")
    return { name: arg.slice(0, at), dir: resolve(arg.slice(at + 1)) }
  })
  const corpus = ensureCorpus()
  const home = homeOver("home-list", corpus.listConfigDir)
  console.log(`load average before: ${load()}; ${corpus.listFiles} sessions, ${rounds} rounds, trees in turn`)
  const results = new Map(trees.map((t) => [t.name, [] as Array<Record<Mode, Round>>]))
  for (let r = 0; r < rounds; r++)
    for (const t of trees) {
      const round = {} as Record<Mode, Round>
      for (const mode of r % 2 === 0 ? MODES : [...MODES].reverse())
        round[mode] = runWorker(t.dir, mode, home)
      results.get(t.name)?.push(round)
    }
  const headline: string[] = []
  for (const t of trees) {
    const rs = results.get(t.name) ?? []
    const of = (mode: Mode, f: (r: Round) => number) => median(rs.map((r) => f(r[mode])))
    const ratio = (f: (r: Round) => number) => median(rs.map((r) => f(r.process) / f(r["in-process"])))
    const fields = {
      cold: (r: Round) => r.coldMs ?? Number.NaN,
      warm: (r: Round) => r.warmMs ?? Number.NaN,
      coldCpu: (r: Round) => r.coldCpuMs ?? Number.NaN,
      warmCpu: (r: Round) => r.warmCpuMs ?? Number.NaN,
    }
    // Where the CPU went, medians of each part (a worker that reports no split prints NaN).
    const splitOf = (mode: Mode, which: (r: Round) => CpuSplit | undefined) => {
      const part = (k: keyof CpuSplit) => of(mode, (r) => which(r)?.[k] ?? Number.NaN).toFixed(1)
      const host = `host ${part("hostMain")} + ${part("hostThreads")}`
      return mode === "process" ? `${host}, plugin ${part("pluginMain")} + ${part("pluginThreads")}` : host
    }
    for (const mode of MODES) {
      console.log(
        `${t.name.padEnd(8)} ${mode.padEnd(11)} cold ${ms(of(mode, fields.cold))} (CPU ${ms(of(mode, fields.coldCpu))}), warm ${ms(of(mode, fields.warm))} (CPU ${ms(of(mode, fields.warmCpu))})`,
      )
      console.log(
        `${"".padEnd(20)} CPU ms, main thread + others: cold ${splitOf(mode, (r) => r.coldCpuSplit)}; warm ${splitOf(mode, (r) => r.warmCpuSplit)}`,
      )
    }
    // The spread beside the medians: a median alone cannot say whether two trees differ by more than the noise.
    const range = (mode: Mode, f: (r: Round) => number) => {
      const xs = rs.map((r) => f(r[mode])).sort((a, b) => a - b)
      return `${(xs[0] ?? Number.NaN).toFixed(0)}–${(xs[xs.length - 1] ?? Number.NaN).toFixed(0)}`
    }
    console.log(
      `${"".padEnd(20)} spread, fastest–slowest ms: ${MODES.map((m) => `${m} cold ${range(m, fields.cold)} (CPU ${range(m, fields.coldCpu)}), warm ${range(m, fields.warm)} (CPU ${range(m, fields.warmCpu)})`).join("; ")}`,
    )
    const line = `${t.name} cold ${ratio(fields.cold).toFixed(2)}x (CPU ${ratio(fields.coldCpu).toFixed(2)}x), warm ${ratio(fields.warm).toFixed(2)}x (CPU ${ratio(fields.warmCpu).toFixed(2)}x)`
    console.log(`${t.name.padEnd(8)} isolated over in-process: ${line.slice(t.name.length + 1)}`)
    headline.push(line)
  }
  console.log(`load average after: ${load()}`)
  console.log(`isolation-list-ab: ${headline.join("; ")}`)
}

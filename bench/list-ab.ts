/**
 * The scale benchmark's list series for two (or more) trees side by side,
 * interleaved round by round: each tree's `bench/scale-worker.ts` bundled
 * by esbuild, then per round and tree a cold list (no summary cache), a
 * warm one (the cache the cold one wrote) and the floor (the file-system
 * calls alone), each a fresh process; for the last tree also the floor plus
 * decoding the ends, and plus the summaries' facts (what of the list's
 * cost is not the file-system calls; LIST_AB_PIECES=0 skips them). On a
 * shared machine the wall times
 * swing with the load, so each line gives the CPU medians beside them, and
 * the ratios over the floor both ways.
 *
 *   npm run bench -- list-ab <rounds> <sessions> main=/tmp/main-copy this=.
 *
 * `<sessions>`: 1000, 10000 or 50000 (bench/scale-corpus.ts's list corpora).
 * A tree needs its own `node_modules` only for esbuild to resolve its
 * imports. Last line: `list-ab: <name> cold <c>x floor (CPU <p>x), warm <w>x; …`.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { bundleScaleWorker, loadAverage, median } from "./ab-trees.ts"
import type { Sample } from "./sample.ts"
import { ensureListCorpus } from "./scale-corpus.ts"
import { runWorkerJson } from "./worker-json.ts"

const workDir = join(import.meta.dirname, "..", "node_modules", ".cache", "list-ab")

interface Tree {
  readonly name: string
  readonly worker: string
  readonly storage: string
}

interface Series {
  readonly cold: Sample[]
  readonly warm: Sample[]
  readonly floor: Sample[]
  /** The floor's calls plus decoding the ends; plus taking the summaries' facts (this tree's worker has them). */
  readonly decode: Sample[]
  readonly facts: Sample[]
}

const paired = (a: ReadonlyArray<Sample>, b: ReadonlyArray<Sample>, f: (s: Sample) => number) =>
  median(a.map((s, i) => f(s) / f(b[i] ?? s)))
const load = loadAverage
const ms = (x: number) => `${x.toFixed(1)} ms`

const bundle = async (name: string, dir: string): Promise<Tree> => ({
  name,
  worker: await bundleScaleWorker(workDir, name, dir),
  storage: join(workDir, `${name}-storage.json`),
})

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const [roundsArg = "5", countArg = "1000", ...treeArgs] = args
  const rounds = Number(roundsArg)
  const count = Number(countArg)
  if (treeArgs.length === 0) throw new Error("list-ab: name the trees, name=<dir> …")
  const corpus = ensureListCorpus(count, 50_000)
  const trees: Tree[] = []
  for (const arg of treeArgs) {
    const at = arg.indexOf("=")
    trees.push(await bundle(arg.slice(0, at), arg.slice(at + 1)))
  }
  const call = (t: Tree, ...rest: string[]) =>
    runWorkerJson<Sample>([t.worker, ...rest], { BENCH_STORAGE: t.storage })
  console.log(`load average before: ${load()}; ${count} sessions, ${rounds} rounds, trees in turn`)
  const series = new Map<Tree, Series>(
    trees.map((t) => [t, { cold: [], warm: [], floor: [], decode: [], facts: [] }]),
  )
  const pieces = process.env.LIST_AB_PIECES !== "0"
  for (let r = 0; r < rounds; r++)
    for (const t of trees) {
      const s = series.get(t) as Series
      s.floor.push(call(t, "floor-list", corpus))
      rmSync(t.storage, { force: true })
      s.cold.push(call(t, "list", corpus, String(count * 2)))
      s.warm.push(call(t, "list", corpus, String(count * 2)))
      if (pieces && t === trees[trees.length - 1]) {
        s.decode.push(call(t, "floor-decode", corpus))
        s.facts.push(call(t, "floor-facts", corpus))
      }
    }
  const headline: string[] = []
  for (const t of trees) {
    const { cold, warm, floor } = series.get(t) as Series
    const wall = (s: Sample) => s.ms
    const cpu = (s: Sample) => s.cpuMs
    const peak = (xs: Sample[]) => (median(xs.map((s) => s.callPeak - s.base)) / 1048576).toFixed(1)
    console.log(
      `${t.name.padEnd(8)} cold ${ms(median(cold.map(wall)))} (CPU ${ms(median(cold.map(cpu)))}), warm ${ms(median(warm.map(wall)))} (CPU ${ms(median(warm.map(cpu)))}), floor ${ms(median(floor.map(wall)))} (CPU ${ms(median(floor.map(cpu)))}); over the floor: cold ${paired(cold, floor, wall).toFixed(2)}x (CPU ${paired(cold, floor, cpu).toFixed(2)}x), warm ${paired(warm, floor, wall).toFixed(2)}x (CPU ${paired(warm, floor, cpu).toFixed(2)}x); peak cold ${peak(cold)} MB, warm ${peak(warm)} MB; ${cold[0]?.count} listed`,
    )
    headline.push(
      `${t.name} cold ${paired(cold, floor, wall).toFixed(2)}x floor (CPU ${paired(cold, floor, cpu).toFixed(2)}x), warm ${paired(warm, floor, wall).toFixed(2)}x (CPU ${paired(warm, floor, cpu).toFixed(2)}x)`,
    )
  }
  const last = trees[trees.length - 1] as Tree
  const { floor, decode, facts } = series.get(last) as Series
  if (decode.length > 0)
    console.log(
      `${last.name.padEnd(8)} the floor's pieces: floor + decoding the ends ${ms(median(decode.map((s) => s.ms)))} (CPU ${ms(median(decode.map((s) => s.cpuMs)))}, ${paired(decode, floor, (s) => s.cpuMs).toFixed(2)}x the floor's CPU); + the summaries' facts ${ms(median(facts.map((s) => s.ms)))} (CPU ${ms(median(facts.map((s) => s.cpuMs)))}, ${paired(facts, floor, (s) => s.cpuMs).toFixed(2)}x)`,
    )
  console.log(`load average after: ${load()}`)
  console.log(`list-ab: ${headline.join("; ")} at ${count}`)
}

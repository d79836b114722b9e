import { join } from "node:path"
import { bundleScaleWorker, loadAverage, median } from "./ab-trees.ts"
import type { Sample } from "./sample.ts"
import { ensureHugeRecord, ensureReadTarget } from "./scale-corpus.ts"
import { runWorkerJson } from "./worker-json.ts"

const workDir = join(import.meta.dirname, "..", "node_modules", ".cache", "read-ab")

interface Measured extends Sample {
  readonly returned: number
  readonly parsedLines?: number
  readonly parsedBytes?: number
}

const spread = (xs: ReadonlyArray<number>) => `${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}`
const load = loadAverage
const mib = (bytes: number) => bytes / 1024 / 1024

const bundle = async (name: string, dir: string): Promise<{ name: string; worker: string }> => ({
  name,
  worker: await bundleScaleWorker(workDir, name, dir),
})

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const split = args.indexOf("--")
  const [roundsArg = "5", sizeArg = "100", ...treeArgs] = split < 0 ? args : args.slice(0, split)
  const nodeFlags = split < 0 ? [] : args.slice(split + 1)
  const rounds = Number(roundsArg)
  if (treeArgs.length === 0) throw new Error("read-ab: name the trees, name=<dir> …")
  const target = sizeArg.startsWith("huge-")
    ? ensureHugeRecord(Number(sizeArg.slice(5)))
    : ensureReadTarget(Number(sizeArg))
  const trees = []
  for (const arg of treeArgs) {
    const at = arg.indexOf("=")
    trees.push(await bundle(arg.slice(0, at), arg.slice(at + 1)))
  }
  const floorWorker = (trees[trees.length - 1] as { worker: string }).worker
  const env = { BENCH_STORAGE: join(workDir, "storage.json") }
  const read = (worker: string) =>
    runWorkerJson<Measured>([...nodeFlags, worker, "read", target.configDir, target.cwd, target.id], env)
  const floor = (mode: string) => runWorkerJson<Measured>([floorWorker, mode, ...target.paths], env)
  // The answer, written once for the answer's own floor (its objects allocated anew, strings shared).
  const answerFile = join(workDir, "answer.json")
  runWorkerJson<Measured>(
    [floorWorker, "read-save", target.configDir, target.cwd, target.id, answerFile],
    env,
  )
  const copy = () => runWorkerJson<Measured>([floorWorker, "answer-copy", answerFile], env)
  console.log(
    `load average before: ${load()}; ${sizeArg} (${mib(target.bytes).toFixed(1)} MB), ${rounds} rounds, trees rotated${nodeFlags.length > 0 ? `; reads run with ${nodeFlags.join(" ")}` : ""}`,
  )
  const reads = new Map<string, Measured[]>(trees.map((t) => [t.name, []]))
  const floors: Measured[] = []
  const parses: Measured[] = []
  const keeps: Measured[] = []
  const copies: Measured[] = []
  for (let r = 0; r < rounds; r++) {
    floors.push(floor("floor-read"))
    for (let i = 0; i < trees.length; i++) {
      const t = trees[(i + r) % trees.length] as { name: string; worker: string }
      reads.get(t.name)?.push(read(t.worker))
    }
    parses.push(floor("floor-parse"))
    keeps.push(floor("floor-keep"))
    copies.push(copy())
  }
  // A reader's floor: the lines it parses held to the end (the chain is known at the last message), and its answer allocated.
  const readerFloors: Measured[] = keeps.map((k, i) => ({
    ...k,
    ms: k.ms + (copies[i]?.ms ?? 0),
    cpuMs: k.cpuMs + (copies[i]?.cpuMs ?? 0),
  }))
  const wall = (xs: ReadonlyArray<Measured>) => xs.map((s) => s.ms)
  const cpu = (xs: ReadonlyArray<Measured>) => xs.map((s) => s.cpuMs)
  const peak = (xs: ReadonlyArray<Measured>) => xs.map((s) => mib(s.callPeak - s.base))
  const parsed = parses[0]
  console.log(
    `floor (read + line breaks): ${median(wall(floors)).toFixed(1)} ms, CPU ${median(cpu(floors)).toFixed(1)} ms (${spread(cpu(floors))})`,
  )
  console.log(
    `floor + parse of ${parsed?.parsedLines} lines (${mib(parsed?.parsedBytes ?? 0).toFixed(1)} MB): ${median(wall(parses)).toFixed(1)} ms, CPU ${median(cpu(parses)).toFixed(1)} ms (${spread(cpu(parses))})`,
  )
  console.log(
    `floor + parse, values held: ${median(wall(keeps)).toFixed(1)} ms, CPU ${median(cpu(keeps)).toFixed(1)} ms (${spread(cpu(keeps))}), peak ${median(peak(keeps)).toFixed(1)} MB`,
  )
  console.log(
    `the answer's objects allocated (strings shared): ${median(wall(copies)).toFixed(1)} ms, CPU ${median(cpu(copies)).toFixed(1)} ms (${spread(cpu(copies))}), peak ${median(peak(copies)).toFixed(1)} MB`,
  )
  console.log(
    `a reader's floor (the two above, per round): CPU ${median(cpu(readerFloors)).toFixed(1)} ms, ${median(readerFloors.map((s, i) => s.cpuMs / (floors[i]?.cpuMs ?? s.cpuMs))).toFixed(2)}x the floor's CPU`,
  )
  const headline: string[] = []
  for (const t of trees) {
    const xs = reads.get(t.name) ?? []
    const ratio = (to: ReadonlyArray<Measured>, f: (s: Measured) => number) =>
      median(xs.map((s, i) => f(s) / f(to[i] ?? s))).toFixed(2)
    console.log(
      `${t.name.padEnd(8)} wall ${median(wall(xs)).toFixed(1)} ms (${spread(wall(xs))}), CPU ${median(cpu(xs)).toFixed(1)} ms (${spread(cpu(xs))}), peak ${median(peak(xs)).toFixed(1)} MB (${spread(peak(xs))}); over floor ${ratio(floors, (s) => s.ms)}x (CPU ${ratio(floors, (s) => s.cpuMs)}x), over floor+parse ${ratio(parses, (s) => s.ms)}x (CPU ${ratio(parses, (s) => s.cpuMs)}x), over a reader's floor CPU ${ratio(readerFloors, (s) => s.cpuMs)}x; ${xs[0]?.count} items, ${(xs[0]?.returned ?? 0) / 1e6} M chars`,
    )
    headline.push(`${t.name} ${median(cpu(xs)).toFixed(0)} ms CPU (${median(peak(xs)).toFixed(0)} MB peak)`)
  }
  console.log(`load average after: ${load()}`)
  console.log(`read-ab: ${headline.join("; ")} at ${sizeArg}`)
}

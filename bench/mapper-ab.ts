/**
 * The live mapper of two trees A/B in one process: `npm run bench --
 * mapper-ab [rounds] main=<dir> this=.` (each tree's `map.ts` and `wire.ts`
 * bundled from its own code with its own libraries).
 *
 * The stream is bench/mapper.ts's (every recording, ids new per repetition,
 * at least 50,000 frames). Per round each tree gets a fresh mapper; the
 * floor (`JSON.parse`, its value read) and each tree's decode + map run
 * chunk by chunk (250 lines) in an order rotated every chunk, timed in CPU
 * (the process's own time: a busy machine's other processes do not count).
 * Printed: each tree over the floor, and each tree over the first, as
 * medians of per-round ratios (so a round the machine slowed counts once,
 * for every side alike), their quartiles, and the load average.
 * Last line: `mapper-ab: <tree> <x>x JSON.parse (<r> of <first>) …`.
 */
import { mkdirSync } from "node:fs"
import { loadavg } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { build } from "esbuild"
import { permutations } from "./orders.ts"
import { repeatedLines } from "./recordings.ts"

interface Tree {
  readonly name: string
  readonly makeMapper: (o: { sessionId: string }) => {
    map(frame: unknown, runId: string): { events: unknown[] }
  }
  readonly decodeLine: (line: string) => { kind: string; frame?: unknown }
}

const workDir = join(import.meta.dirname, "..", "node_modules", ".cache", "mapper-ab")

const bundleTree = async (name: string, dir: string): Promise<Tree> => {
  mkdirSync(workDir, { recursive: true })
  const outfile = join(workDir, `${name}.mjs`)
  await build({
    stdin: {
      contents: 'export { makeMapper } from "./map.ts"\nexport { decodeLine } from "./wire.ts"\n',
      resolveDir: resolve(dir),
      loader: "ts",
    },
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    outfile,
  })
  const module = (await import(`${pathToFileURL(outfile).href}?${Date.now()}`)) as Omit<Tree, "name">
  return { name, makeMapper: module.makeMapper, decodeLine: module.decodeLine }
}

const streamLines = (): string[] => repeatedLines(50_000)

const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const sorted = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)
const at = (xs: ReadonlyArray<number>, q: number) => sorted(xs)[Math.floor(q * (xs.length - 1))] as number

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const rounds = /^\d+$/.test(args[0] ?? "") ? Number(args[0]) : 12
  const treeArgs = args.filter((a) => a.includes("="))
  if (treeArgs.length === 0) throw new Error("mapper-ab: name the trees, name=<dir> …")
  const trees: Tree[] = []
  for (const arg of treeArgs)
    trees.push(await bundleTree(arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)))
  const lines = streamLines()
  let sink = 0
  const floor = (from: number, to: number) => {
    for (let i = from; i < to; i++)
      if ((JSON.parse(lines[i] as string) as { type?: unknown }).type === "x") sink++
  }
  const orders = permutations(trees.length + 1)
  const load = loadavg()[0] as number
  const overFloor = trees.map((): number[] => [])
  const overFirst = trees.map((): number[] => [])
  for (let r = -2; r < rounds; r++) {
    const sides = [
      floor,
      ...trees.map((t) => {
        const mapper = t.makeMapper({ sessionId: "bench" })
        return (from: number, to: number) => {
          for (let i = from; i < to; i++) {
            const decoded = t.decodeLine(lines[i] as string)
            if (decoded.kind === "frame") sink += mapper.map(decoded.frame, "run").events.length
          }
        }
      }),
    ]
    const times = sides.map(() => 0)
    for (let from = 0, chunk = 0; from < lines.length; from += 250, chunk++) {
      const to = Math.min(from + 250, lines.length)
      const order = orders[chunk % orders.length] as number[]
      for (const side of order) {
        const start = cpuNow()
        ;(sides[side] as (a: number, b: number) => void)(from, to)
        times[side] = (times[side] as number) + cpuNow() - start
      }
    }
    if (r < 0) continue
    trees.forEach((_, i) => {
      overFloor[i]?.push((times[i + 1] as number) / (times[0] as number))
      overFirst[i]?.push((times[i + 1] as number) / (times[1] as number))
    })
  }
  const q = (xs: number[]) =>
    `${at(xs, 0.5).toFixed(3)} (quartiles ${at(xs, 0.25).toFixed(3)}-${at(xs, 0.75).toFixed(3)})`
  console.log(
    `${lines.length} frames, ${rounds} rounds (+2 warm-up), load average ${load.toFixed(2)} → ${(loadavg()[0] as number).toFixed(2)}`,
  )
  const first = trees[0]?.name ?? ""
  for (const [i, t] of trees.entries())
    console.log(
      `${t.name.padEnd(8)} over JSON.parse ${q(overFloor[i] ?? [])}, over ${first} ${q(overFirst[i] ?? [])}`,
    )
  if (sink < 0) console.log(sink)
  console.log(
    `mapper-ab: ${trees.map((t, i) => `${t.name} ${at(overFloor[i] ?? [], 0.5).toFixed(2)}x JSON.parse (${at(overFirst[i] ?? [], 0.5).toFixed(3)} of ${first})`).join(", ")}`,
  )
}

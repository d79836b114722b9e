/**
 * Two trees side by side on one benchmark: `npm run bench -- ab <bench>
 * <a>=<tree> <b>=<tree> [--runs N] [-- <the bench's args>]`.
 *
 * A tree is a folder (a checkout with its own node_modules) or `@<git rev>`
 * of this repository, written under node_modules/.cache/ab/ (git archive)
 * with a node_modules of links to this checkout's packages: not one link to
 * the folder, since the plugin process may read its bundle only by its
 * real path.
 *
 * Each run is the benchmark once in each tree, a fresh process each, the
 * tree that goes first alternating; a benchmark whose `main` returns its
 * figures (bench/run.ts) writes them to a file this driver reads. Both
 * trees use this checkout's corpora. Printed: each figure's median per
 * tree, b over a, and every run's value, so the spread shows beside the
 * medians; each run's output goes to a log beside the trees.
 *
 * Last line: `ab: <bench> b/a <figure> <ratio>, …` over the medians.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { corpusRoot } from "./corpus.ts"
import { type Figures, loadAverage, median, repoRoot, workDirOf } from "./workers.ts"

interface Tree {
  readonly name: string
  readonly dir: string
}

/** `@<rev>` written out as a tree (once per commit), else the folder as given. */
const treeOf = (arg: string, workDir: string): Tree => {
  const at = arg.indexOf("=")
  if (at <= 0) throw new Error(`ab: a tree is <name>=<folder or @rev>, not ${arg}`)
  const name = arg.slice(0, at)
  const where = arg.slice(at + 1)
  if (!where.startsWith("@")) return { name, dir: resolve(where) }
  const commit = execFileSync("git", ["rev-parse", "--verify", `${where.slice(1)}^{commit}`], {
    cwd: repoRoot,
    encoding: "utf8",
  }).trim()
  const dir = join(workDir, commit.slice(0, 12))
  if (!existsSync(join(dir, "package.json"))) {
    rmSync(dir, { recursive: true, force: true })
    mkdirSync(join(dir, "node_modules"), { recursive: true })
    execFileSync("sh", ["-c", `git archive ${commit} | tar -x -C ${JSON.stringify(dir)}`], { cwd: repoRoot })
    for (const entry of readdirSync(join(repoRoot, "node_modules")))
      if (entry !== ".cache")
        symlinkSync(join(repoRoot, "node_modules", entry), join(dir, "node_modules", entry))
  }
  return { name, dir }
}

/** The benchmark once in `tree`: its figures, its output kept in `log`. */
const runOnce = (tree: Tree, bench: string, args: ReadonlyArray<string>, log: string): Figures => {
  const out = `${log}.json`
  rmSync(out, { force: true })
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", join(tree.dir, "bench/run.ts"), bench, ...args],
    {
      cwd: tree.dir,
      env: { BENCH_CORPUS_DIR: corpusRoot, ...process.env, BENCH_FIGURES: out },
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    },
  )
  writeFileSync(log, `${child.stdout}\n${child.stderr}`)
  if (child.status !== 0 || !existsSync(out))
    throw new Error(
      `ab: ${bench} in ${tree.name} failed (exit ${child.status}), see ${log}:\n${child.stderr.slice(-2000)}`,
    )
  console.log(`  ${tree.name}: ${child.stdout.trim().split("\n").pop()}`)
  return JSON.parse(readFileSync(out, "utf8")) as Figures
}

const fixed = (x: number) =>
  Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)

export const main = async (argv: ReadonlyArray<string>): Promise<Figures> => {
  const split = argv.indexOf("--")
  const own = split < 0 ? argv : argv.slice(0, split)
  const benchArgs = split < 0 ? [] : argv.slice(split + 1)
  const runsAt = own.indexOf("--runs")
  const runs = runsAt < 0 ? 5 : Number(own[runsAt + 1])
  const [bench, ...treeArgs] = own.filter((a, i) => a !== "--runs" && (runsAt < 0 || i !== runsAt + 1))
  if (bench === undefined || bench === "ab" || treeArgs.length !== 2 || !(runs > 0))
    throw new Error(
      "usage: npm run bench -- ab <bench> <a>=<folder|@rev> <b>=<folder|@rev> [--runs N] [-- args]",
    )
  const workDir = workDirOf("ab")
  const [a, b] = treeArgs.map((arg) => treeOf(arg, workDir)) as [Tree, Tree]
  console.log(
    `ab: ${bench} ${benchArgs.join(" ")}, ${runs} runs, ${a.name} (${a.dir}) and ${b.name} (${b.dir}) in turn`,
  )
  console.log(`load average before: ${loadAverage()}`)
  const seen = { [a.name]: [] as Figures[], [b.name]: [] as Figures[] }
  for (let run = 0; run < runs; run++) {
    console.log(`run ${run + 1}:`)
    for (const tree of run % 2 === 0 ? [a, b] : [b, a])
      seen[tree.name]?.push(
        runOnce(tree, bench, benchArgs, join(workDir, `${bench}-${tree.name}-${run + 1}.log`)),
      )
  }
  console.log(`load average after: ${loadAverage()}`)
  const keys = [...new Set([...(seen[a.name] ?? []), ...(seen[b.name] ?? [])].flatMap((f) => Object.keys(f)))]
  const valuesOf = (tree: Tree, key: string) => (seen[tree.name] ?? []).map((f) => f[key] ?? Number.NaN)
  const ratios: Figures = {}
  console.log(
    `\n${"figure".padEnd(34)} ${a.name.padStart(9)} ${b.name.padStart(9)}   b/a   runs (${a.name} | ${b.name})`,
  )
  for (const key of keys) {
    const [xa, xb] = [valuesOf(a, key), valuesOf(b, key)]
    const ratio = median(xb) / median(xa)
    ratios[key] = ratio
    console.log(
      `${key.padEnd(34)} ${fixed(median(xa)).padStart(9)} ${fixed(median(xb)).padStart(9)} ${ratio.toFixed(3).padStart(6)}   ${xa.map(fixed).join(" ")} | ${xb.map(fixed).join(" ")}`,
    )
  }
  console.log(
    `ab: ${bench} b/a ${keys.map((k) => `${k} ${(ratios[k] ?? Number.NaN).toFixed(3)}`).join(", ")}`,
  )
  return ratios
}

/**
 * What the two-tree A/B benchmarks (list-ab, read-ab) share: each tree's
 * scale worker bundled on its own (its code, not this checkout's), the load
 * average beside the figures, and medians.
 */
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { build } from "esbuild"

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

/** The 1, 5 and 15 minute load averages, as /proc/loadavg gives them. */
export const loadAverage = (): string =>
  readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")

/** Bundle `dir`'s bench/scale-worker.ts into `workDir` as `<name>-worker.mjs`; its path. */
export const bundleScaleWorker = async (workDir: string, name: string, dir: string): Promise<string> => {
  const worker = join(workDir, `${name}-worker.mjs`)
  await build({
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    entryPoints: [join(resolve(dir), "bench/scale-worker.ts")],
    outfile: worker,
  })
  return worker
}

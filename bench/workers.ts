/**
 * What every benchmark driver shares: its workers bundled to plain
 * JavaScript (so no TypeScript loader runs in a measured process), each run
 * to its end in a Node process of its own with its answer as the last line
 * it prints, and medians.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

export const repoRoot = join(import.meta.dirname, "..")

/** A benchmark's scratch folder, made if missing: under node_modules/.cache, which git and the linter skip. */
export const workDirOf = (name: string): string => {
  const dir = join(repoRoot, "node_modules", ".cache", name)
  mkdirSync(dir, { recursive: true })
  return dir
}

export interface BundleOptions {
  /** Packages left as imports (the Agent SDK, measured as its own package). */
  readonly external?: ReadonlyArray<string>
}

/** `bench/<name>.ts` bundled by esbuild into `<dir>/<name>.mjs`; its path. */
export const bundleWorker = async (
  name: string,
  dir: string,
  options: BundleOptions = {},
): Promise<string> => {
  // Imported here: only a bench that bundles pays for loading esbuild.
  const { build } = await import("esbuild")
  const outfile = join(dir, `${name}.mjs`)
  await build({
    entryPoints: [join(repoRoot, "bench", `${name}.ts`)],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    ...(options.external && { external: [...options.external] }),
  })
  return outfile
}

/**
 * A worker run to its end with this Node from the repository's root, its
 * answer the last line it prints, as JSON. One that fails, or ends without
 * a JSON line, fails the benchmark with its command line and output.
 */
export const runWorkerJson = <A>(args: ReadonlyArray<string>, env: Record<string, string> = {}): A => {
  const child = spawnSync(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: "utf8",
    // A worker may print long series before its answer.
    maxBuffer: 64 * 1024 * 1024,
  })
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${args.join(" ")} failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as A
}

export const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

/** The value at quantile `q` (0 to 1) of `xs`. */
export const quantile = (xs: ReadonlyArray<number>, q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? Number.NaN

/** The 1, 5 and 15 minute load averages: a figure taken on a busy machine says so. */
export const loadAverage = (): string =>
  readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")

/** A benchmark's figures by name, as `main` returns them for bench/ab.ts: times in ms, memory in MB. */
export type Figures = Record<string, number>

/**
 * An ACP adapter's own memory, for bench/acp.ts: the adapter process and
 * every descendant that is not a `claude` CLI (ours: the ACP host and the
 * plugin process; theirs: the adapter alone, checked, not assumed). Linux
 * /proc only.
 *
 * Rules kept:
 * - The tree is sampled while the scenario runs (every SAMPLE_MS), so a
 *   child that ends before the scenario does still counts; each process
 *   counts with its own peak (VmHWM), and the figure is the sum of peaks
 *   (an upper bound on the tree's peak at any one instant).
 * - A process is a CLI when its executable is the `claude` binary; every
 *   other descendant is the adapter's, and is named in the breakdown (by
 *   what it runs at its last sample). A child caught between fork and exec
 *   (its parent's executable and command line) is not counted until it
 *   runs its own program: its pages are its parent's (a short-lived
 *   `claude --version` caught there would count as a `node` of the adapter's).
 * - The sampling runs on a worker thread (this file, `serveTreeWatcher`), not on the
 *   bench's own event loop, where the SDK client reads the adapter's
 *   messages: reading /proc (a starting CLI's cmdline can block) would delay
 *   that reading, the more the more processes an adapter has.
 * - The floors beside them (the end of this file): a bare Node, a Node with
 *   only the ACP SDK, our bundle evaluated.
 */
import { spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, join } from "node:path"
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads"
import { buildSync } from "esbuild"

const SAMPLE_MS = 25

export interface TreePeak {
  /** Sum of each non-CLI process's peak RSS, MB. */
  readonly totalMb: number
  /** Peak MB by role (`adapter`, `plugin process`, or the executable's name). */
  readonly byRole: Readonly<Record<string, number>>
  /** CLI processes seen (not counted). */
  readonly clis: number
}

const read = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/** Peak resident set of one process, in MB (undefined when it is gone). */
export const peakMb = (pid: number): number | undefined => {
  const m = /VmHWM:\s+(\d+) kB/.exec(read(`/proc/${pid}/status`) ?? "")
  return m ? Number(m[1]) / 1024 : undefined
}

/** Parent pid of every process now. */
const parents = (): Map<number, number> => {
  const out = new Map<number, number>()
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue
    const stat = read(`/proc/${name}/stat`)
    // The command name is in parentheses and may hold spaces: the fields after the last ")".
    const rest = stat?.slice(stat.lastIndexOf(")") + 2).split(" ")
    if (rest?.[1]) out.set(Number(name), Number(rest[1]))
  }
  return out
}

const descendants = (root: number, ppids: Map<number, number>): number[] => {
  const byParent = new Map<number, number[]>()
  for (const [pid, ppid] of ppids) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid])
  const out: number[] = []
  const walk = (pid: number) => {
    for (const child of byParent.get(pid) ?? []) {
      out.push(child)
      walk(child)
    }
  }
  walk(root)
  return out
}

type Role = "cli" | string

const exeOf = (pid: number): string | undefined => {
  try {
    return readlinkSync(`/proc/${pid}/exe`)
  } catch {
    return undefined
  }
}

const roleOf = (pid: number, root: number, parent: number | undefined): Role | undefined => {
  if (pid === root) return "adapter"
  const exe = exeOf(pid)
  if (exe === undefined) return undefined
  const raw = read(`/proc/${pid}/cmdline`) ?? ""
  // Forked and not yet exec'd: its parent's pages, shared, and not yet the program it will run.
  if (parent !== undefined && exe === exeOf(parent) && raw === read(`/proc/${parent}/cmdline`))
    return undefined
  const cmdline = raw.split("\0")
  if (/claude/.test(basename(exe))) return "cli"
  if (/node/.test(basename(exe)) && cmdline.some((a) => a.includes("cvg-plugin-process")))
    return "plugin process"
  return basename(exe)
}

/** Sample the adapter's tree on this thread until `stop`; the peaks of every non-CLI process. */
export const sampleTree = (root: number) => {
  const seen = new Map<number, { role: Role; peak: number }>()
  const sample = () => {
    const ppids = parents()
    for (const pid of [root, ...descendants(root, ppids)]) {
      const known = seen.get(pid)
      // Asked again each time: a child seen between fork and exec is not counted until it runs its program.
      const role = roleOf(pid, root, ppids.get(pid)) ?? known?.role
      const peak = peakMb(pid)
      if (role === undefined || peak === undefined) continue
      seen.set(pid, { role, peak: Math.max(peak, known?.peak ?? 0) })
    }
  }
  sample()
  const timer = setInterval(sample, SAMPLE_MS)
  return {
    /** Take a last sample and stop. */
    stop: (): TreePeak => {
      clearInterval(timer)
      sample()
      const byRole: Record<string, number> = {}
      let totalMb = 0
      let clis = 0
      for (const { role, peak } of seen.values()) {
        if (role === "cli") {
          clis++
          continue
        }
        byRole[role] = (byRole[role] ?? 0) + peak
        totalMb += peak
      }
      return { totalMb, byRole, clis }
    },
  }
}

/**
 * One worker thread that samples the trees it is given (sampleTree there),
 * started and ready before the first adapter is: a tree is sampled from the
 * moment `watch` is called, as on this thread before.
 */
export const startTreeWatcher = async () => {
  // ACP_BENCH_SAMPLE_HERE=1: on the bench's own thread, as before 2026-12-01 (to measure what the worker changes).
  if (process.env.ACP_BENCH_SAMPLE_HERE === "1")
    return {
      watch: (root: number) => {
        const tree = sampleTree(root)
        let peak: TreePeak | undefined
        return { stop: async (): Promise<TreePeak> => (peak ??= tree.stop()) }
      },
      close: async () => 0,
    }
  // The bench runs under tsx, whose loader a worker does not inherit: registered there first.
  const start = `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))})
    .then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}) })`
  const worker = new Worker(start, { eval: true, workerData: { treeWatcher: true } })
  const answers = new Map<number, (peak: TreePeak) => void>()
  worker.on("message", (m: { ready?: true; root?: number; peak?: TreePeak }) => {
    if (m.root !== undefined && m.peak) answers.get(m.root)?.(m.peak)
  })
  await new Promise<void>((resolve, reject) => {
    worker.once("message", () => resolve())
    worker.once("error", reject)
  })
  return {
    /** Sample `root`'s tree from now until `stop`. */
    watch: (root: number) => {
      worker.postMessage({ watch: root })
      let result: Promise<TreePeak> | undefined
      return {
        /** Take a last sample and stop. */
        stop: (): Promise<TreePeak> =>
          (result ??= new Promise<TreePeak>((resolve) => {
            answers.set(root, resolve)
            worker.postMessage({ stop: root })
          })),
      }
    },
    close: () => worker.terminate(),
  }
}

// ---------------------------------------------------------------------------
// The floors the adapters are read against

/**
 * Our ACP bundle evaluated and nothing started (`--help`): its peak RSS at
 * exit, MB. `--help` exits before main.ts imports the ACP side, so every
 * chunk is imported first, under the compile cache the entry turns on.
 */
export const bundleLoaded = (node24: string, root: string): number => {
  const dir = join(root, "dist/acp")
  const code = [
    `import { readdirSync, readFileSync } from "node:fs"`,
    `import * as nodeModule from "node:module"`,
    `process.on("exit", () => process.stderr.write("HWM " + /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1] + "\\n"))`,
    `nodeModule.enableCompileCache?.(${JSON.stringify(join(root, "node_modules/.cache/cvg-acp-compile"))})`,
    `for (const f of readdirSync(${JSON.stringify(dir)})) if (/-[A-Z0-9]{8}\\.mjs$/.test(f)) await import(${JSON.stringify(`${dir}/`)} + f)`,
    `await import(${JSON.stringify(join(dir, "main.mjs"))})`,
  ].join("\n")
  const out = spawnSync(node24, ["--input-type=module", "-e", code, "--", "--help"], { encoding: "utf8" })
  const kb = /HWM (\d+)/.exec(out.stderr)?.[1]
  return kb ? Number(kb) / 1024 : Number.NaN
}

/** A bare Node process, idle: the floor of any one process. */
export const bareNode = async (node24: string, idleMs: number): Promise<number> => {
  const child = spawn(node24, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  await new Promise((r) => setTimeout(r, idleMs))
  const mb = peakMb(child.pid!) ?? Number.NaN
  child.kill("SIGKILL")
  return mb
}

/**
 * A Node that only imports the official ACP SDK (bundled and minified by
 * esbuild, as an adapter would ship it), idle 300 ms: what any adapter built
 * on the SDK the issue requires costs before it does anything.
 */
export const sdkOnlyNode = async (node24: string, root: string): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-sdk-"))
  try {
    const out = join(dir, "sdk-only.mjs")
    buildSync({
      stdin: {
        contents: `import * as acp from "@agentclientprotocol/sdk/unstable"; globalThis.__acp = acp; setInterval(() => {}, 1000)`,
        resolveDir: root,
        loader: "js",
      },
      bundle: true,
      minify: true,
      platform: "node",
      format: "esm",
      outfile: out,
      logLevel: "warning",
    })
    const child = spawn(node24, [out], { stdio: "ignore" })
    await new Promise((r) => setTimeout(r, 300))
    const mb = peakMb(child.pid!) ?? Number.NaN
    child.kill("SIGKILL")
    return mb
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The watcher's worker thread: samples each tree it is told to watch, and answers a stop with its peaks. */
const serveTreeWatcher = () => {
  const trees = new Map<number, ReturnType<typeof sampleTree>>()
  parentPort?.on("message", (m: { watch?: number; stop?: number }) => {
    if (m.watch !== undefined) trees.set(m.watch, sampleTree(m.watch))
    if (m.stop !== undefined) {
      const tree = trees.get(m.stop)
      trees.delete(m.stop)
      if (tree) parentPort?.postMessage({ root: m.stop, peak: tree.stop() })
    }
  })
  parentPort?.postMessage({ ready: true })
}

if (!isMainThread && (workerData as { treeWatcher?: boolean } | undefined)?.treeWatcher) serveTreeWatcher()

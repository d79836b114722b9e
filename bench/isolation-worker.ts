/**
 * One measured round of the isolation benchmark (bench/isolation.ts), in a
 * fresh process: the repo's plugin started by the real host (startHost) in
 * the given mode, then through `host.call` as a front end calls it:
 * - `list`: list_sessions cold (empty storage, every file read), then warm
 *   (the summary cache the cold call wrote);
 * - `read`: read_session of the 85 MB transcript.
 * Nothing of the history code has run before the call in either mode.
 *
 *   node --import tsx bench/isolation-worker.ts <process|in-process> <list|read> <home> <cwd> <sessionId>
 *
 * Prints one JSON line: the times (wall, and for the list the CPU of the
 * host and the plugin process together, and split into each process's main
 * thread and its other threads: V8's compiler and collector helpers, the
 * thread pool), the page faults each process took during each call, what
 * the calls returned, and the plugin process's resident and peak memory
 * (isolated), the host's peak.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { startHost } from "../host/core/host.ts"
import type { CallFaults, CpuSplit } from "./isolation.ts"
import { settleListCache } from "./list-cache.ts"

const [mode = "process", task = "list", home = "", cwd = "", sessionId = ""] = process.argv.slice(2)
const repoRoot = join(import.meta.dirname, "..")

const kb = (status: string, key: string) =>
  Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) * 1024
const memoryOf = (pid: number | "self") => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    return { rss: kb(status, "VmRSS"), peak: kb(status, "VmHWM") }
  } catch {
    return { rss: 0, peak: 0 }
  }
}

/** CPU time in ms of every thread of a process, from the scheduler's own count (nanoseconds, not clock ticks). */
const threadsCpuMs = (pid: number): number => {
  let ns = 0
  try {
    for (const task of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0])
  } catch {
    return 0
  }
  return ns / 1e6
}

/** CPU time in ms of a process's main thread alone (its task id is its pid). */
const mainThreadCpuMs = (pid: number): number => {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6
  } catch {
    return 0
  }
}

/**
 * The page faults a process has taken so far (its minor faults, every
 * thread: /proc/<pid>/stat's tenth field): where a fault is dear (this VM,
 * ~12-14 µs), a fresh process's first touches of its heap are a share of a
 * cold call (docs/performance-log.md, `isolation`, page faults).
 */
const faultsOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    // The fields after the command's closing parenthesis: state is the third field, minflt the tenth.
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[7])
  } catch {
    return 0
  }
}

const main = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "cvg-isolation-bench-"))
  const host = await startHost({
    pluginDir: repoRoot,
    home,
    dataDir,
    env: { HOME: home, PATH: "/usr/bin:/bin" },
    isolation: mode === "in-process" ? "in-process" : "process",
    recordEvents: false,
  })
  const plugin = host.pluginProcess()
  const idle = plugin ? memoryOf(plugin.pid) : { rss: 0, peak: 0 }
  /** Each process's CPU so far: main thread and all threads (in-process, the plugin's is 0). */
  const cpuNow = () => ({
    hostMain: mainThreadCpuMs(process.pid),
    host: threadsCpuMs(process.pid),
    pluginMain: plugin ? mainThreadCpuMs(plugin.pid) : 0,
    plugin: plugin ? threadsCpuMs(plugin.pid) : 0,
  })
  /** The call's CPU: the host's and the plugin process's together (in-process, the host's alone). */
  const cpu: number[] = []
  const splits: CpuSplit[] = []
  const faults: CallFaults[] = []
  const faultsNow = () => ({ host: faultsOf(process.pid), plugin: plugin ? faultsOf(plugin.pid) : 0 })
  const timed = async <A>(f: () => Promise<A>): Promise<[number, A]> => {
    const started = performance.now()
    const before = cpuNow()
    const faultsBefore = faultsNow()
    const value = await f()
    const ms = performance.now() - started
    const after = cpuNow()
    const faultsAfter = faultsNow()
    faults.push({
      host: faultsAfter.host - faultsBefore.host,
      plugin: faultsAfter.plugin - faultsBefore.plugin,
    })
    const split: CpuSplit = {
      hostMain: after.hostMain - before.hostMain,
      hostThreads: after.host - after.hostMain - (before.host - before.hostMain),
      pluginMain: after.pluginMain - before.pluginMain,
      pluginThreads: after.plugin - after.pluginMain - (before.plugin - before.pluginMain),
    }
    cpu.push(split.hostMain + split.hostThreads + split.pluginMain + split.pluginThreads)
    splits.push(split)
    return [ms, value]
  }
  const out: Record<string, unknown> = { mode, task }
  if (task === "list") {
    const [coldMs, cold] = await timed(() => host.call("claude", "listSessions", { limit: 1_000_000 }))
    // The summary cache (a shard per project folder) is written after the answer: wait for all of it, outside the timing.
    await settleListCache(host.storage, 10_000)
    const [warmMs, warm] = await timed(() => host.call("claude", "listSessions", { limit: 1_000_000 }))
    Object.assign(out, {
      coldMs,
      warmMs,
      coldCpuMs: cpu[0],
      warmCpuMs: cpu[1],
      coldCpuSplit: splits[0],
      warmCpuSplit: splits[1],
      coldFaults: faults[0],
      warmFaults: faults[1],
      count: cold.sessions.length,
      warmCount: warm.sessions.length,
    })
  } else {
    const [readMs, read] = await timed(() => host.call("claude", "readSession", { sessionId, cwd }))
    Object.assign(out, { readMs, readFaults: faults[0], count: read.items.length })
  }
  const after = plugin ? memoryOf(plugin.pid) : { rss: 0, peak: 0 }
  Object.assign(out, {
    pluginIdleRss: idle.rss,
    pluginRss: after.rss,
    pluginPeak: after.peak,
    hostPeak: memoryOf("self").peak,
  })
  await host.close()
  rmSync(dataDir, { recursive: true, force: true })
  process.stdout.write(`${JSON.stringify(out)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)

/**
 * One host of the isolation benchmark (bench/isolation.ts) in a process of
 * its own, as a front end runs one: a plugin started by the real host
 * (startHost) in the given mode and called through `host.call`.
 *
 *   node --import tsx bench/isolation-worker.ts <process|in-process> list <home>
 *   node --import tsx bench/isolation-worker.ts <process|in-process> read <home> <cwd> <sessionId>
 *   node --import tsx bench/isolation-worker.ts <process|in-process> live <frames file>
 *
 * - `list`: list_sessions cold (empty storage, every file read), then warm
 *   (the summary cache the cold call wrote); `read`: read_session. Nothing
 *   of the history code has run before the call in either mode. Prints one
 *   JSON line: the host's start, each call's wall time and CPU (host and
 *   plugin process together), what it returned, the plugin process's
 *   memory and the host's peak.
 * - `live`: the replay fixture, one replay of the frames file per `replay`
 *   line on stdin, each answered with a JSON line (wall time, CPU, events
 *   heard); `rss` answers the plugin process's resident set; the end of
 *   stdin closes the host.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { type Host, startHost } from "../host/core/host.ts"
import { makeTempWorld } from "../host/testing/testing.ts"
import { settleListCache } from "./measure.ts"

const [mode = "process", task = "list", ...rest] = process.argv.slice(2)
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

/** CPU time in ms of every thread of a process, from the scheduler's own count (ns, not clock ticks). */
const cpuMsOf = (pid: number): number => {
  let ns = 0
  try {
    for (const thread of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0])
  } catch {
    return 0
  }
  return ns / 1e6
}

const start = async (pluginDir: string, home: string, dataDir: string) => {
  const started = performance.now()
  const host = await startHost({
    pluginDir,
    home,
    dataDir,
    env: { HOME: home, PATH: "/usr/bin:/bin" },
    isolation: mode === "in-process" ? "in-process" : "process",
    recordEvents: false,
  })
  return { host, startMs: performance.now() - started }
}

/** The call's wall time and the CPU it took in this process and the plugin process. */
const timed = async <A>(host: Host, call: () => Promise<A>) => {
  const pid = host.pluginProcess()?.pid
  const cpu = () => cpuMsOf(process.pid) + (pid ? cpuMsOf(pid) : 0)
  const cpu0 = cpu()
  const started = performance.now()
  const value = await call()
  return { ms: performance.now() - started, cpuMs: cpu() - cpu0, value }
}

const history = async () => {
  const [home = "", cwd = "", sessionId = ""] = rest
  const dataDir = mkdtempSync(join(tmpdir(), "cvg-isolation-bench-"))
  const { host, startMs } = await start(repoRoot, home, dataDir)
  const plugin = host.pluginProcess()
  const idle = plugin ? memoryOf(plugin.pid) : { rss: 0, peak: 0 }
  const out: Record<string, unknown> = { startMs }
  if (task === "list") {
    const list = () => host.call("claude", "listSessions", { limit: 1_000_000 })
    const cold = await timed(host, list)
    // The summary cache is written after the answer: wait for all of it, outside the timing.
    await settleListCache(host.storage, 10_000)
    const warm = await timed(host, list)
    Object.assign(out, {
      coldMs: cold.ms,
      coldCpuMs: cold.cpuMs,
      warmMs: warm.ms,
      warmCpuMs: warm.cpuMs,
      count: cold.value.sessions.length,
    })
  } else {
    const read = await timed(host, () => host.call("claude", "readSession", { sessionId, cwd }))
    Object.assign(out, { readMs: read.ms, readCpuMs: read.cpuMs, count: read.value.items.length })
  }
  const after = plugin ? memoryOf(plugin.pid) : { rss: 0, peak: 0 }
  Object.assign(out, {
    pluginIdleRss: idle.rss,
    pluginPeak: after.peak,
    hostPeak: memoryOf("self").peak,
  })
  await host.close()
  rmSync(dataDir, { recursive: true, force: true })
  process.stdout.write(`${JSON.stringify(out)}\n`)
}

const live = async () => {
  const [framesPath = ""] = rest
  const world = makeTempWorld("cvg-isolation-live-")
  const { host } = await start(
    join(repoRoot, "host/testing/fixtures/replay-plugin"),
    world.home,
    world.hostData,
  )
  let events = 0
  host.events.subscribe((e) => {
    if (e.kind === "agent_event") events++
  })
  const replay = async () => {
    events = 0
    const { ms, cpuMs, value } = await timed(host, () =>
      host.call("replay", "prompt", { sessionId: "bench", text: framesPath }),
    )
    if (Number(value.run_id) !== events)
      throw new Error(`emitted ${value.run_id} events, the host heard ${events}`)
    return { ms, cpuMs, events }
  }
  const say = (value: unknown) => process.stdout.write(`${JSON.stringify(value)}\n`)
  say({ ready: true })
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === "replay") say(await replay())
    else if (line === "rss") say({ rss: host.pluginProcess()?.rssBytes() ?? 0 })
  }
  await host.close()
  world.cleanup()
}

;(task === "live" ? live() : history()).then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)

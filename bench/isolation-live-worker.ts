/**
 * One mode's host for the isolation benchmark's live part (bench/isolation.ts),
 * in a process of its own, as a front end runs one: the replay fixture
 * (host/testing/fixtures/replay-plugin) started by the real host (startHost) in the
 * given mode, then one replay of the frames file per `replay` line on stdin,
 * each answered with one JSON line on stdout: wall time, the CPU of this
 * process (the host, and in-process the plugin too) and of the plugin
 * process, the events the host heard, and this process's mark-compacts
 * during the replay. `rss` answers the plugin process's resident set; end
 * of stdin closes the host. Until 2026-12-06 both modes' hosts ran in the
 * bench's own process, one heap for both (docs/performance-log.md,
 * `isolation`).
 *
 *   node --import tsx bench/isolation-live-worker.ts <process|in-process> <frames file>
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { createInterface } from "node:readline"
import { startHost } from "../host/core/host.ts"
import { makeTempWorld } from "../host/testing/testing.ts"

const [mode = "process", framesPath = ""] = process.argv.slice(2)
const repoRoot = join(import.meta.dirname, "..")

/** CPU time (ms) of a process from /proc (user + system). */
const cpuOfPid = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
}

/** This process's mark-compacts so far. */
const majorGcs = { count: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
      majorGcs.count++
}).observe({ entryTypes: ["gc"] })

const main = async () => {
  const world = makeTempWorld("cvg-isolation-live-")
  const host = await startHost({
    pluginDir: join(repoRoot, "host/testing/fixtures/replay-plugin"),
    home: world.home,
    dataDir: join(world.hostData, mode),
    env: { HOME: world.home, PATH: "/usr/bin:/bin" },
    isolation: mode === "in-process" ? "in-process" : "process",
    recordEvents: false,
  })
  let events = 0
  host.events.subscribe((e) => {
    if (e.kind === "agent_event") events++
  })
  const replay = async () => {
    const pid = host.pluginProcess()?.pid
    events = 0
    const gcs0 = majorGcs.count
    const cpu0 = process.cpuUsage()
    const child0 = pid ? cpuOfPid(pid) : 0
    const started = performance.now()
    const answer = await host.call("replay", "prompt", { sessionId: "bench", text: framesPath })
    const ms = performance.now() - started
    const used = process.cpuUsage(cpu0)
    const hostCpuMs = (used.user + used.system) / 1000
    const pluginCpuMs = pid ? cpuOfPid(pid) - child0 : 0
    if (Number(answer.run_id) !== events)
      throw new Error(`emitted ${answer.run_id} events, the host heard ${events}`)
    // The observer hears a collection a turn later: one right at the end counts in no replay.
    return { ms, hostCpuMs, pluginCpuMs, events, majorGcs: majorGcs.count - gcs0 }
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

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)

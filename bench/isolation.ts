/**
 * Isolation benchmark: what running the plugin in a process of its own
 * (host/plugin-process/) costs against running it in the host's process,
 * measured side by side in one run, both through the real host
 * (`startHost`, `host.call`, grants enforced by the host's broker).
 *
 * - History (bench/corpus.ts: 1,000 sessions / 1.41 GB, one 85 MB
 *   transcript): list_sessions cold and warm, read_session; each round one
 *   fresh worker process per mode (bench/isolation-worker.ts), the modes in
 *   turn (the list twice as many rounds as the read: it is short, and a
 *   loaded machine spreads it most); a ratio is the median of the rounds'
 *   ratios, printed beside the ratio of each mode's fastest run (on a
 *   loaded machine the load only adds, so the fastest runs are the
 *   steadiest view of the cost itself). A
 *   HOME's `.claude` links to the corpus (the grant covers its real place).
 *   The two modes are compared in one state: each call is its process's
 *   first, made once `startHost` has returned, when neither the host nor the
 *   plugin process still works (checked by hand: docs/performance-log.md,
 *   `isolation`, the list's seventh pass), so both run the history code
 *   cold. What stays unequal is isolation's own: in-process the plugin
 *   shares the host's heap and its copy of Effect and Zod, which the host's
 *   start already ran; and the isolated list could overlap the host's
 *   reads with the plugin's summaries on the second core, but does not (the
 *   same pass).
 * - Live frames: the recorded CLI frames (as bench/mapper.ts makes them,
 *   ≥ 50,000) piped through a real child process into the replay fixture
 *   (host/fixtures/replay-plugin), decoded, mapped and emitted to the host:
 *   wall time per frame and CPU per frame (host plus plugin process), each
 *   host warmed up by one replay first, the modes interleaved; beside each
 *   replay the cores the rest of the machine kept busy (/proc/stat), which
 *   moves the isolated host's CPU a frame on a shared machine
 *   (docs/performance-log.md, `isolation`, the fifth live pass), and the
 *   host process's mark-compacts in it, which made the slow rounds of a
 *   quiet whole run (sixth pass; merged main, 00:12). The frames file is
 *   written a piece at a time, so the part begins with the driver's heap
 *   holding only what it uses (built whole, the frames left ~240 MB of dead
 *   strings there, which made the first mark-compact of a whole run's live
 *   part; seventh pass), the same for both modes.
 * - Memory: the plugin process's resident set idle after activation and
 *   after the calls, and its peak.
 *
 *   npm run bench -- isolation [history|live]   (one part only; both by default)
 *
 * Last line: `isolation: …` (targets: the list at most 1.3x in-process, live
 * frames at most 1.2x).
 */
import { spawnSync } from "node:child_process"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeSync } from "node:fs"
import { availableParallelism, loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"
import { type Host, startHost } from "../host/host.ts"
import { makeTempWorld } from "../host/testing.ts"
import { ensureCorpus } from "./corpus.ts"
import { recordedLines, repetition } from "./recordings.ts"

const RUNS = Number(process.env.ISOLATION_RUNS ?? 7)
const LIST_RUNS = 2 * RUNS
const LIVE_ROUNDS = Number(process.env.ISOLATION_RUNS ?? 7)
const MIN_FRAMES = 50_000
const repoRoot = fileURLToPath(new URL("..", import.meta.url))
const workDir = join(repoRoot, "node_modules", ".cache", "isolation-bench")
type Mode = "in-process" | "process"
const MODES: ReadonlyArray<Mode> = ["in-process", "process"]

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const fixed = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

/**
 * A HOME whose `.claude` is a link to `configDir`: the manifest's
 * `~/.claude/**` grant covers the link's real place (the broker resolves its
 * scopes too). Not hard links: the broker refuses a file with more than one
 * name, whose other names may lie outside every scope.
 */
export const homeOver = (name: string, configDir: string): string => {
  const home = join(workDir, name)
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  symlinkSync(configDir, join(home, ".claude"))
  return home
}

/** A call's CPU in ms by where it ran: each process's main thread and its other threads. */
export interface CpuSplit {
  readonly hostMain: number
  readonly hostThreads: number
  readonly pluginMain: number
  readonly pluginThreads: number
}

export interface Round {
  readonly coldMs?: number
  /** The list's CPU, host and plugin process together (bench/isolation-worker.ts). */
  readonly coldCpuMs?: number
  readonly warmCpuMs?: number
  /** The same, by thread (bench/isolation-worker.ts). */
  readonly coldCpuSplit?: CpuSplit
  readonly warmCpuSplit?: CpuSplit
  readonly warmMs?: number
  readonly readMs?: number
  readonly count: number
  readonly pluginIdleRss: number
  readonly pluginRss: number
  readonly pluginPeak: number
  readonly hostPeak: number
}

export const worker = (mode: Mode, task: "list" | "read", home: string, cwd = "", sessionId = ""): Round => {
  const child = spawnSync(
    process.execPath,
    ["--import", "tsx", join(repoRoot, "bench/isolation-worker.ts"), mode, task, home, cwd, sessionId],
    { cwd: repoRoot, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  )
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${mode} ${task} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as Round
}

/** Per round, isolated over in-process, then the median. */
/** Each mode's fastest run, isolated over in-process. */
const bestRatio = (rounds: ReadonlyArray<Record<Mode, Round>>, f: (r: Round) => number) =>
  Math.min(...rounds.map((r) => f(r.process))) / Math.min(...rounds.map((r) => f(r["in-process"])))

const pairedRatio = (rounds: ReadonlyArray<Record<Mode, Round>>, f: (r: Round) => number) =>
  median(rounds.map((r) => f(r.process) / f(r["in-process"])))

// ---------------------------------------------------------------------------
// Live frames

/**
 * The recorded frames, repeated with fresh ids to at least MIN_FRAMES (as
 * bench/mapper.ts), written one repetition at a time: built whole (the
 * lines, their join, the file's text) they left ~240 MB of dead strings in
 * the driver's old generation as the live part began, the hosts' heap
 * (docs/performance-log.md, `isolation`, the seventh live pass).
 */
const framesFile = (): { path: string; frames: number } => {
  const base = recordedLines(repoRoot)
  const path = join(workDir, "frames.jsonl")
  const fd = openSync(path, "w")
  let frames = 0
  try {
    for (let rep = 0; frames < MIN_FRAMES; rep++) {
      const lines = repetition(base, rep)
      // Pieces of ~32 K characters, under V8's large-object size: young garbage, gone in the next scavenge.
      let piece = ""
      for (const line of lines) {
        piece += `${line}\n`
        if (piece.length >= 32_768) {
          writeSync(fd, piece)
          piece = ""
        }
      }
      if (piece !== "") writeSync(fd, piece)
      frames += lines.length
    }
  } finally {
    closeSync(fd)
  }
  return { path, frames }
}

/** CPU time (ms) of a process from /proc (user + system). */
const cpuOfPid = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
}

/**
 * CPU time (ms) the whole machine was busy so far, every core (user, nice,
 * system, irq, softirq from /proc/stat): beside a replay's own processes it
 * gives the other work that shared the cores with it, the view a run's
 * figures need on a shared machine (the isolated host's CPU a frame rose
 * 2.3 → 5.2 µs with it: docs/performance-log.md, `isolation`, the fifth
 * live pass).
 */
const machineBusyMs = (): number => {
  const fields = (readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "").trim().split(/\s+/).slice(1)
  const ticks = [0, 1, 2, 5, 6].reduce((sum, i) => sum + Number(fields[i] ?? 0), 0)
  return (ticks * 1000) / 100 // USER_HZ is 100 on Linux
}

/**
 * The pause before each replay: the host's process broker looks for what the
 * last replay's `cat` left behind again 100, 400 and 1,500 ms after it ended
 * (a scan of /proc each, host/process-broker.ts), and without the pause
 * those scans land in the next replay, the other mode's, as host CPU (the
 * isolated host's CPU a frame swung 1.8–5.3 µs between runs of one tree).
 */
const SETTLE_MS = Number(process.env.ISOLATION_SETTLE_MS ?? 2_100)
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS))

/**
 * The host process's mark-compacts so far (both modes' hosts share this
 * process's heap): an isolated host alone in a process fell into
 * back-to-back ones, 3 to 5 a replay (docs/performance-log.md, `isolation`,
 * the sixth live pass), so each replay says how many ran in it.
 */
const hostMajorGcs = { count: 0 }
new PerformanceObserver((list) => {
  for (const entry of list.getEntries())
    if ((entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)
      hostMajorGcs.count++
}).observe({ entryTypes: ["gc"] })

const replayOnce = async (host: Host, path: string) => {
  let events = 0
  const unsubscribe = host.events.subscribe((e) => {
    if (e.kind === "agent_event") events++
  })
  const pid = host.pluginProcess()?.pid
  const busy0 = machineBusyMs()
  const gcs0 = hostMajorGcs.count
  const cpu0 = process.cpuUsage()
  const child0 = pid ? cpuOfPid(pid) : 0
  const started = performance.now()
  const answer = await host.call("replay", "prompt", { sessionId: "bench", text: path })
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu0)
  const hostCpuMs = (used.user + used.system) / 1000
  const pluginCpuMs = pid ? cpuOfPid(pid) - child0 : 0
  // The replay's `cat` counts here too (~0.02 cores).
  const otherCores = Math.max(0, machineBusyMs() - busy0 - hostCpuMs - pluginCpuMs) / ms
  unsubscribe()
  if (Number(answer.run_id) !== events)
    throw new Error(`emitted ${answer.run_id} events, the host heard ${events}`)
  // The observer hears a collection a turn later: one right at the end counts in no replay.
  const majorGcs = hostMajorGcs.count - gcs0
  return { ms, cpuMs: hostCpuMs + pluginCpuMs, hostCpuMs, pluginCpuMs, events, otherCores, majorGcs }
}

interface LiveRound {
  readonly ms: number
  readonly cpuMs: number
  readonly hostCpuMs: number
  readonly pluginCpuMs: number
  readonly events: number
  /** Cores the rest of the machine kept busy during the replay, on average. */
  readonly otherCores: number
  /** The host process's mark-compacts during the replay. */
  readonly majorGcs: number
}

const live = async (path: string) => {
  const world = makeTempWorld("cvg-isolation-live-")
  const hosts = {} as Record<Mode, Host>
  try {
    for (const mode of MODES) {
      hosts[mode] = await startHost({
        pluginDir: join(repoRoot, "host/fixtures/replay-plugin"),
        home: world.home,
        dataDir: join(world.hostData, mode),
        env: { HOME: world.home, PATH: "/usr/bin:/bin" },
        isolation: mode,
        recordEvents: false,
      })
      await replayOnce(hosts[mode], path) // warm-up: both JITs warm before timing
      await settle()
    }
    const rounds: Array<Record<Mode, LiveRound>> = []
    for (let i = 0; i < LIVE_ROUNDS; i++) {
      const round = {} as Record<Mode, LiveRound>
      for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
        await settle()
        round[mode] = await replayOnce(hosts[mode], path)
      }
      rounds.push(round)
    }
    const pluginRss = hosts.process.pluginProcess()?.rssBytes() ?? 0
    return { rounds, pluginRss }
  } finally {
    for (const host of Object.values(hosts)) await host.close()
    world.cleanup()
  }
}

// ---------------------------------------------------------------------------

export const main = async (args: ReadonlyArray<string> = []): Promise<void> => {
  mkdirSync(workDir, { recursive: true })
  const part = args[0] ?? "all"
  if (!["all", "history", "live"].includes(part))
    throw new Error(`isolation: no part ${part} (history, live)`)
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")
  console.log(`load average before: ${load()} (${availableParallelism()} cores)`)
  const history = part === "live" ? undefined : historyPart()
  const liveFigures = part === "history" ? undefined : await livePart()
  console.log(`load average after: ${load()}`)
  console.log(
    "isolated over in-process, medians of per-round ratios (targets: list <= 1.3x, live frames <= 1.2x)",
  )
  console.log(`isolation: ${[history, liveFigures].filter((x) => x !== undefined).join("; ")}`)
}

/** The history rounds; returns the headline's part. */
const historyPart = (): string => {
  const corpus = ensureCorpus()
  const listHome = homeOver("home-list", corpus.listConfigDir)
  const readHome = homeOver("home-read", corpus.readConfigDir)
  console.log(
    `corpus: ${corpus.listFiles} sessions, ${(corpus.listBytes / 1e9).toFixed(2)} GB (list); one transcript of ${(corpus.readBytes / 1e6).toFixed(1)} MB (read); node ${process.version}`,
  )
  console.log(
    `history: ${LIST_RUNS} rounds of the list, ${RUNS} of the read, each a fresh host process per mode, the real host and broker, host.call`,
  )

  const lists: Array<Record<Mode, Round>> = []
  const reads: Array<Record<Mode, Round>> = []
  for (let i = 0; i < LIST_RUNS; i++) {
    const list = {} as Record<Mode, Round>
    const read = {} as Record<Mode, Round>
    for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
      list[mode] = worker(mode, "list", listHome)
      if (i < RUNS) read[mode] = worker(mode, "read", readHome, corpus.readCwd, corpus.readSessionId)
    }
    lists.push(list)
    if (i < RUNS) reads.push(read)
  }
  for (const mode of MODES) {
    const l = lists.map((r) => r[mode])
    const d = reads.map((r) => r[mode])
    console.log(
      `${mode.padEnd(11)} list cold ${fixed(median(l.map((r) => r.coldMs ?? 0))).padStart(6)} ms   warm ${fixed(median(l.map((r) => r.warmMs ?? 0))).padStart(6)} ms   read ${fixed(median(d.map((r) => r.readMs ?? 0))).padStart(6)} ms   (${l[0]?.count} sessions, ${d[0]?.count} items)   host peak ${mb(median(l.map((r) => r.hostPeak)))}`,
    )
    console.log(
      `${"".padEnd(11)} runs cold: ${l.map((r) => (r.coldMs ?? 0).toFixed(0)).join(", ")}; warm: ${l.map((r) => (r.warmMs ?? 0).toFixed(0)).join(", ")}; read: ${d.map((r) => (r.readMs ?? 0).toFixed(0)).join(", ")}`,
    )
  }
  for (const [a, b] of [lists, reads].flatMap((rs) => rs.map((r) => [r.process, r["in-process"]] as const)))
    if (a.count !== b.count) throw new Error(`the modes answered differently: ${a.count} against ${b.count}`)
  const cold = pairedRatio(lists, (r) => r.coldMs ?? 0)
  const warm = pairedRatio(lists, (r) => r.warmMs ?? 0)
  // CPU swings less than wall time with the load: the steadier view of what isolation adds.
  const coldCpu = pairedRatio(lists, (r) => r.coldCpuMs ?? 0)
  const warmCpu = pairedRatio(lists, (r) => r.warmCpuMs ?? 0)
  for (const mode of MODES) {
    const l = lists.map((r) => r[mode])
    console.log(
      `${mode.padEnd(11)} list CPU (host + plugin process) cold ${fixed(median(l.map((r) => r.coldCpuMs ?? 0)))} ms, warm ${fixed(median(l.map((r) => r.warmCpuMs ?? 0)))} ms`,
    )
  }
  const read = pairedRatio(reads, (r) => r.readMs ?? 0)
  console.log(
    `fastest runs, isolated over in-process: list cold ${bestRatio(lists, (r) => r.coldMs ?? 0).toFixed(2)}x, warm ${bestRatio(lists, (r) => r.warmMs ?? 0).toFixed(2)}x; read ${bestRatio(reads, (r) => r.readMs ?? 0).toFixed(2)}x`,
  )
  const iso = lists.map((r) => r.process)
  const isoRead = reads.map((r) => r.process)
  console.log(
    `plugin process: ${mb(median(iso.map((r) => r.pluginIdleRss)))} resident after activation; after the cold and warm list ${mb(median(iso.map((r) => r.pluginRss)))} (peak ${mb(median(iso.map((r) => r.pluginPeak)))}); after the read ${mb(median(isoRead.map((r) => r.pluginRss)))} (peak ${mb(median(isoRead.map((r) => r.pluginPeak)))})`,
  )
  console.log(
    `host process peak: in-process ${mb(median(lists.map((r) => r["in-process"].hostPeak)))}, isolated ${mb(median(iso.map((r) => r.hostPeak)))} (list)`,
  )

  return `list ${cold.toFixed(2)}x cold, ${warm.toFixed(2)}x warm (CPU ${coldCpu.toFixed(2)}x, ${warmCpu.toFixed(2)}x); read ${read.toFixed(2)}x; plugin process ${mb(median(iso.map((r) => r.pluginIdleRss)))} idle, ${mb(median(isoRead.map((r) => r.pluginPeak)))} peak on the read`
}

/** The live rounds; returns the headline's part. */
const livePart = async (): Promise<string> => {
  const frames = framesFile()
  // Both modes' hosts share this heap: what the bench leaves in it, each host's collector walks (or waits to).
  const heapAtStart = getHeapStatistics().used_heap_size
  const liveRun = await live(frames.path)
  console.log(
    `live part: the driver's heap held ${mb(heapAtStart)} as it began (live and dead, both hosts' one heap)`,
  )
  const perFrame = (mode: Mode, f: (x: LiveRound) => number) =>
    (median(liveRun.rounds.map((r) => f(r[mode]))) * 1e6) / frames.frames
  for (const mode of MODES)
    console.log(
      `live ${mode.padEnd(11)} ${fixed(perFrame(mode, (x) => x.ms)).padStart(6)} ns/frame wall, ${fixed(perFrame(mode, (x) => x.cpuMs)).padStart(6)} ns/frame CPU (host + plugin process)   ${liveRun.rounds[0]?.[mode].events} events from ${frames.frames} frames`,
    )
  console.log(
    `live process CPU split: host ${fixed(perFrame("process", (x) => x.hostCpuMs))} ns/frame, plugin process ${fixed(perFrame("process", (x) => x.pluginCpuMs))} ns/frame`,
  )
  const liveWall = median(liveRun.rounds.map((r) => r.process.ms / r["in-process"].ms))
  const liveCpu = median(liveRun.rounds.map((r) => r.process.cpuMs / r["in-process"].cpuMs))
  console.log(
    `live ratios per round (wall): ${liveRun.rounds.map((r) => (r.process.ms / r["in-process"].ms).toFixed(2)).join(" ")}`,
  )
  console.log(
    `live ratios per round (CPU):  ${liveRun.rounds.map((r) => (r.process.cpuMs / r["in-process"].cpuMs).toFixed(2)).join(" ")}`,
  )
  console.log(
    `live isolated host CPU per round (ns/frame): ${liveRun.rounds.map((r) => ((r.process.hostCpuMs * 1e6) / frames.frames).toFixed(0)).join(" ")}`,
  )
  for (const mode of MODES)
    console.log(
      `live other work beside the ${mode} replays (cores busy, per round): ${liveRun.rounds.map((r) => r[mode].otherCores.toFixed(2)).join(" ")}`,
    )
  for (const mode of MODES)
    console.log(
      `live host mark-compacts in the ${mode} replays (per round): ${liveRun.rounds.map((r) => r[mode].majorGcs).join(" ")}`,
    )
  const fastest = (mode: Mode, f: (x: LiveRound) => number) =>
    Math.min(...liveRun.rounds.map((r) => f(r[mode])))
  console.log(
    `live fastest runs, isolated over in-process: wall ${(fastest("process", (x) => x.ms) / fastest("in-process", (x) => x.ms)).toFixed(2)}x, CPU ${(fastest("process", (x) => x.cpuMs) / fastest("in-process", (x) => x.cpuMs)).toFixed(2)}x`,
  )
  console.log(`plugin process after the live rounds: ${mb(liveRun.pluginRss)} resident`)
  return `live frames ${liveWall.toFixed(2)}x wall (${liveCpu.toFixed(2)}x CPU)`
}

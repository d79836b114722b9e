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
 *   start already ran. (Since 2026-12-06 the isolated list overlaps the
 *   host's reads with the plugin's summaries on the second core: the
 *   broker's read turns, host/broker/fs-broker.ts.)
 * - Live frames: the recorded CLI frames (as bench/mapper.ts makes them,
 *   ≥ 50,000) piped through a real child process into the replay fixture
 *   (host/testing/fixtures/replay-plugin), decoded, mapped and emitted to the host:
 *   wall time per frame and CPU per frame (host plus plugin process), each
 *   mode's host in a long-lived process of its own, as a front end runs one
 *   (bench/isolation-live-worker.ts), warmed up by one replay first, the
 *   modes interleaved; beside each replay the cores the rest of the machine
 *   kept busy (/proc/stat), which moves the isolated host's CPU a frame on a
 *   shared machine (docs/performance-log.md, `isolation`, the fifth live
 *   pass), and the host process's mark-compacts in it. Until 2026-12-06
 *   both hosts ran in this driver's one heap, so each host's collector
 *   walked the other's garbage; alone in its process the isolated host
 *   still runs 0–5 mark-compacts a replay from one run (or minute) to the
 *   next, and they make the slow rounds (the same log, 2026-12-06). The
 *   frames file is written a piece at a time (built whole, it left ~240 MB
 *   of dead strings in the driver's heap; seventh pass).
 * - Large folders (bench/scale-corpus.ts: 10,000 sessions in ten project
 *   folders of 1,000, the scale benchmark's corpus): list_sessions cold and
 *   warm, each round a fresh worker process per mode, as the history list.
 *   A folder past one `readEnds` slice of the byte lane is what the
 *   1,000-session corpus (40 files a folder) never meets: until 2026-12-06
 *   such a folder got sizes only over the channel and each file was read
 *   again (the isolated cold list twice the in-process one at 50,000).
 * - Memory: the plugin process's resident set idle after activation and
 *   after the calls, and its peak.
 * - Every host process of both parts starts with HOST_FLAGS, as `npm start`
 *   starts the terminal front end's.
 *
 *   npm run bench -- isolation [history|large|live]   (one part only; all by default)
 *
 * Last line: `isolation: …` (targets: the list at most 1.3x in-process, live
 * frames at most 1.2x).
 */
import { spawn, spawnSync } from "node:child_process"
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, symlinkSync, writeSync } from "node:fs"
import { availableParallelism, loadavg } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { createInterface } from "node:readline"
import { HOST_NODE_FLAGS } from "../host/core/host-flags.ts"
import { ensureCorpus } from "./corpus.ts"
import { recordedLines, repetition } from "./recordings.ts"
import { ensureListCorpus } from "./scale-corpus.ts"

const RUNS = Number(process.env.ISOLATION_RUNS ?? 7)
const LIST_RUNS = 2 * RUNS
const LIVE_ROUNDS = Number(process.env.ISOLATION_RUNS ?? 7)
const MIN_FRAMES = 50_000
const repoRoot = fileURLToPath(new URL("..", import.meta.url))
const workDir = join(repoRoot, "node_modules", ".cache", "isolation-bench")

/**
 * Node flags of both modes' host processes: the terminal front end's
 * (host/core/host-flags.ts), or `ISOLATION_HOST_FLAGS` (`none` for V8's defaults).
 */
export const HOST_FLAGS: ReadonlyArray<string> =
  process.env.ISOLATION_HOST_FLAGS === undefined
    ? HOST_NODE_FLAGS
    : process.env.ISOLATION_HOST_FLAGS.split(" ").filter((f) => f !== "" && f !== "none")

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

/** The page faults each process took during one call (in-process, the plugin's are the host's). */
export interface CallFaults {
  readonly host: number
  readonly plugin: number
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
  /** Page faults during each call (bench/isolation-worker.ts). */
  readonly coldFaults?: CallFaults
  readonly warmFaults?: CallFaults
  readonly readFaults?: CallFaults
  readonly count: number
  readonly pluginIdleRss: number
  readonly pluginRss: number
  readonly pluginPeak: number
  readonly hostPeak: number
}

export const worker = (mode: Mode, task: "list" | "read", home: string, cwd = "", sessionId = ""): Round => {
  const child = spawnSync(
    process.execPath,
    [
      ...HOST_FLAGS,
      "--import",
      "tsx",
      join(repoRoot, "bench/isolation-worker.ts"),
      mode,
      task,
      home,
      cwd,
      sessionId,
    ],
    { cwd: repoRoot, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  )
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${mode} ${task} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as Round
}

/**
 * What one page fault costs on this machine, in µs: a fresh 64 MB buffer
 * (calloc'd, so mapped but not yet backed) touched once a page, the median
 * of five. Bare hardware takes well under 1 µs; this project's VM (a
 * Firecracker guest under PVM, whose shadow page tables trap every fault)
 * 12-15 µs, which makes a fresh process's first touches of its heap a share
 * of a cold call (docs/performance-log.md, `isolation`, page faults).
 */
const pageFaultMicros = (): number => {
  const bytes = 64 * 1024 * 1024
  const page = 4096
  const runs: number[] = []
  for (let run = 0; run < 5; run++) {
    const buffer = new Uint8Array(bytes)
    const started = process.hrtime.bigint()
    for (let at = 0; at < bytes; at += page) buffer[at] = 1
    runs.push(Number(process.hrtime.bigint() - started) / 1000 / (bytes / page))
  }
  return median(runs)
}

/** Each mode's fastest run, isolated over in-process. */
const bestRatio = (rounds: ReadonlyArray<Record<Mode, Round>>, f: (r: Round) => number) =>
  Math.min(...rounds.map((r) => f(r.process))) / Math.min(...rounds.map((r) => f(r["in-process"])))

/** Per round, isolated over in-process, then the median. */
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
 * (a scan of /proc each, host/broker/process-broker.ts), and without the pause
 * those scans land in the next replay, the other mode's, as host CPU (the
 * isolated host's CPU a frame swung 1.8–5.3 µs between runs of one tree).
 */
const SETTLE_MS = Number(process.env.ISOLATION_SETTLE_MS ?? 2_100)
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS))

/** One mode's host in its own process (bench/isolation-live-worker.ts), asked line by line. */
interface LiveWorker {
  readonly ask: (line: string) => Promise<Record<string, unknown>>
  readonly close: () => Promise<void>
}

const liveWorker = async (mode: Mode, framesPath: string): Promise<LiveWorker> => {
  const child = spawn(
    process.execPath,
    [...HOST_FLAGS, "--import", "tsx", join(repoRoot, "bench/isolation-live-worker.ts"), mode, framesPath],
    { cwd: repoRoot, stdio: ["pipe", "pipe", "inherit"] },
  )
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  const next = async () => {
    const line = await Promise.race([answers.next(), exited.then(() => null)])
    if (line === null || line.done) throw new Error(`the ${mode} live worker exited (${await exited})`)
    return JSON.parse(line.value) as Record<string, unknown>
  }
  await next() // ready: the host started, its plugin activated
  return {
    ask: (line) => {
      child.stdin.write(`${line}\n`)
      return next()
    },
    close: async () => {
      child.stdin.end()
      await exited
    },
  }
}

/** One replay in `worker`'s host, with the other work the machine did meanwhile. */
const replayOnce = async (worker: LiveWorker): Promise<LiveRound> => {
  const busy0 = machineBusyMs()
  const r = (await worker.ask("replay")) as Omit<LiveRound, "cpuMs" | "otherCores">
  // The worker's own span; this side's window is a little longer (the ask and the answer crossing).
  const otherCores = Math.max(0, machineBusyMs() - busy0 - r.hostCpuMs - r.pluginCpuMs) / r.ms
  return { ...r, cpuMs: r.hostCpuMs + r.pluginCpuMs, otherCores }
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
  const workers = {} as Record<Mode, LiveWorker>
  try {
    for (const mode of MODES) {
      workers[mode] = await liveWorker(mode, path)
      await replayOnce(workers[mode]) // warm-up: both JITs warm before timing
      await settle()
    }
    const rounds: Array<Record<Mode, LiveRound>> = []
    for (let i = 0; i < LIVE_ROUNDS; i++) {
      const round = {} as Record<Mode, LiveRound>
      for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
        await settle()
        round[mode] = await replayOnce(workers[mode])
      }
      rounds.push(round)
    }
    const pluginRss = Number((await workers.process.ask("rss")).rss)
    return { rounds, pluginRss }
  } finally {
    for (const worker of Object.values(workers)) await worker.close()
  }
}

// ---------------------------------------------------------------------------

export const main = async (args: ReadonlyArray<string> = []): Promise<void> => {
  mkdirSync(workDir, { recursive: true })
  const part = args[0] ?? "all"
  if (!["all", "history", "large", "live"].includes(part))
    throw new Error(`isolation: no part ${part} (history, large, live)`)
  const load = () =>
    loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")
  console.log(`load average before: ${load()} (${availableParallelism()} cores)`)
  const history = part === "all" || part === "history" ? historyPart() : undefined
  const large = part === "all" || part === "large" ? largePart() : undefined
  const liveFigures = part === "all" || part === "live" ? await livePart() : undefined
  console.log(`load average after: ${load()}`)
  console.log(
    "isolated over in-process, medians of per-round ratios (targets: list <= 1.3x, live frames <= 1.2x)",
  )
  console.log(`isolation: ${[history, large, liveFigures].filter((x) => x !== undefined).join("; ")}`)
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
  const faultMicros = pageFaultMicros()
  const faults = (rounds: ReadonlyArray<Round>, f: (r: Round) => CallFaults | undefined) => {
    const host = median(rounds.map((r) => f(r)?.host ?? 0))
    const plugin = median(rounds.map((r) => f(r)?.plugin ?? 0))
    return { host, plugin, ms: ((host + plugin) * faultMicros) / 1000 }
  }
  for (const [call, f, rounds] of [
    ["cold list", (r: Round) => r.coldFaults, lists],
    ["warm list", (r: Round) => r.warmFaults, lists],
    ["read", (r: Round) => r.readFaults, reads],
  ] as const) {
    const inProcess = faults(
      rounds.map((r) => r["in-process"]),
      f,
    )
    const isolated = faults(
      rounds.map((r) => r.process),
      f,
    )
    console.log(
      `page faults in the ${call} (medians): in-process ${inProcess.host} (~${fixed(inProcess.ms)} ms); isolated host ${isolated.host} + plugin process ${isolated.plugin} (~${fixed(isolated.ms)} ms)`,
    )
  }
  console.log(
    `a page fault costs ${faultMicros.toFixed(2)} µs here (a fresh 64 MB buffer touched page by page)`,
  )
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

/** Sessions of the large-folder list, and the scale corpus they are the first of. */
const LARGE_SESSIONS = 10_000
const LARGE_OF = 50_000

/** The large-folder list rounds; returns the headline's part. */
const largePart = (): string => {
  const home = homeOver("home-large", ensureListCorpus(LARGE_SESSIONS, LARGE_OF))
  console.log(
    `large folders: ${LARGE_SESSIONS} sessions in folders of 1,000 (bench/scale-corpus.ts), ${RUNS} rounds, each a fresh host process per mode`,
  )
  const lists: Array<Record<Mode, Round>> = []
  for (let i = 0; i < RUNS; i++) {
    const list = {} as Record<Mode, Round>
    for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) list[mode] = worker(mode, "list", home)
    if (list.process.count !== list["in-process"].count)
      throw new Error(
        `the modes answered differently: ${list.process.count} against ${list["in-process"].count}`,
      )
    lists.push(list)
  }
  for (const mode of MODES) {
    const l = lists.map((r) => r[mode])
    console.log(
      `${mode.padEnd(11)} large list cold ${fixed(median(l.map((r) => r.coldMs ?? 0))).padStart(6)} ms   warm ${fixed(median(l.map((r) => r.warmMs ?? 0))).padStart(6)} ms   CPU cold ${fixed(median(l.map((r) => r.coldCpuMs ?? 0)))} ms, warm ${fixed(median(l.map((r) => r.warmCpuMs ?? 0)))} ms   (${l[0]?.count} sessions)`,
    )
    console.log(
      `${"".padEnd(11)} runs cold: ${l.map((r) => (r.coldMs ?? 0).toFixed(0)).join(", ")}; warm: ${l.map((r) => (r.warmMs ?? 0).toFixed(0)).join(", ")}`,
    )
  }
  const cold = pairedRatio(lists, (r) => r.coldMs ?? 0)
  const warm = pairedRatio(lists, (r) => r.warmMs ?? 0)
  const coldCpu = pairedRatio(lists, (r) => r.coldCpuMs ?? 0)
  return `large-folder list ${cold.toFixed(2)}x cold, ${warm.toFixed(2)}x warm (CPU ${coldCpu.toFixed(2)}x cold)`
}

/** The live rounds; returns the headline's part. */
const livePart = async (): Promise<string> => {
  const frames = framesFile()
  const liveRun = await live(frames.path)
  console.log("live part: each mode's host in a process of its own (bench/isolation-live-worker.ts)")
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
      `live host process's mark-compacts in the ${mode} replays (per round): ${liveRun.rounds.map((r) => r[mode].majorGcs).join(" ")}`,
    )
  const fastest = (mode: Mode, f: (x: LiveRound) => number) =>
    Math.min(...liveRun.rounds.map((r) => f(r[mode])))
  console.log(
    `live fastest runs, isolated over in-process: wall ${(fastest("process", (x) => x.ms) / fastest("in-process", (x) => x.ms)).toFixed(2)}x, CPU ${(fastest("process", (x) => x.cpuMs) / fastest("in-process", (x) => x.cpuMs)).toFixed(2)}x`,
  )
  console.log(`plugin process after the live rounds: ${mb(liveRun.pluginRss)} resident`)
  return `live frames ${liveWall.toFixed(2)}x wall (${liveCpu.toFixed(2)}x CPU)`
}

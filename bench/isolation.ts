/**
 * Isolation benchmark: what running the plugin in a process of its own
 * (host/plugin-process/) costs against running it in the host's process,
 * side by side in one run, both through the real host (`startHost`,
 * `host.call`, grants enforced by the host's broker). Every host process
 * is bench/isolation-worker.ts (with ISOLATION_HOST_FLAGS, Node flags, if
 * set), the modes in turn each round; a ratio is the median of the rounds'
 * ratios.
 *
 * - history (bench/corpus.ts: 1,000 sessions, one 85 MB transcript): the
 *   host's start, list_sessions cold and warm, read_session, each round a
 *   fresh host process per mode (the list twice as many rounds as the
 *   read: it is short and spreads most); each call is its process's first,
 *   so both modes run the history code cold. A HOME's `.claude` links to
 *   the corpus (the grant covers its real place).
 * - large (bench/corpus.ts: 10,000 sessions in folders of 1,000):
 *   the list, as above; a folder past one `readEnds` slice of the byte
 *   lane is what the history corpus never meets.
 * - live: the recorded frames (≥ 50,000, testkit/recordings.ts) piped
 *   through a real `cat` into the replay fixture, decoded, mapped and
 *   emitted to the host; each mode's host long-lived in its own process,
 *   one warm-up replay, then the modes interleaved.
 * - memory: the plugin process's resident set after activation, its peak
 *   through the read, and the host's peak.
 *
 *   npm run bench -- isolation [history] [large] [live]   (the parts named; all by default)
 *
 * ISOLATION_RUNS sets the rounds (7). Returns its figures (bench/ab.ts).
 * Last line: `isolation: list <c>x cold, <w>x warm …` (targets: the list at
 * most 1.3x in-process, live frames at most 1.2x).
 */
import { spawn, spawnSync } from "node:child_process"
import { closeSync, mkdirSync, openSync, rmSync, symlinkSync, writeSync } from "node:fs"
import { availableParallelism } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { recordedLines, repetition } from "../testkit/recordings.ts"
import { ensureCorpus } from "./corpus.ts"
import { ensureListCorpus } from "./corpus.ts"
import { type Figures, loadAverage, median, repoRoot, workDirOf } from "./workers.ts"

const RUNS = Number(process.env.ISOLATION_RUNS ?? 7)
const MIN_FRAMES = 50_000

/** The hosts' Node flags, as `npm start` gives the terminal front end's none. */
const HOST_FLAGS: ReadonlyArray<string> = (process.env.ISOLATION_HOST_FLAGS ?? "")
  .split(" ")
  .filter((f) => f !== "")

type Mode = "in-process" | "process"
const MODES: ReadonlyArray<Mode> = ["in-process", "process"]
const NAME: Record<Mode, string> = { "in-process": "in-process", process: "isolated" }

const mb = (bytes: number) => bytes / 1024 / 1024
const fixed = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

/**
 * A HOME whose `.claude` links to `configDir`: the manifest's grant covers
 * the link's real place. Not hard links: the broker refuses a file with
 * another name, which may lie outside every scope.
 */
export const homeOver = (name: string, configDir: string): string => {
  const home = join(workDirOf("isolation-bench"), name)
  rmSync(home, { recursive: true, force: true })
  mkdirSync(home, { recursive: true })
  symlinkSync(configDir, join(home, ".claude"))
  return home
}

/** One history round's answer (bench/isolation-worker.ts). */
export interface Round {
  readonly startMs: number
  readonly coldMs?: number
  readonly coldCpuMs?: number
  readonly warmMs?: number
  readonly warmCpuMs?: number
  readonly readMs?: number
  readonly readCpuMs?: number
  readonly count: number
  readonly pluginIdleRss: number
  readonly pluginPeak: number
  readonly hostPeak: number
}

const workerPath = join(repoRoot, "bench/isolation-worker.ts")

export const worker = (mode: Mode, task: "list" | "read", home: string, cwd = "", sessionId = ""): Round => {
  const child = spawnSync(
    process.execPath,
    [...HOST_FLAGS, "--import", "tsx", workerPath, mode, task, home, cwd, sessionId],
    { cwd: repoRoot, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 },
  )
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${mode} ${task} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as Round
}

type Rounds = ReadonlyArray<Record<Mode, Round>>

/** `rounds` rounds of `call` in both modes, the first mode alternating. */
const interleaved = (rounds: number, call: (mode: Mode) => Round): Array<Record<Mode, Round>> =>
  Array.from({ length: rounds }, (_, i) => {
    const round = {} as Record<Mode, Round>
    for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) round[mode] = call(mode)
    if (round.process.count !== round["in-process"].count)
      throw new Error(
        `the modes answered differently: ${round.process.count} against ${round["in-process"].count}`,
      )
    return round
  })

/** Per round, isolated over in-process, then the median. */
const pairedRatio = (rounds: Rounds, f: (r: Round) => number) =>
  median(rounds.map((r) => f(r.process) / f(r["in-process"])))

/** Each mode's median of `f`, printed as one line and added to `figures` under `<label>, <mode>`. */
const both = (figures: Figures, label: string, rounds: Rounds, f: (r: Round) => number) => {
  const line = MODES.map((mode) => {
    const value = median(rounds.map((r) => f(r[mode])))
    figures[`${label}, ${NAME[mode]}`] = value
    return `${NAME[mode]} ${fixed(value)}`
  })
  console.log(
    `${label.padEnd(22)} ${line.join(", ")}; runs isolated: ${rounds.map((r) => fixed(f(r.process))).join(" ")}`,
  )
}

const historyPart = (figures: Figures): string => {
  const corpus = ensureCorpus()
  const listHome = homeOver("home-list", corpus.listConfigDir)
  const readHome = homeOver("home-read", corpus.readConfigDir)
  console.log(
    `history: ${corpus.listFiles} sessions (${(corpus.listBytes / 1e9).toFixed(2)} GB) listed in ${2 * RUNS} rounds, a ${(corpus.readBytes / 1e6).toFixed(1)} MB transcript read in ${RUNS}, a fresh host process per mode and round`,
  )
  const lists = interleaved(2 * RUNS, (mode) => worker(mode, "list", listHome))
  const reads = interleaved(RUNS, (mode) =>
    worker(mode, "read", readHome, corpus.readCwd, corpus.readSessionId),
  )
  both(figures, "host start ms", lists, (r) => r.startMs)
  both(figures, "list cold ms", lists, (r) => r.coldMs ?? 0)
  both(figures, "list cold CPU ms", lists, (r) => r.coldCpuMs ?? 0)
  both(figures, "list warm ms", lists, (r) => r.warmMs ?? 0)
  both(figures, "list warm CPU ms", lists, (r) => r.warmCpuMs ?? 0)
  both(figures, "read ms", reads, (r) => r.readMs ?? 0)
  both(figures, "read CPU ms", reads, (r) => r.readCpuMs ?? 0)
  const isolated = (rounds: Rounds, f: (r: Round) => number) => median(rounds.map((r) => f(r.process)))
  figures["plugin process idle MB"] = mb(isolated(lists, (r) => r.pluginIdleRss))
  figures["plugin process read peak MB"] = mb(isolated(reads, (r) => r.pluginPeak))
  both(figures, "host list peak MB", lists, (r) => mb(r.hostPeak))
  console.log(
    `plugin process: ${fixed(figures["plugin process idle MB"] ?? 0)} MB resident after activation, ${fixed(figures["plugin process read peak MB"] ?? 0)} MB peak through the read`,
  )
  const cold = pairedRatio(lists, (r) => r.coldMs ?? 0)
  figures["list cold ratio"] = cold
  const warm = pairedRatio(lists, (r) => r.warmMs ?? 0)
  figures["list warm ratio"] = warm
  const read = pairedRatio(reads, (r) => r.readMs ?? 0)
  figures["read ratio"] = read
  const coldCpu = pairedRatio(lists, (r) => r.coldCpuMs ?? 0)
  const warmCpu = pairedRatio(lists, (r) => r.warmCpuMs ?? 0)
  return `list ${cold.toFixed(2)}x cold, ${warm.toFixed(2)}x warm (CPU ${coldCpu.toFixed(2)}x, ${warmCpu.toFixed(2)}x); read ${read.toFixed(2)}x; plugin process ${fixed(figures["plugin process idle MB"] ?? 0)} MB idle`
}

const largePart = (figures: Figures): string => {
  const home = homeOver("home-large", ensureListCorpus(10_000, 50_000))
  console.log(`large folders: 10,000 sessions in folders of 1,000, ${RUNS} rounds`)
  const lists = interleaved(RUNS, (mode) => worker(mode, "list", home))
  both(figures, "large list cold ms", lists, (r) => r.coldMs ?? 0)
  both(figures, "large list warm ms", lists, (r) => r.warmMs ?? 0)
  const cold = pairedRatio(lists, (r) => r.coldMs ?? 0)
  figures["large list cold ratio"] = cold
  const warm = pairedRatio(lists, (r) => r.warmMs ?? 0)
  return `large-folder list ${cold.toFixed(2)}x cold, ${warm.toFixed(2)}x warm`
}

// ---------------------------------------------------------------------------
// Live frames

/** The recorded frames repeated with fresh ids to MIN_FRAMES, written a repetition at a time (no whole text in this heap). */
const framesFile = (): { path: string; frames: number } => {
  const base = recordedLines(repoRoot)
  const path = join(workDirOf("isolation-bench"), "frames.jsonl")
  const fd = openSync(path, "w")
  let frames = 0
  try {
    for (let rep = 0; frames < MIN_FRAMES; rep++) {
      const lines = repetition(base, rep)
      writeSync(fd, `${lines.join("\n")}\n`)
      frames += lines.length
    }
  } finally {
    closeSync(fd)
  }
  return { path, frames }
}

/**
 * The pause before each replay: the host's process broker scans /proc for
 * what the last replay's `cat` left behind for a while after it ended, and
 * those scans would land in the next replay, the other mode's.
 */
const SETTLE_MS = 2_100
const settle = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS))

interface LiveRound {
  readonly ms: number
  readonly cpuMs: number
  readonly events: number
}

/** One mode's host in its own process, asked line by line. */
const liveWorker = async (mode: Mode, framesPath: string) => {
  const child = spawn(
    process.execPath,
    [...HOST_FLAGS, "--import", "tsx", workerPath, mode, "live", framesPath],
    {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "inherit"],
    },
  )
  const answers = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)))
  const next = async () => {
    const line = await Promise.race([answers.next(), exited.then(() => null)])
    if (line === null || line.done) throw new Error(`the ${mode} live worker exited (${await exited})`)
    return JSON.parse(line.value) as Record<string, number>
  }
  await next() // ready: the host started, its plugin activated
  return {
    ask: (line: string) => {
      child.stdin.write(`${line}\n`)
      return next()
    },
    close: async () => {
      child.stdin.end()
      await exited
    },
  }
}

const livePart = async (figures: Figures): Promise<string> => {
  const frames = framesFile()
  const workers = {} as Record<Mode, Awaited<ReturnType<typeof liveWorker>>>
  const rounds: Array<Record<Mode, LiveRound>> = []
  try {
    for (const mode of MODES) {
      workers[mode] = await liveWorker(mode, frames.path)
      await workers[mode].ask("replay") // warm-up: both JITs warm before timing
    }
    for (let i = 0; i < RUNS; i++) {
      const round = {} as Record<Mode, LiveRound>
      for (const mode of i % 2 === 0 ? MODES : [...MODES].reverse()) {
        await settle()
        round[mode] = (await workers[mode].ask("replay")) as unknown as LiveRound
      }
      rounds.push(round)
    }
    figures["live plugin process MB"] = mb(Number((await workers.process.ask("rss")).rss))
  } finally {
    for (const w of Object.values(workers)) await w.close()
  }
  const perFrame = (mode: Mode, f: (x: LiveRound) => number) =>
    (median(rounds.map((r) => f(r[mode]))) * 1e6) / frames.frames
  for (const mode of MODES) {
    figures[`live ns/frame, ${NAME[mode]}`] = perFrame(mode, (x) => x.ms)
    figures[`live CPU ns/frame, ${NAME[mode]}`] = perFrame(mode, (x) => x.cpuMs)
    console.log(
      `live ${NAME[mode].padEnd(10)} ${fixed(perFrame(mode, (x) => x.ms))} ns/frame wall, ${fixed(perFrame(mode, (x) => x.cpuMs))} ns/frame CPU (host + plugin process), ${rounds[0]?.[mode].events} events from ${frames.frames} frames`,
    )
  }
  const ratios = rounds.map((r) => r.process.ms / r["in-process"].ms)
  console.log(`live ratios per round (wall): ${ratios.map((x) => x.toFixed(2)).join(" ")}`)
  const wall = median(ratios)
  figures["live ratio"] = wall
  const cpu = median(rounds.map((r) => r.process.cpuMs / r["in-process"].cpuMs))
  return `live frames ${wall.toFixed(2)}x wall (${cpu.toFixed(2)}x CPU)`
}

export const main = async (args: ReadonlyArray<string> = []): Promise<Figures> => {
  const parts = args.length > 0 ? args : ["history", "large", "live"]
  for (const part of parts)
    if (!["history", "large", "live"].includes(part))
      throw new Error(`isolation: no part ${part} (history, large, live)`)
  console.log(
    `load average before: ${loadAverage()} (${availableParallelism()} cores); hosts run with ${HOST_FLAGS.join(" ") || "V8's defaults"}`,
  )
  const figures: Figures = {}
  const headline = [
    parts.includes("history") ? historyPart(figures) : undefined,
    parts.includes("large") ? largePart(figures) : undefined,
    parts.includes("live") ? await livePart(figures) : undefined,
  ]
  console.log(`load average after: ${loadAverage()}`)
  console.log(
    "isolated over in-process, medians of per-round ratios (targets: list <= 1.3x, live frames <= 1.2x)",
  )
  console.log(`isolation: ${headline.filter((x) => x !== undefined).join("; ")}`)
  return figures
}

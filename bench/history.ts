/**
 * History benchmark: our list_sessions and read_session against the Claude
 * Agent SDK's listSessions and getSessionMessages, on the same corpus
 * (bench/corpus.ts), in one run.
 *
 * Each measurement is one call in a fresh process, page cache warm. Both
 * sides run as plain JavaScript under `node` with no loader: our worker
 * (bench/history-worker.ts, the plugin's modules and effect) and the SDK's
 * (bench/history-sdk-worker.ts, the SDK as its package) are bundled with
 * esbuild first. Our call runs as the plugin runs it: its services in one
 * context made beforehand, Effect's runtime used once before (as activation
 * does); none of the history code has run. Figures (bench/measure.ts): wall
 * time (CPU time shown too: the machine may be shared); the peak RSS during
 * the call less the RSS before it (what the call itself needs); the
 * whole-process peak RSS, start-up and each side's loaded code included,
 * also compared above a bare node process's peak (the runtime both carry).
 *
 * Our list runs two ways:
 * - cold: the plugin's storage holds no summary cache; every file is read
 *   (one open each for both ends) and the cache is written after the answer;
 * - warm: a fresh process whose storage holds the cache the cold run wrote,
 *   as on a host that lists again: folders listed, files stat'ed, nothing read.
 * Both read files directly (testkit/node-fs.ts), and again through the host's
 * own broker (host/broker/fs-broker: grant checks, the event loop kept turning),
 * the plugin's real path. `floor-list` makes only the file-system calls of a
 * cold list (no plugin code): the bound on any cold list's speed here.
 *
 * Beside them, the plugin as the host really runs it: in a process of its
 * own (host/plugin-process/), called through `startHost` and `host.call`
 * (bench/isolation-worker.ts, one fresh host per round; its ratio to the SDK
 * is a ratio of medians, the rounds being apart in time; `npm run bench --
 * isolation` compares it with in-process round by round).
 *
 * Readers of one kind run in turn, RUNS rounds. Each reader's figures are
 * medians; a time ratio is the median of the rounds' ratios (one round runs
 * every reader close together in time, so a machine that is slower for a
 * while slows both sides alike).
 *
 *   npm run bench -- history     (HISTORY_RUNS rounds, 9 by default)
 *
 * Returns its figures (bench/ab.ts).
 */
import { spawnSync } from "node:child_process"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { type Corpus, ensureCorpus } from "./corpus.ts"
import { homeOver, type Round, worker } from "./isolation.ts"
import type { Sample } from "./measure.ts"
import { bundleWorker, type Figures, median, repoRoot, workDirOf } from "./workers.ts"

const RUNS = Number(process.env.HISTORY_RUNS ?? 9)
const workDir = workDirOf("history-bench")
const storageFile = join(workDir, "storage.json")

type Mode =
  | "ours-list"
  | "ours-list-warm"
  | "ours-list broker"
  | "ours-list-warm broker"
  | "floor-list"
  | "sdk-list"
  | "ours-read"
  | "sdk-read"

/** Both workers as plain JavaScript: ours with everything bundled, the SDK's with the SDK left as its package. */
const buildWorkers = async (): Promise<{ ours: string; sdk: string }> => ({
  ours: await bundleWorker("history-worker", workDir),
  sdk: await bundleWorker("history-sdk-worker", workDir, { external: ["@anthropic-ai/claude-agent-sdk"] }),
})

/** The SDK's bundle imports its package by name: run it from inside the repo so node_modules resolves. */
const measure = (mode: Mode, corpus: Corpus, workers: { ours: string; sdk: string }): Sample => {
  const [name = "", via] = mode.split(" ")
  const configDir = name.includes("list") ? corpus.listConfigDir : corpus.readConfigDir
  // A cold list starts from empty plugin storage; a warm one keeps what the cold one before it wrote.
  if (!name.endsWith("warm")) rmSync(storageFile, { force: true })
  const args = name.startsWith("sdk") ? [workers.sdk, name] : [workers.ours, name, ...(via ? [via] : [])]
  const child = spawnSync(process.execPath, args, {
    cwd: repoRoot,
    env: {
      ...process.env,
      CLAUDE_CONFIG_DIR: configDir,
      BENCH_CORPUS: JSON.stringify(corpus),
      BENCH_STORAGE: storageFile,
    },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  })
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{")) {
    throw new Error(`${mode} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  }
  return JSON.parse(line) as Sample
}

/** Peak RSS of a node process that loads nothing: the runtime both sides share. */
const bareNodePeak = (): number => {
  const script = `process.stdout.write(/VmHWM:\\s+(\\d+)/.exec(require("fs").readFileSync("/proc/self/status","utf8"))[1])`
  const peaks = Array.from(
    { length: RUNS },
    () => Number(spawnSync(process.execPath, ["-e", script], { encoding: "utf8" }).stdout) * 1024,
  )
  return median(peaks)
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const fixed = (x: number) => (x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2))
const ratio = (x: number) => x.toFixed(2)

interface ReaderFigures {
  readonly ms: number
  readonly cpuMs: number
  readonly processPeak: number
  readonly callPeak: number
  readonly added: number
  readonly count: number
}

const summarizeRuns = (mode: Mode, samples: Sample[]): ReaderFigures => {
  const figures = {
    ms: median(samples.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    processPeak: median(samples.map((s) => s.processPeak)),
    callPeak: median(samples.map((s) => s.callPeak)),
    added: median(samples.map((s) => s.callPeak - s.base)),
    count: samples[0]?.count ?? 0,
  }
  const note =
    mode.startsWith("ours-list") && !mode.includes("warm")
      ? `   (cache write after the answer ${fixed(median(samples.map((s) => s.flushMs ?? 0)))} ms)`
      : mode === "floor-list"
        ? "   (file-system calls of a cold list only)"
        : ""
  console.log(
    `${mode.padEnd(22)} ${fixed(figures.ms).padStart(6)} ms (cpu ${fixed(figures.cpuMs).padStart(5)} ms)   process peak ${mb(figures.processPeak).padStart(9)}   call added ${mb(figures.added).padStart(8)}   result ${figures.count}${note}`,
  )
  console.log(
    `${"".padEnd(22)} runs: ${samples.map((s) => `${s.ms.toFixed(0)} ms/${mb(s.processPeak)}`).join(", ")}`,
  )
  return figures
}

/** A reader's median figures and its runs, in round order. */
interface Measured extends ReaderFigures {
  readonly runs: ReadonlyArray<Sample>
}

/** Readers of one kind, in turn, RUNS rounds, so a busy machine slows them alike. */
const compare = (modes: Mode[], corpus: Corpus, workers: { ours: string; sdk: string }) => {
  const samples = new Map<Mode, Sample[]>(modes.map((m) => [m, []]))
  for (let i = 0; i < RUNS; i++)
    for (const mode of modes) samples.get(mode)?.push(measure(mode, corpus, workers))
  return new Map(
    modes.map((m): [Mode, Measured] => {
      const runs = samples.get(m) ?? []
      return [m, { ...summarizeRuns(m, runs), runs }]
    }),
  )
}

const get = (figures: Map<Mode, Measured>, mode: Mode): Measured => {
  const found = figures.get(mode)
  if (found === undefined) throw new Error(`no figures for ${mode}`)
  return found
}

/**
 * The time ratio of two readers, round by round (each round runs every
 * reader once, close together in time), then the median: a machine that is
 * slower for a while slows both sides of a round alike.
 */
const pairedRatio = (a: Measured, b: Measured, f: (s: Sample) => number): number =>
  median(a.runs.map((s, i) => f(s) / f(b.runs[i] ?? s)))

export const main = async (): Promise<Figures> => {
  const corpus = ensureCorpus()
  const workers = await buildWorkers()
  console.log(
    `corpus: ${corpus.listFiles} sessions, ${(corpus.listBytes / 1e9).toFixed(2)} GB (list); one transcript of ${(corpus.readBytes / 1e6).toFixed(1)} MB (read)`,
  )
  console.log(
    `median of ${RUNS} fresh processes per reader, both sides plain node (esbuild bundles); process peak = whole-process peak RSS; call added = peak RSS during the call less RSS before it`,
  )
  const lists = compare(
    ["ours-list", "ours-list-warm", "ours-list broker", "ours-list-warm broker", "floor-list", "sdk-list"],
    corpus,
    workers,
  )
  const reads = compare(["ours-read", "sdk-read"], corpus, workers)
  const cold = get(lists, "ours-list")
  const warm = get(lists, "ours-list-warm")
  const sdkList = get(lists, "sdk-list")
  const ourRead = get(reads, "ours-read")
  const sdkRead = get(reads, "sdk-read")
  for (const f of [cold, warm, get(lists, "ours-list broker"), get(lists, "ours-list-warm broker")])
    if (f.count !== sdkList.count) console.log(`note: listed ${f.count} sessions, the SDK ${sdkList.count}`)

  const bare = bareNodePeak()
  console.log(`a bare node process peaks at ${mb(bare)}: the runtime both sides share`)
  const ms = (s: Sample) => s.ms
  const cpuMs = (s: Sample) => s.cpuMs
  const line = (name: string, ours: Measured, sdk: Measured, faster: boolean) => {
    const time = faster
      ? `${fixed(pairedRatio(sdk, ours, ms))}x faster`
      : `${ratio(pairedRatio(ours, sdk, ms))}x time`
    const cpu = faster
      ? `${fixed(pairedRatio(sdk, ours, cpuMs))}x`
      : `${ratio(pairedRatio(ours, sdk, cpuMs))}x`
    const aboveBare = (ours.processPeak - bare) / (sdk.processPeak - bare)
    console.log(
      `${name.padEnd(24)} ${time} (cpu ${cpu}), memory ${ratio(ours.processPeak / sdk.processPeak)}x whole-process peak, ${ratio(aboveBare)}x above a bare node, ${ratio(ours.added / sdk.added)}x during the call`,
    )
  }
  console.log(
    "relative to the SDK (list target: >= 10x faster, <= 0.5x memory; read: <= 0.5x time and memory)",
  )
  line("list cold", cold, sdkList, true)
  line("list warm", warm, sdkList, true)
  line("list cold, host broker", get(lists, "ours-list broker"), sdkList, true)
  line("list warm, host broker", get(lists, "ours-list-warm broker"), sdkList, true)
  line("read", ourRead, sdkRead, false)
  const floor = get(lists, "floor-list")
  console.log(
    `floor: the cold list's file-system calls alone take ${fixed(floor.ms)} ms, so no cold list here beats ${fixed(sdkList.ms / floor.ms)}x`,
  )
  console.log(
    "headline: time from the direct-file runs (the broker's beside them); memory = the call's own peak (the whole process's peak, runtime and loaded code included, in parentheses); list figures from the cold run",
  )
  const broker = get(lists, "ours-list broker")
  const isolated: Round[] = []
  const isolatedReads: Round[] = []
  const listHome = homeOver("home-list", corpus.listConfigDir)
  const readHome = homeOver("home-read", corpus.readConfigDir)
  for (let i = 0; i < RUNS; i++) {
    isolated.push(worker("process", "list", listHome))
    isolatedReads.push(worker("process", "read", readHome, corpus.readCwd, corpus.readSessionId))
  }
  const isoCold = median(isolated.map((r) => r.coldMs ?? 0))
  const isoWarm = median(isolated.map((r) => r.warmMs ?? 0))
  const isoRead = median(isolatedReads.map((r) => r.readMs ?? 0))
  console.log(
    `plugin in its own process (startHost, host.call): list cold ${fixed(isoCold)} ms, warm ${fixed(isoWarm)} ms, read ${fixed(isoRead)} ms: ${fixed(sdkList.ms / isoCold)}x faster than the SDK's list cold, ${fixed(sdkList.ms / isoWarm)}x warm; read ${ratio(isoRead / sdkRead.ms)}x its time (ratios of medians)`,
  )
  console.log(
    `history: list ${fixed(pairedRatio(sdkList, cold, ms))}x faster (cold; ${fixed(pairedRatio(sdkList, broker, ms))}x through the broker; ${fixed(pairedRatio(sdkList, warm, ms))}x warm), ${ratio(cold.added / sdkList.added)}x memory (whole process ${ratio(cold.processPeak / sdkList.processPeak)}x); read ${ratio(pairedRatio(ourRead, sdkRead, ms))}x time, ${ratio(ourRead.added / sdkRead.added)}x memory (whole process ${ratio(ourRead.processPeak / sdkRead.processPeak)}x); isolated host: list ${fixed(sdkList.ms / isoCold)}x faster cold, ${fixed(sdkList.ms / isoWarm)}x warm, read ${ratio(isoRead / sdkRead.ms)}x time`,
  )
  return {
    "list cold ms": cold.ms,
    "list warm ms": warm.ms,
    "list cold call MB": cold.added / 1024 / 1024,
    "read ms": ourRead.ms,
    "read call MB": ourRead.added / 1024 / 1024,
    "SDK list over ours, cold": pairedRatio(sdkList, cold, ms),
    "read over the SDK's": pairedRatio(ourRead, sdkRead, ms),
    "isolated list cold ms": isoCold,
    "isolated read ms": isoRead,
  }
}

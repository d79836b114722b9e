/**
 * History benchmark: our list_sessions and read_session against the Claude
 * Agent SDK's listSessions and getSessionMessages, on the same corpus
 * (bench/corpus.ts), in one run.
 *
 * Each measurement runs in a fresh child process that loads one reader (ours:
 * the plugin's modules and effect; the SDK: its package) and runs it once,
 * page cache warm. Time is the call's wall time (CPU time is shown too: the
 * machine may be shared). Memory is the process's peak resident set during
 * the call (the kernel's VmHWM, reset through /proc/self/clear_refs just
 * before it, so buffers outside the JS heap count too) less the resident set
 * at its start: what the call itself needed, apart from the code each side
 * loads. The absolute peaks are printed as well. Readers run alternately,
 * RUNS times each; medians are compared.
 *
 *   npm run bench -- history
 */
import { spawnSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { type Corpus, ensureCorpus } from "./corpus.ts"

const RUNS = 3
const self = fileURLToPath(import.meta.url)

type Mode = "ours-list" | "sdk-list" | "ours-read" | "sdk-read"

interface Sample {
  readonly ms: number
  readonly cpuMs: number
  /** Peak resident set during the call, bytes. */
  readonly peak: number
  /** Resident set just before the call, bytes. */
  readonly base: number
  /** What the call returned (sessions listed, messages or items read), to show both did the work. */
  readonly count: number
}

const status = (key: string): number => {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${key}:`))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}

/** In the child (ours): load the plugin's modules, then measure one call. */
const worker = async (mode: Mode, corpus: Corpus): Promise<Sample> => {
  const { Effect } = await import("effect")
  const history = await import("../history.ts")
  const { NodeFsLayer } = await import("./node-fs.ts")

  const calls: Record<string, () => Promise<number>> = {
    "ours-list": async () => {
      const page = await Effect.runPromise(
        history.listSessions(corpus.listConfigDir, { limit: 1_000_000 }).pipe(Effect.provide(NodeFsLayer)),
      )
      return page.sessions.length
    },
    "ours-read": async () => {
      const transcript = await Effect.runPromise(
        history
          .readSession(corpus.readConfigDir, corpus.readCwd, corpus.readSessionId)
          .pipe(Effect.provide(NodeFsLayer)),
      )
      return transcript?.items.length ?? -1
    },
  }
  // Reset the kernel's peak-RSS mark so VmHWM covers the call only.
  writeFileSync("/proc/self/clear_refs", "5")
  const base = status("VmRSS")
  const cpu = process.cpuUsage()
  const started = performance.now()
  const call = calls[mode]
  if (call === undefined) throw new Error(`no worker for ${mode}`)
  const count = await call()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { ms, cpuMs: (used.user + used.system) / 1000, peak: status("VmHWM"), base, count }
}

/**
 * The SDK's side needs no TypeScript loader, so it runs as plain JavaScript
 * (the same measuring code, inlined); ours runs this file under tsx. Either
 * way the loader and modules are loaded before the measured call.
 */
const sdkWorkerScript = (mode: Mode): string => `
import { readFileSync, writeFileSync } from "node:fs"
const status = (key) => Number(/(\\d+)/.exec(readFileSync("/proc/self/status", "utf8").split("\\n").find((l) => l.startsWith(key + ":")) ?? "")?.[1] ?? 0) * 1024
const corpus = JSON.parse(process.env.BENCH_CORPUS)
const sdk = await import("@anthropic-ai/claude-agent-sdk")
const call = ${JSON.stringify(mode)} === "sdk-list"
  ? async () => (await sdk.listSessions()).length
  : async () => (await sdk.getSessionMessages(corpus.readSessionId, { dir: corpus.readCwd })).length
writeFileSync("/proc/self/clear_refs", "5")
const base = status("VmRSS")
const cpu = process.cpuUsage()
const started = performance.now()
const count = await call()
const ms = performance.now() - started
const used = process.cpuUsage(cpu)
process.stdout.write(JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, peak: status("VmHWM"), base, count }) + "\\n")
process.exit(0)
`

const measure = (mode: Mode, corpus: Corpus): Sample => {
  const configDir = mode.endsWith("list") ? corpus.listConfigDir : corpus.readConfigDir
  const args = mode.startsWith("sdk")
    ? ["--input-type=module", "-e", sdkWorkerScript(mode)]
    : ["--import", "tsx", self, "--worker", mode]
  const child = spawnSync(process.execPath, args, {
    cwd: fileURLToPath(new URL("..", import.meta.url)),
    env: { ...process.env, CLAUDE_CONFIG_DIR: configDir, BENCH_CORPUS: JSON.stringify(corpus) },
    encoding: "utf8",
    maxBuffer: 16 * 1024 * 1024,
  })
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{")) {
    throw new Error(`${mode} worker failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  }
  return JSON.parse(line) as Sample
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] as number
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const fixed = (x: number) => (x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(2))

interface Figures {
  readonly ms: number
  readonly cpuMs: number
  readonly peak: number
  readonly added: number
  readonly count: number
}

const summarizeRuns = (mode: Mode, samples: Sample[]): Figures => {
  const figures = {
    ms: median(samples.map((s) => s.ms)),
    cpuMs: median(samples.map((s) => s.cpuMs)),
    peak: median(samples.map((s) => s.peak)),
    added: median(samples.map((s) => s.peak - s.base)),
    count: samples[0]?.count ?? 0,
  }
  console.log(
    `${mode.padEnd(10)} ${fixed(figures.ms).padStart(6)} ms (cpu ${fixed(figures.cpuMs).padStart(5)} ms)   memory ${mb(figures.added).padStart(9)} (peak RSS ${mb(figures.peak).padStart(9)})   result ${figures.count}`,
  )
  console.log(
    `           runs: ${samples.map((s) => `${s.ms.toFixed(0)} ms/${mb(s.peak - s.base)}`).join(", ")}`,
  )
  return figures
}

/** Both readers of one kind, alternately, so a busy machine slows both alike. */
const compare = (ours: Mode, sdk: Mode, corpus: Corpus): [Figures, Figures] => {
  const a: Sample[] = []
  const b: Sample[] = []
  for (let i = 0; i < RUNS; i++) {
    a.push(measure(ours, corpus))
    b.push(measure(sdk, corpus))
  }
  return [summarizeRuns(ours, a), summarizeRuns(sdk, b)]
}

export const main = async (): Promise<void> => {
  const corpus = ensureCorpus()
  console.log(
    `corpus: ${corpus.listFiles} sessions, ${(corpus.listBytes / 1e9).toFixed(2)} GB (list); one transcript of ${(corpus.readBytes / 1e6).toFixed(1)} MB (read)`,
  )
  console.log(
    `median of ${RUNS} fresh processes per reader; memory = peak RSS during the call less RSS at its start`,
  )
  const [ourList, sdkList] = compare("ours-list", "sdk-list", corpus)
  const [ourRead, sdkRead] = compare("ours-read", "sdk-read", corpus)
  if (ourList.count !== sdkList.count)
    console.log(`note: listed ${ourList.count} sessions, the SDK ${sdkList.count}`)
  const listFaster = sdkList.ms / ourList.ms
  const listMemory = ourList.added / sdkList.added
  const readTime = ourRead.ms / sdkRead.ms
  const readMemory = ourRead.added / sdkRead.added
  console.log(
    `list: ${fixed(listFaster)}x faster (cpu ${fixed(sdkList.cpuMs / ourList.cpuMs)}x; target >= 10), ${listMemory.toFixed(2)}x memory (peak RSS ${(ourList.peak / sdkList.peak).toFixed(2)}x; target <= 0.5)`,
  )
  console.log(
    `read: ${readTime.toFixed(2)}x time (cpu ${(ourRead.cpuMs / sdkRead.cpuMs).toFixed(2)}x; target <= 0.5), ${readMemory.toFixed(2)}x memory (peak RSS ${(ourRead.peak / sdkRead.peak).toFixed(2)}x; target <= 0.5)`,
  )
  console.log(
    `history: list ${fixed(listFaster)}x faster, ${listMemory.toFixed(2)}x memory; read ${readTime.toFixed(2)}x time, ${readMemory.toFixed(2)}x memory`,
  )
}

if (process.argv[2] === "--worker") {
  const mode = process.argv[3] as Mode
  const corpus = JSON.parse(process.env.BENCH_CORPUS ?? "{}") as Corpus
  worker(mode, corpus).then(
    (sample) => {
      process.stdout.write(`${JSON.stringify(sample)}\n`)
      process.exit(0)
    },
    (error) => {
      console.error(error)
      process.exit(1)
    },
  )
}

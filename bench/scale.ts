/**
 * Scaling benchmark: how each cost of the history readers and the live
 * mapper grows with the work, each series beside its floor measured in the
 * same run.
 *
 * - read: read_session on sessions of 10, 100, 300 and 1,000 MB (the
 *   transcript compacted every 40 turns, a subagent every 10 turns, the
 *   agents' transcripts ~40% of the bytes), against two floors: reading the
 *   bytes of every file and finding the line breaks, and that plus decoding
 *   and `JSON.parse` of exactly the lines the reader parses (their count and
 *   bytes printed; wall and CPU ratios); time and the call's own
 *   peak memory (peak RSS during the call less RSS before it), and the text
 *   the answer holds;
 * - huge record: a 4 MB transcript ending in one tool result record of 12
 *   and of 100 MB, read and listed;
 * - list: list_sessions over 1,000, 10,000 and 50,000 sessions, cold (no
 *   summary cache), warm (the cache the cold run wrote) and a cold first
 *   page of 50, against the file-system calls of a cold list alone;
 * - live (bench/scale-live.ts): one mapper, and one session over a
 *   FakePeer, through 10,000 turns of recorded frames, per-frame cost against
 *   JSON.parse at the start and at the end, heap after GC along the way; idle
 *   sessions' heap per session; startup against the CLI spawned by hand.
 *
 * Each measured call is a fresh process (bench/scale-worker.ts, bundled by
 * esbuild); a point runs its reader and its floor in turn, `runs` rounds, and
 * a time ratio is the median of the rounds' ratios. Corpora:
 * bench/corpus.ts, written once under bench/corpus/scale/ and reused.
 *
 *   npm run bench -- scale [read] [list] [live]   the parts named (all by default; minutes: 1 GB, 50,000 files)
 *   npm run bench -- scale --quick                small sizes, for development
 *   npm run bench -- scale --clean                delete the scale corpora
 *
 * Returns its figures (bench/ab.ts).
 * Last line: `scale: read <r>x floor at 1 GB (<p> MB peak, <q>x floor+parse), list <l>x floor
 * at 50k, mapper <m>x JSON.parse at turn 10k, session <s> µs/frame (…),
 * idle <i> KB/session, startup +<t> ms`.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import type { Sample } from "./measure.ts"
import { FULL_LIVE, liveHeadline, liveSeries, QUICK_LIVE } from "./scale-live.ts"
import {
  cleanScaleCorpus,
  ensureHugeRecord,
  ensureListCorpus,
  ensureReadTarget,
  type ReadTarget,
} from "./corpus.ts"
import { bundleWorker, type Figures, median, runWorkerJson, workDirOf } from "./workers.ts"

interface Plan {
  readonly runs: number
  readonly readMb: ReadonlyArray<number>
  readonly hugeMb: ReadonlyArray<number>
  readonly listCounts: ReadonlyArray<number>
  readonly turns: number
}
const FULL: Plan = {
  runs: 3,
  readMb: [10, 100, 300, 1000],
  hugeMb: [12, 100],
  listCounts: [1000, 10_000, 50_000],
  turns: 10_000,
}
const QUICK: Plan = { runs: 3, readMb: [10, 30], hugeMb: [12], listCounts: [1000, 3000], turns: 1000 }

interface Measured extends Sample {
  readonly returned: number
  /** floor-parse: the lines it parsed (those the reader parses) and their bytes. */
  readonly parsedLines?: number
  readonly parsedBytes?: number
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`
const fixed = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2))

/** Readers measured in turn, `runs` rounds; each one's samples in round order. */
const rounds = (runs: number, readers: ReadonlyArray<() => Measured>): Measured[][] => {
  const out: Measured[][] = readers.map(() => [])
  for (let r = 0; r < runs; r++)
    readers.forEach((read, i) => {
      out[i]?.push(read())
    })
  return out
}
const paired = (a: ReadonlyArray<Measured>, b: ReadonlyArray<Measured>) =>
  median(a.map((s, i) => s.ms / (b[i] ?? s).ms))
const added = (xs: ReadonlyArray<Measured>) => median(xs.map((s) => s.callPeak - s.base))
const ms = (xs: ReadonlyArray<Measured>) => median(xs.map((s) => s.ms))

/** One fresh worker process a call; `cold` first deletes the plugin storage the last list left. */
interface Calls {
  readonly call: (mode: string, ...rest: string[]) => () => Measured
  readonly cold: (mode: string, ...rest: string[]) => () => Measured
}

/** read_session at each size and on the huge records, beside its two floors; the largest size's figures. */
const readPart = (plan: Plan, { call, cold }: Calls, figures: Figures) => {
  // Two floors: the bytes read and split (parsing nothing), and that plus JSON.parse of exactly the
  // lines the reader parses (history/chain.ts `isParsedLine`), the least a reader that returns them must do.
  console.log(
    "\nread_session              size    time     floor    ratio   floor+parse  ratio    CPU: read    floor  ratio  floor+parse  ratio   peak     answer text   items   parsed lines",
  )
  let readAtLargest = { ratio: 0, parseRatio: 0, peak: 0, mb: 0 }
  const readLine = (label: string, t: ReadTarget) => {
    const [ours = [], floor = [], parse = []] = rounds(plan.runs, [
      call("read", t.configDir, t.cwd, t.id),
      call("floor-read", ...t.paths),
      call("floor-parse", ...t.paths),
    ])
    const ratio = paired(ours, floor)
    const parseRatio = paired(ours, parse)
    const cpuRatio = median(ours.map((s, i) => s.cpuMs / (parse[i] ?? s).cpuMs))
    const cpuFloorRatio = median(ours.map((s, i) => s.cpuMs / (floor[i] ?? s).cpuMs))
    const cpu = (xs: ReadonlyArray<Measured>) => median(xs.map((s) => s.cpuMs))
    const peak = added(ours)
    const parsed = parse[0]
    console.log(
      `${label.padEnd(24)} ${mb(t.bytes).padStart(9)} ${fixed(ms(ours)).padStart(7)} ms ${fixed(ms(floor)).padStart(6)} ms ${ratio.toFixed(2).padStart(6)}x ${fixed(ms(parse)).padStart(9)} ms ${parseRatio.toFixed(2).padStart(6)}x ${fixed(cpu(ours)).padStart(8)} ms ${fixed(cpu(floor)).padStart(6)} ms ${cpuFloorRatio.toFixed(2).padStart(6)}x ${fixed(cpu(parse)).padStart(8)} ms ${cpuRatio.toFixed(2).padStart(6)}x ${mb(peak).padStart(9)} ${mb(median(ours.map((s) => s.returned))).padStart(10)}   ${ours[0]?.count}   ${parsed?.parsedLines} (${mb(parsed?.parsedBytes ?? 0)})`,
    )
    return { ratio, parseRatio, peak }
  }
  for (const size of plan.readMb) {
    const r = readLine(`session ${size} MB`, ensureReadTarget(size))
    readAtLargest = { ...r, mb: size }
  }
  for (const size of plan.hugeMb) {
    const t = ensureHugeRecord(size)
    readLine(`one ${size} MB record`, t)
    const [list = []] = rounds(plan.runs, [cold("list", t.configDir, "50")])
    console.log(
      `${"  listed".padEnd(24)} ${mb(t.bytes).padStart(9)} ${fixed(ms(list)).padStart(7)} ms (cold)                        ${mb(added(list)).padStart(9)}`,
    )
  }

  figures["read over floor"] = readAtLargest.ratio
  figures["read over floor+parse"] = readAtLargest.parseRatio
  figures["read peak MB"] = readAtLargest.peak / 1024 / 1024
  const size = readAtLargest.mb >= 1000 ? `${readAtLargest.mb / 1000} GB` : `${readAtLargest.mb} MB`
  return `read ${readAtLargest.ratio.toFixed(2)}x floor at ${size} (${(readAtLargest.peak / 1024 / 1024).toFixed(0)} MB peak, ${readAtLargest.parseRatio.toFixed(2)}x floor+parse)`
}

/** list_sessions at each count, cold, warm and a first page, beside its floor; the largest count's figures. */
const listPart = (plan: Plan, calls: Calls, figures: Figures) => {
  const { call } = calls
  console.log(
    "\nlist_sessions    sessions   cold     warm   page 50   floor   cold/floor  per session   peak cold  peak warm  peak page",
  )
  let listAtLargest = { ratio: 0, count: 0 }
  const largest = Math.max(...plan.listCounts)
  for (const count of plan.listCounts) {
    const dir = ensureListCorpus(count, largest)
    const all = String(count * 2)
    const [cold = [], warm = [], page = [], floor = []] = rounds(plan.runs, [
      calls.cold("list", dir, all),
      call("list", dir, all),
      calls.cold("list", dir, "50"),
      call("floor-list", dir),
    ])
    const ratio = paired(cold, floor)
    listAtLargest = { ratio, count }
    console.log(
      `${"".padEnd(16)} ${String(count).padStart(8)} ${fixed(ms(cold)).padStart(6)} ms ${fixed(ms(warm)).padStart(6)} ms ${fixed(ms(page)).padStart(6)} ms ${fixed(ms(floor)).padStart(6)} ms ${ratio.toFixed(2).padStart(8)}x ${((ms(cold) * 1000) / count).toFixed(1).padStart(8)} µs ${mb(added(cold)).padStart(11)} ${mb(added(warm)).padStart(10)} ${mb(added(page)).padStart(10)}`,
    )
  }

  figures["list cold over floor"] = listAtLargest.ratio
  const count = listAtLargest.count >= 1000 ? `${listAtLargest.count / 1000}k` : String(listAtLargest.count)
  return `list ${listAtLargest.ratio.toFixed(2)}x floor at ${count}`
}

export const main = async (args: ReadonlyArray<string>): Promise<Figures> => {
  const workDir = workDirOf("scale-bench")
  if (args.includes("--clean")) {
    cleanScaleCorpus()
    rmSync(workDir, { recursive: true, force: true })
    console.log("scale: corpora deleted")
    return {}
  }
  const plan = args.includes("--quick") ? QUICK : FULL
  const named = args.filter((a) => !a.startsWith("--"))
  const parts = named.length > 0 ? named : ["read", "list", "live"]
  for (const part of parts)
    if (!["read", "list", "live"].includes(part)) throw new Error(`scale: no part ${part}`)
  const worker = await bundleWorker("scale-worker", workDir)
  const storage = join(workDir, "storage.json")
  const call: Calls["call"] =
    (mode, ...rest) =>
    () =>
      runWorkerJson<Measured>([worker, mode, ...rest], { BENCH_STORAGE: storage })
  const calls: Calls = {
    call,
    cold:
      (mode, ...rest) =>
      () => {
        rmSync(storage, { force: true })
        return call(mode, ...rest)()
      },
  }
  console.log(
    `${plan === QUICK ? "quick" : "full"} series; median of ${plan.runs} fresh processes per point; peak = the call's own (peak RSS during it less RSS before it)`,
  )
  const figures: Figures = {}
  const headline: string[] = []
  if (parts.includes("read")) headline.push(readPart(plan, calls, figures))
  if (parts.includes("list")) headline.push(listPart(plan, calls, figures))
  if (parts.includes("live")) {
    const live = await liveSeries(plan === QUICK ? QUICK_LIVE : FULL_LIVE)
    Object.assign(figures, {
      "mapper over JSON.parse, last turns": live.mapper,
      "session µs/frame": live.sessionUs,
      "idle KB/session": live.idlePerSession / 1024,
      "startup plugin's own ms": live.startupOwnMs,
    })
    headline.push(liveHeadline(live))
  }
  console.log(`scale: ${headline.join(", ")}`)
  return figures
}

/**
 * The live mapper's cost per frame against `JSON.parse` of the same line.
 *
 * Three sides run in one process over the same strings: the floor
 * (`JSON.parse`, its value read), `decodeLine` alone, and `decodeLine` plus
 * a session's mapper (the figure). They take turns chunk by chunk (250
 * lines) in every order (`permutations`: a side that always ran first or
 * after the same side would meet the lines in a different cache state), in
 * CPU time (a busy machine's other processes are not counted as wall time
 * would count them for whichever side they fell in).
 *
 * - `npm run bench -- mapper`: the recorded stream (testkit/recordings.ts,
 *   repeated to ≥ 50,000 frames), two warm-up rounds and 15 measured, each
 *   with a fresh mapper; the headline is the median of per-round ratios,
 *   printed with its spread and the load average. Last line: `mapper:
 *   <ratio>x JSON.parse` (target: at most 1.5x).
 * - `node --expose-gc mapper.mjs series <turns>` (bench/scale.ts's live
 *   half, bundled): one mapper through `turns` turns, per repetition of the
 *   recordings, the heap after a full collection at ten points; each chunk
 *   position of a repetition meets every order (`repetitionOrder`), since
 *   every repetition is cut into the same chunks. Prints one JSON line.
 */
import { loadavg } from "node:os"
import { pathToFileURL } from "node:url"
import { makeMapper } from "../map.ts"
import { recordedLines, recordingNames, repetition } from "../testkit/recordings.ts"
import { decodeLine } from "../wire.ts"
import { type Figures, median, quantile } from "./workers.ts"

/** Every order of the sides 0 … n-1. */
export const permutations = (n: number): number[][] => {
  if (n <= 1) return [[0]]
  return permutations(n - 1).flatMap((order) =>
    Array.from({ length: n }, (_, at) => [...order.slice(0, at), n - 1, ...order.slice(at)]),
  )
}

/** The order for chunk `chunk` of repetition `rep`: over `orders.length` repetitions each position meets every order once. */
export const repetitionOrder = (orders: ReadonlyArray<number[]>, rep: number, chunk: number): number[] =>
  orders[(rep + chunk) % orders.length] as number[]

const CHUNK = 250
const ORDERS = permutations(3)

/** CPU time of this process in ms. */
const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

let sink = 0

/** The three sides over `lines`: the floor, decode alone, decode + map (`runId` read per frame, a turn's own). */
const sidesOver = (lines: ReadonlyArray<string>, map: (line: string) => void) => [
  (from: number, to: number) => {
    for (let i = from; i < to; i++)
      if ((JSON.parse(lines[i] as string) as { type?: unknown }).type === "x") sink++
  },
  (from: number, to: number) => {
    for (let i = from; i < to; i++) if (decodeLine(lines[i] as string).kind === "blank") sink++
  },
  (from: number, to: number) => {
    for (let i = from; i < to; i++) map(lines[i] as string)
  },
]

/** Each side's CPU ms over `lines`, chunk by chunk, the sides of chunk k in `orderOf(k)`. */
const timeSides = (
  lines: ReadonlyArray<string>,
  sides: ReadonlyArray<(from: number, to: number) => void>,
  orderOf: (chunk: number) => number[],
): number[] => {
  const times = sides.map(() => 0)
  for (let at = 0, chunk = 0; at < lines.length; at += CHUNK, chunk++) {
    const end = Math.min(at + CHUNK, lines.length)
    for (const side of orderOf(chunk)) {
      const start = cpuNow()
      ;(sides[side] as (from: number, to: number) => void)(at, end)
      times[side] = (times[side] as number) + cpuNow() - start
    }
  }
  return times
}

/** A fresh mapper's decode + map of one line, counting decode errors. */
const mapping = (errors: { count: number }) => {
  const mapper = makeMapper({ sessionId: "bench" })
  return (line: string) => {
    const decoded = decodeLine(line)
    if (decoded.kind === "frame") sink += mapper.map(decoded.frame, "run").events.length
    else if (decoded.kind === "error") errors.count++
  }
}

export const main = async (): Promise<Figures> => {
  const WARMUP = 2
  const ROUNDS = 15
  const base = recordedLines()
  const lines: string[] = []
  for (let rep = 0; lines.length < 50_000; rep++) lines.push(...repetition(base, rep))
  const errors = { count: 0 }
  const loadBefore = loadavg()[0] as number
  const rounds: number[][] = []
  for (let r = 0; r < WARMUP + ROUNDS; r++) {
    const times = timeSides(
      lines,
      sidesOver(lines, mapping(errors)),
      (k) => ORDERS[k % ORDERS.length] as number[],
    )
    if (r >= WARMUP) rounds.push(times)
  }
  const [parse, decode, map] = [0, 1, 2].map((side) => rounds.map((t) => t[side] as number)) as [
    number[],
    number[],
    number[],
  ]
  const ratios = map.map((m, i) => m / (parse[i] as number))
  const decodeRatio = median(decode.map((d, i) => d / (parse[i] as number)))
  const perFrame = (ms: number) => `${((ms * 1e6) / lines.length).toFixed(0)} ns/frame`
  console.log(
    `recordings: ${recordingNames().join(", ")} (${base.length} frames), repeated to ${lines.length} frames`,
  )
  console.log(
    `${WARMUP} warm-up + ${ROUNDS} rounds, chunks of ${CHUNK} lines, sides in every order; load average ${loadBefore.toFixed(2)} before, ${(loadavg()[0] as number).toFixed(2)} after`,
  )
  console.log(`JSON.parse (CPU): median ${perFrame(median(parse))}; decode + map: ${perFrame(median(map))}`)
  console.log(`decode errors: ${errors.count / (WARMUP + ROUNDS)} per pass`)
  console.log(
    `split (medians of per-round ratios): decode ${decodeRatio.toFixed(2)}x, mapping ${(median(ratios) - decodeRatio).toFixed(2)}x`,
  )
  console.log(
    `ratio per round: ${ratios.map((r) => r.toFixed(2)).join(" ")}; quartiles ${quantile(ratios, 0.25).toFixed(2)}-${quantile(ratios, 0.75).toFixed(2)}`,
  )
  console.log(`mapper: ${median(ratios).toFixed(2)}x JSON.parse`)
  return {
    "decode + map ns/frame": (median(map) * 1e6) / lines.length,
    "JSON.parse ns/frame": (median(parse) * 1e6) / lines.length,
    "over JSON.parse": median(ratios),
  }
}

/** The series (see the header): one mapper through `turns` turns, one JSON line. */
const series = (turns: number) => {
  const gc = (globalThis as { gc?: () => void }).gc
  if (gc === undefined) throw new Error("run with --expose-gc")
  const base = recordedLines()
  const turnsPerRep = base.filter((l) => (JSON.parse(l) as { type?: unknown }).type === "result").length
  const reps = Math.ceil(turns / turnsPerRep)
  const mapper = makeMapper({ sessionId: "scale" })
  let run = 0
  let runId = `run-${run}`
  const heapNow = () => {
    gc()
    gc()
    return process.memoryUsage().heapUsed
  }
  const heap = [{ turn: 0, bytes: heapNow() }]
  const every = Math.max(1, Math.floor(reps / 10))
  const [parseMs, decodeMs, mapMs] = [[], [], []] as [number[], number[], number[]]
  for (let rep = 0; rep < reps; rep++) {
    const lines = repetition(base, rep)
    const sides = sidesOver(lines, (line) => {
      const decoded = decodeLine(line)
      if (decoded.kind !== "frame") return
      sink += mapper.map(decoded.frame, runId).events.length
      // One run id a turn, as a session's: none built per frame inside the timing.
      if (decoded.frame.type === "result") runId = `run-${++run}`
    })
    const [p, d, m] = timeSides(lines, sides, (k) => repetitionOrder(ORDERS, rep, k))
    parseMs.push(p as number)
    decodeMs.push(d as number)
    mapMs.push(m as number)
    if ((rep + 1) % every === 0 || rep === reps - 1) heap.push({ turn: run, bytes: heapNow() })
  }
  const answer = { framesPerRep: base.length, turnsPerRep, reps, turns: run, parseMs, decodeMs, mapMs, heap }
  process.stdout.write(`${JSON.stringify({ ...answer, sink: sink > 0 })}\n`)
}

if (process.argv[2] === "series" && import.meta.url === pathToFileURL(process.argv[1] ?? "").href)
  series(Number(process.argv[3] ?? 10_000))

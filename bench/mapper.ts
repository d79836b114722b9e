/**
 * The live mapper's cost per frame against `JSON.parse` of the same line.
 *
 * `npm run bench -- mapper` (or `npx tsx bench/mapper.ts`). The stream is every
 * recorded `testdata/<scenario>/stdout.jsonl`, repeated until it holds at least
 * 50,000 frames, with message, tool and agent ids made unique per repetition
 * so each copy is new work for the mapper (not a replay it skips).
 *
 * How the ratio is kept steady on a shared machine: three sides run in this
 * one process over the same strings, interleaved chunk by chunk (250 lines)
 * in every order in turn (bench/orders.ts: no side always runs first, meets
 * the lines in cache or follows the same side), timed in CPU time (the
 * process's own: the slices other processes take on a busy machine are not
 * counted, as wall time would count them for whichever side they fell in): the floor (`JSON.parse`, its value
 * read), `decodeLine` alone, and `decodeLine` + a session's mapper (the
 * figure). Two warm-up rounds, then 15 measured ones, each with a fresh
 * mapper. The headline is the median of the per-round ratios; the spread
 * (min, quartiles, max) and the load average are printed beside it, so a
 * figure taken under load says so.
 * Last line: `mapper: <ratio>x JSON.parse` (target: at most 1.5x, issue 20; NOTES.md
 * "Performance" says where it stands and why).
 */
import { loadavg } from "node:os"
import { makeMapper } from "../map.ts"
import { decodeLine } from "../wire.ts"
import { permutations } from "./orders.ts"
import { recordedLines, recordingNames, repeatedLines } from "../testkit/recordings.ts"

const MIN_FRAMES = 50_000
const WARMUP = 2
const ROUNDS = 15
const CHUNK = 250
const ORDERS = permutations(3)
const recordings = recordingNames()
const base = recordedLines()
const lines = repeatedLines(MIN_FRAMES)
const bytes = lines.reduce((n, l) => n + l.length, 0)

/** CPU time of this process in ms: steadier than wall time on a shared machine. */
const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

let sink = 0
let errors = 0

type Side = (from: number, to: number) => void
const floor: Side = (from, to) => {
  for (let i = from; i < to; i++) {
    const value = JSON.parse(lines[i] as string) as { type?: unknown }
    if (value.type === "x") sink++
  }
}
const decodeOnly: Side = (from, to) => {
  for (let i = from; i < to; i++) if (decodeLine(lines[i] as string).kind === "blank") sink++
}

/** One round: a fresh mapper (a session) over the whole stream, the three sides chunk by chunk in every order. */
const round = (): { parse: number; decode: number; map: number } => {
  const mapper = makeMapper({ sessionId: "bench" })
  const decodeAndMap: Side = (from, to) => {
    for (let i = from; i < to; i++) {
      const decoded = decodeLine(lines[i] as string)
      if (decoded.kind !== "frame") {
        if (decoded.kind === "error") errors++
        continue
      }
      sink += mapper.map(decoded.frame, "run").events.length
    }
  }
  const sides = [floor, decodeOnly, decodeAndMap]
  const times = [0, 0, 0]
  for (let at = 0, chunk = 0; at < lines.length; at += CHUNK, chunk++) {
    const end = Math.min(at + CHUNK, lines.length)
    for (const side of ORDERS[chunk % ORDERS.length] as number[]) {
      const start = cpuNow()
      ;(sides[side] as Side)(at, end)
      times[side] = (times[side] as number) + cpuNow() - start
    }
  }
  return { parse: times[0] as number, decode: times[1] as number, map: times[2] as number }
}

const loadBefore = loadavg()[0] as number
for (let w = 0; w < WARMUP; w++) round()
const parseTimes: number[] = []
const mapTimes: number[] = []
const ratios: number[] = []
const decodeRatios: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const t = round()
  parseTimes.push(t.parse)
  mapTimes.push(t.map)
  ratios.push(t.map / t.parse)
  decodeRatios.push(t.decode / t.parse)
}
const loadAfter = loadavg()[0] as number
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b)
const at = (xs: number[], q: number) => sorted(xs)[Math.floor(q * (xs.length - 1))] as number
const median = (xs: number[]) => at(xs, 0.5)
const perFrame = (ms: number) => `${((ms * 1e6) / lines.length).toFixed(0)} ns/frame`
const spread = (xs: number[]) =>
  `min ${at(xs, 0).toFixed(2)}, quartiles ${at(xs, 0.25).toFixed(2)}-${at(xs, 0.75).toFixed(2)}, max ${at(xs, 1).toFixed(2)}`

console.log(
  `recordings: ${recordings.join(", ")} (${base.length} frames), repeated to ${lines.length} frames, ${(bytes / 1e6).toFixed(1)} MB`,
)
console.log(
  `${WARMUP} warm-up + ${ROUNDS} rounds, chunks of ${CHUNK} lines, sides in every order; load average ${loadBefore.toFixed(2)} before, ${loadAfter.toFixed(2)} after`,
)
console.log(
  `JSON.parse (CPU):   median ${median(parseTimes).toFixed(1)} ms (${perFrame(median(parseTimes))})`,
)
console.log(`decode + map (CPU): median ${median(mapTimes).toFixed(1)} ms (${perFrame(median(mapTimes))})`)
console.log(`decode errors: ${errors / (ROUNDS + WARMUP)} per pass${sink < 0 ? "" : ""}`)
console.log(
  `split (medians of per-round ratios): decode ${median(decodeRatios).toFixed(2)}x, mapping ${(median(ratios) - median(decodeRatios)).toFixed(2)}x`,
)
console.log(`ratio per round: ${ratios.map((r) => r.toFixed(2)).join(" ")}`)
console.log(`ratio spread: ${spread(ratios)}`)
console.log(`mapper: ${median(ratios).toFixed(2)}x JSON.parse`)

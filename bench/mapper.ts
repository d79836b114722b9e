/**
 * The live mapper's cost per frame against `JSON.parse` of the same line.
 *
 * `npm run bench -- mapper` (or `npx tsx bench/mapper.ts`). The stream is every
 * recorded `testdata/<scenario>/stdout.jsonl`, repeated until it holds at least
 * 50,000 frames, with message, tool and agent ids made unique per repetition
 * so each copy is new work for the mapper (not a replay it skips). Both sides
 * run in this process, interleaved, several rounds, timed in CPU time (the
 * machine is shared); the best round of each counts.
 * Last line: `mapper: <ratio>x JSON.parse` (target: at most 2x).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { makeMapper } from "../map.ts"
import { decodeLine } from "../wire.ts"

const MIN_FRAMES = 50_000
const ROUNDS = 7

const recordings = readdirSync("testdata")
  .filter((d) => existsSync(`testdata/${d}/stdout.jsonl`))
  .sort()
const base = recordings.flatMap((d) =>
  readFileSync(`testdata/${d}/stdout.jsonl`, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== ""),
)
if (base.length === 0) throw new Error("no recordings under testdata/*/stdout.jsonl")

const ids = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16})\b/g
const lines: string[] = []
for (let rep = 0; lines.length < MIN_FRAMES; rep++)
  for (const line of base) lines.push(line.replace(ids, `$1_${rep}`))
const bytes = lines.reduce((n, l) => n + l.length, 0)

/** CPU time of this process in ms: steadier than wall time on a shared machine. */
const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

let sink = 0
const parseAll = (): number => {
  const start = cpuNow()
  for (const line of lines) {
    const value = JSON.parse(line) as { type?: unknown }
    if (value.type === "x") sink++
  }
  return cpuNow() - start
}
let errors = 0
const mapAll = (): number => {
  const mapper = makeMapper({ sessionId: "bench" })
  const start = cpuNow()
  for (const line of lines) {
    const decoded = decodeLine(line)
    if (decoded.kind !== "frame") {
      if (decoded.kind === "error") errors++
      continue
    }
    sink += mapper.map(decoded.frame, "run").events.length
  }
  return cpuNow() - start
}

// Warm both paths up, then interleave rounds so drift hits both alike.
parseAll()
mapAll()
const parseTimes: number[] = []
const mapTimes: number[] = []
for (let round = 0; round < ROUNDS; round++) {
  parseTimes.push(parseAll())
  mapTimes.push(mapAll())
}
const best = (xs: number[]) => Math.min(...xs)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const perFrame = (ms: number) => `${((ms * 1e6) / lines.length).toFixed(0)} ns/frame`

console.log(
  `recordings: ${recordings.join(", ")} (${base.length} frames), repeated to ${lines.length} frames, ${(bytes / 1e6).toFixed(1)} MB`,
)
console.log(
  `JSON.parse (CPU):   best ${best(parseTimes).toFixed(1)} ms (${perFrame(best(parseTimes))}), median ${median(parseTimes).toFixed(1)} ms`,
)
console.log(
  `decode + map (CPU): best ${best(mapTimes).toFixed(1)} ms (${perFrame(best(mapTimes))}), median ${median(mapTimes).toFixed(1)} ms`,
)
console.log(`decode errors: ${errors / (ROUNDS + 1)} per pass${sink < 0 ? "" : ""}`)
console.log(`mapper: ${(best(mapTimes) / best(parseTimes)).toFixed(2)}x JSON.parse`)

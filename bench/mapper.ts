/**
 * The live mapper's cost per frame against `JSON.parse` of the same line.
 *
 * `npm run bench -- mapper` (or `npx tsx bench/mapper.ts`). The stream is every
 * recorded `testdata/<scenario>/stdout.jsonl`, repeated until it holds at least
 * 50,000 frames, with message, tool and agent ids made unique per repetition
 * so each copy is new work for the mapper (not a replay it skips). Both sides
 * run in this process, interleaved chunk by chunk, timed in CPU time (the
 * machine is shared); the headline is the median ratio over the rounds.
 * Last line: `mapper: <ratio>x JSON.parse` (target: at most 1.5x, issue 20; NOTES.md
 * "Performance" says where it stands and why).
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
let errors = 0
const CHUNK = 500

/**
 * One round: a fresh mapper (a session) over the whole stream, chunk by chunk,
 * each chunk timed under JSON.parse and then under decode + map, so load on the
 * machine hits both sides alike.
 */
const round = (): { parse: number; map: number } => {
  const mapper = makeMapper({ sessionId: "bench" })
  let parse = 0
  let map = 0
  for (let at = 0; at < lines.length; at += CHUNK) {
    const end = Math.min(at + CHUNK, lines.length)
    let start = cpuNow()
    for (let i = at; i < end; i++) {
      const value = JSON.parse(lines[i] as string) as { type?: unknown }
      if (value.type === "x") sink++
    }
    parse += cpuNow() - start
    start = cpuNow()
    for (let i = at; i < end; i++) {
      const decoded = decodeLine(lines[i] as string)
      if (decoded.kind !== "frame") {
        if (decoded.kind === "error") errors++
        continue
      }
      sink += mapper.map(decoded.frame, "run").events.length
    }
    map += cpuNow() - start
  }
  return { parse, map }
}

round() // warm-up
const parseTimes: number[] = []
const mapTimes: number[] = []
const ratios: number[] = []
for (let r = 0; r < ROUNDS; r++) {
  const t = round()
  parseTimes.push(t.parse)
  mapTimes.push(t.map)
  ratios.push(t.map / t.parse)
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
console.log(`ratio per round: ${ratios.map((r) => r.toFixed(2)).join(" ")}`)
console.log(`mapper: ${median(ratios).toFixed(2)}x JSON.parse`)

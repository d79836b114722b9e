/**
 * The scaling benchmark's live series (bench/scale.ts), in a process of its
 * own run with `--expose-gc`: one mapper (one session) over the recorded
 * frames of every `testdata/<scenario>/stdout.jsonl`, repeated with message,
 * tool and agent ids made new each time, until it has seen `turns` results
 * (a turn ends at a `result` frame; each turn gets its own run id).
 *
 * Per repetition, JSON.parse of its lines (the floor) and decode + map of
 * the same lines are timed in CPU, interleaved in chunks of 250 lines whose
 * first side alternates, so a busy machine slows both alike; the heap after a full GC is taken at ten points along the way, the
 * mapper kept alive. Prints one JSON line: per-repetition figures and the
 * heap points.
 *
 *   node --expose-gc scale-mapper.mjs <turns>
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { makeMapper } from "../map.ts"
import { decodeLine } from "../wire.ts"

const turns = Number(process.argv[2] ?? 10_000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc")

const ids = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16}(?:_[A-Za-z0-9]+)*)\b/g
// Each recording's ids made its own first: the scenarios share the scripted model's ids.
const base = readdirSync("testdata")
  .filter((d) => existsSync(`testdata/${d}/stdout.jsonl`))
  .sort()
  .flatMap((d, k) =>
    readFileSync(`testdata/${d}/stdout.jsonl`, "utf8")
      .split("\n")
      .filter((l) => l.trim() !== "")
      .map((l) => l.replace(ids, `$1_s${k}`)),
  )
const isResult = (line: string) => (JSON.parse(line) as { type?: unknown }).type === "result"
const turnsPerRep = base.filter(isResult).length
const reps = Math.ceil(turns / turnsPerRep)

const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const mapper = makeMapper({ sessionId: "scale" })
let run = 0
let sink = 0
const parseMs: number[] = []
const mapMs: number[] = []
const heap: Array<{ turn: number; bytes: number }> = []
const heapNow = () => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
heap.push({ turn: 0, bytes: heapNow() })
const every = Math.max(1, Math.floor(reps / 10))
const CHUNK = 250
for (let rep = 0; rep < reps; rep++) {
  const lines = base.map((l) => l.replace(ids, `$1_${rep}`))
  let parse = 0
  let map = 0
  // Chunk by chunk, the side that goes first alternating: neither always meets the lines in cache.
  for (let at = 0, chunk = 0; at < lines.length; at += CHUNK, chunk++) {
    const end = Math.min(at + CHUNK, lines.length)
    for (let k = 0; k < 2; k++) {
      const start = cpuNow()
      if ((chunk + k) % 2 === 0) {
        for (let i = at; i < end; i++)
          if ((JSON.parse(lines[i] as string) as { type?: unknown }).type === "x") sink++
        parse += cpuNow() - start
      } else {
        for (let i = at; i < end; i++) {
          const decoded = decodeLine(lines[i] as string)
          if (decoded.kind !== "frame") continue
          const out = mapper.map(decoded.frame, `run-${run}`)
          sink += out.events.length
          if (decoded.frame.type === "result") run++
        }
        map += cpuNow() - start
      }
    }
  }
  parseMs.push(parse)
  mapMs.push(map)
  if ((rep + 1) % every === 0 || rep === reps - 1) heap.push({ turn: run, bytes: heapNow() })
}
process.stdout.write(
  `${JSON.stringify({ framesPerRep: base.length, turnsPerRep, reps, turns: run, parseMs, mapMs, heap, sink: sink > 0 })}\n`,
)

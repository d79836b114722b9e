/**
 * The scaling benchmark's live series (bench/scale.ts), in a process of its
 * own run with `--expose-gc`: one mapper (one session) over the recorded
 * frames of every `testdata/<scenario>/stdout.jsonl`, repeated with message,
 * tool and agent ids made new each time, until it has seen `turns` results
 * (a turn ends at a `result` frame; each turn gets its own run id).
 *
 * Per repetition the same three sides as the `mapper` bench (bench/mapper.ts)
 * are timed in CPU over its lines: JSON.parse (the floor), decode alone, and
 * decode + map (the figure), interleaved in chunks of 250 lines in every
 * order in turn (bench/orders.ts), so the turn-10k ratio is measured as the
 * `mapper` bench's is and a busy machine slows every side alike; the heap
 * after a full GC is taken at ten points along the way, the mapper kept
 * alive. Prints one JSON line: per-repetition figures and the heap points.
 *
 * Like for like with the `mapper` bench (issue 20, scale10):
 * - Each chunk position of a repetition meets every order: chunk k of
 *   repetition r runs order (r + k) mod 6. A repetition is three chunks
 *   (250, 250, 152 lines, the same frames each time), and the orders once
 *   counted across repetitions cycled every two: the first chunk always ran
 *   decode + map first and never the floor first, the last always decode +
 *   map last. The side that runs first on a chunk meets its lines cold (the
 *   floor ~15-20% slower there; decode + map barely), so the floor never
 *   paid that on the largest chunk: +0.1x on the ratio, measured in one
 *   process as the repetitions whose orders matched the old cycle against
 *   the others (1.87-1.98x against 1.74-1.87x, three runs).
 * - The run id is one string per turn, as a session's run is: a template
 *   string built per frame inside the timed decode + map is gone (+0.8-2.5% on
 *   decode + map, measured against one string a turn in one process).
 *
 *   node --expose-gc scale-mapper.mjs <turns>
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { makeMapper } from "../map.ts"
import { decodeLine } from "../wire.ts"
import { permutations, repetitionOrder } from "./orders.ts"

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
const ORDERS = permutations(3)
const decodeMs: number[] = []
let runId = `run-${run}`
for (let rep = 0; rep < reps; rep++) {
  const lines = base.map((l) => l.replace(ids, `$1_${rep}`))
  const times = [0, 0, 0]
  const sides = [
    (from: number, to: number) => {
      for (let i = from; i < to; i++)
        if ((JSON.parse(lines[i] as string) as { type?: unknown }).type === "x") sink++
    },
    (from: number, to: number) => {
      for (let i = from; i < to; i++) if (decodeLine(lines[i] as string).kind === "blank") sink++
    },
    (from: number, to: number) => {
      for (let i = from; i < to; i++) {
        const decoded = decodeLine(lines[i] as string)
        if (decoded.kind !== "frame") continue
        const out = mapper.map(decoded.frame, runId)
        sink += out.events.length
        if (decoded.frame.type === "result") runId = `run-${++run}`
      }
    },
  ]
  for (let at = 0, k = 0; at < lines.length; at += CHUNK, k++) {
    const end = Math.min(at + CHUNK, lines.length)
    for (const side of repetitionOrder(ORDERS, rep, k)) {
      const start = cpuNow()
      ;(sides[side] as (from: number, to: number) => void)(at, end)
      times[side] = (times[side] as number) + cpuNow() - start
    }
  }
  parseMs.push(times[0] as number)
  decodeMs.push(times[1] as number)
  mapMs.push(times[2] as number)
  if ((rep + 1) % every === 0 || rep === reps - 1) heap.push({ turn: run, bytes: heapNow() })
}
process.stdout.write(
  `${JSON.stringify({ framesPerRep: base.length, turnsPerRep, reps, turns: run, parseMs, decodeMs, mapMs, heap, sink: sink > 0 })}\n`,
)

/**
 * The scaling benchmark's live half, printed by `npm run bench -- scale`
 * after its history series, or alone by `npm run bench -- scale live`
 * (`--quick` for 1,000 turns). Each series beside its floor, in one run:
 *
 * - mapper: one mapper over 10,000 turns of recorded frames against
 *   JSON.parse of the same lines, first and last repetitions, heap after GC
 *   (bench/mapper.ts's series, in a process of its own, measured as the
 *   `mapper` bench is); the figure is
 *   the median of the last tenth's per-repetition ratios, printed with
 *   their quartiles and the load average before and after;
 * - session: the same turns through the plugin's session (prompt written,
 *   frames read by its line transport, decoded, mapped, events emitted, run
 *   ended) over a FakePeer, per frame first and last, heap after GC
 *   (bench/scale-session.ts `live`);
 * - idle: the heap after GC of N idle sessions against none, per session
 *   (bench/scale-session.ts `idle`; target ≤ 2 MB);
 * - startup: create_session → the CLI's initialize answer against the same
 *   CLI spawned by hand with the same flags, interleaved, medians, and the
 *   plugin's own time on that path taken directly (before the spawn, after
 *   the answer; bench/scale-startup.ts; target ≤ 20 ms added).
 *
 * Returns the headline's parts.
 */
import { loadavg } from "node:os"
import { measureStartup, printStartup } from "./scale-startup.ts"
import { bundleWorker, median, quantile, runWorkerJson, workDirOf } from "./workers.ts"

export interface LivePlan {
  readonly turns: number
  readonly idleSessions: number
  readonly startupRounds: number
}
export const FULL_LIVE: LivePlan = { turns: 10_000, idleSessions: 100, startupRounds: 15 }
export const QUICK_LIVE: LivePlan = { turns: 1000, idleSessions: 20, startupRounds: 3 }

export interface LiveHeadline {
  /** decode + map against JSON.parse over the last repetitions. */
  readonly mapper: number
  /** The session's µs per frame over the last repetitions, and its ratio to the first. */
  readonly sessionUs: number
  readonly sessionDrift: number
  /** Heap after GC grown from the first point to the last, session series. */
  readonly sessionHeapGrown: number
  readonly idlePerSession: number
  readonly startupAddedMs: number
  /** The plugin's own time on a real start (before the spawn, after the answer: bench/scale-startup.ts). */
  readonly startupOwnMs: number
  /** The plugin's own share of a start, over a FakePeer (no CLI time in it). */
  readonly startupOwnFakeMs: number
  readonly turns: number
}

const load = () => (loadavg()[0] as number).toFixed(2)
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(2)} MB`

interface Series {
  readonly framesPerRep: number
  readonly turnsPerRep: number
  readonly reps: number
  readonly turns: number
  readonly parseMs: number[]
  readonly heap: Array<{ turn: number; bytes: number }>
}

/** Median over a window of repetitions of one series' cost, per frame, and against JSON.parse. */
const windowed = (s: Series, costMs: number[], from: number, to: number) => {
  const ratios = costMs.slice(from, to).map((m, i) => m / (s.parseMs[from + i] ?? m))
  return {
    perFrameNs: (median(costMs.slice(from, to)) * 1e6) / s.framesPerRep,
    parseNs: (median(s.parseMs.slice(from, to)) * 1e6) / s.framesPerRep,
    ratio: median(ratios),
    quartiles: `${quantile(ratios, 0.25).toFixed(2)}-${quantile(ratios, 0.75).toFixed(2)}`,
  }
}

const printSeries = (label: string, s: Series, costMs: number[], what: string) => {
  const window = Math.max(1, Math.floor(s.reps / 10))
  const first = windowed(s, costMs, 0, window)
  const last = windowed(s, costMs, s.reps - window, s.reps)
  const ns = (x: number) => (x >= 10_000 ? `${(x / 1000).toFixed(1)} µs` : `${x.toFixed(0)} ns`)
  console.log(
    `\n${label}: ${s.turns} turns (${s.reps} repetitions of ${s.framesPerRep} recorded frames, ${s.turnsPerRep} turns each)`,
  )
  console.log(
    `  first ${window} repetitions: ${what} ${ns(first.perFrameNs)}/frame, JSON.parse ${ns(first.parseNs)}/frame, ${first.ratio.toFixed(2)}x (quartiles ${first.quartiles})`,
  )
  console.log(
    `  last ${window} repetitions:  ${what} ${ns(last.perFrameNs)}/frame, JSON.parse ${ns(last.parseNs)}/frame, ${last.ratio.toFixed(2)}x (quartiles ${last.quartiles})`,
  )
  console.log(`  heap after GC by turn: ${s.heap.map((h) => `${h.turn}: ${mb(h.bytes)}`).join(", ")}`)
  const grown = (s.heap.at(-1)?.bytes ?? 0) - (s.heap[1]?.bytes ?? 0)
  console.log(`  heap grown from the first point to the last: ${mb(grown)}`)
  return { first, last, grown }
}

export const liveSeries = async (plan: LivePlan): Promise<LiveHeadline> => {
  const workDir = workDirOf("scale-live")
  const mapperWorker = await bundleWorker("mapper", workDir)
  const sessionWorker = await bundleWorker("scale-session", workDir)

  const loadBefore = load()
  const mapper = runWorkerJson<Series & { mapMs: number[]; decodeMs: number[] }>([
    "--expose-gc",
    mapperWorker,
    "series",
    String(plan.turns),
  ])
  const m = printSeries(
    `mapper, one session (load average ${loadBefore} before, ${load()} after)`,
    mapper,
    mapper.mapMs,
    "decode + map",
  )
  const lastWindow = Math.max(1, Math.floor(mapper.reps / 10))
  const decodeLast = windowed(mapper, mapper.decodeMs, mapper.reps - lastWindow, mapper.reps)
  console.log(
    `  split over the last ${lastWindow} repetitions (as the mapper bench's): decode ${decodeLast.ratio.toFixed(2)}x, mapping ${(m.last.ratio - decodeLast.ratio).toFixed(2)}x`,
  )

  const session = runWorkerJson<Series & { turnMs: number[] }>([
    "--expose-gc",
    sessionWorker,
    "live",
    String(plan.turns),
  ])
  const s = printSeries(
    "session (session.ts over a FakePeer), one session",
    session,
    session.turnMs,
    "prompt to run end",
  )

  const idle = runWorkerJson<{
    sessions: number
    before: number
    after: number
    perSession: number
    ownStartMs: number
  }>(["--expose-gc", sessionWorker, "idle", String(plan.idleSessions)])
  console.log(
    `\nidle sessions: heap after GC ${mb(idle.before)} with none, ${mb(idle.after)} with ${idle.sessions}: ${(idle.perSession / 1024).toFixed(1)} KB per session (target ≤ 2 MB)`,
  )

  console.log(
    `  the plugin's own share of a start (to its initialize written, and from the answer to ready; FakePeer): median ${idle.ownStartMs.toFixed(2)} ms`,
  )

  const startup = printStartup(await measureStartup(plan.startupRounds))
  return {
    mapper: m.last.ratio,
    sessionUs: s.last.perFrameNs / 1000,
    sessionDrift: s.last.perFrameNs / s.first.perFrameNs,
    sessionHeapGrown: s.grown,
    idlePerSession: idle.perSession,
    startupAddedMs: startup.addedMs,
    startupOwnMs: startup.ownMs,
    startupOwnFakeMs: idle.ownStartMs,
    turns: plan.turns,
  }
}

/** The headline's live part: `mapper <m>x JSON.parse at turn 10k, session …, idle …, startup +… ms`. */
export const liveHeadline = (h: LiveHeadline): string => {
  const turnsAt = h.turns >= 1000 ? `${h.turns / 1000}k` : String(h.turns)
  return `mapper ${h.mapper.toFixed(2)}x JSON.parse at turn ${turnsAt}, session ${h.sessionUs.toFixed(1)} µs/frame (${h.sessionDrift.toFixed(2)}x its first turns, heap +${(h.sessionHeapGrown / 1024 / 1024).toFixed(1)} MB), idle ${(h.idlePerSession / 1024).toFixed(0)} KB/session, startup: plugin's own ${h.startupOwnMs.toFixed(1)} ms (${h.startupOwnFakeMs.toFixed(1)} ms over a FakePeer), +${h.startupAddedMs.toFixed(0)} ms against the CLI by hand`
}

/**
 * What the history workers (bench/history-worker.ts, bench/scale-worker.ts,
 * bench/isolation-worker.ts) share to measure one call.
 *
 * - `measureCall`: wall and CPU time, and memory from the kernel's counters
 *   (buffers outside the JS heap count too): the process's peak (VmHWM,
 *   start-up and loaded code included), the peak during the call (VmHWM
 *   reset through /proc/self/clear_refs just before it) and the resident
 *   set just before it, so `callPeak - base` is what the call added;
 * - `settleListCache`: the summary cache a list writes after its answer,
 *   waited for outside the timing, so a warm run finds all of it;
 * - `rawEndsFloor`: the file-system calls of a cold list and nothing else.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
} from "node:fs"
import { Effect } from "effect"
import type { JsonStorage } from "../host/broker/storage.ts"

export interface Sample {
  readonly ms: number
  readonly cpuMs: number
  /** Resident set just before the call, bytes. */
  readonly base: number
  /** Peak resident set during the call, bytes. */
  readonly callPeak: number
  /** Peak resident set of the whole process up to the call's end, bytes. */
  readonly processPeak: number
  /** What the call returned (sessions listed, messages or items read), to show both did the work. */
  readonly count: number
  /** Ours: how long the background write of the summary cache took after the call (not in `ms`). */
  readonly flushMs?: number
}

const status = (key: string): number => {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith(`${key}:`))
  return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) * 1024
}

export const measureCall = async (call: () => Promise<number>): Promise<Sample> => {
  const loadPeak = status("VmHWM")
  writeFileSync("/proc/self/clear_refs", "5")
  const base = status("VmRSS")
  const cpu = process.cpuUsage()
  const started = performance.now()
  const count = await call()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  const callPeak = status("VmHWM")
  return {
    ms,
    cpuMs: (used.user + used.system) / 1000,
    base,
    callPeak,
    processPeak: Math.max(loadPeak, callPeak),
    count,
  }
}

const PREFIX = "cache:history:list:"
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Until some shard exists and no new one has come for a few polls, then every write on disk. */
export const settleListCache = async (storage: JsonStorage, timeoutMs = 30_000): Promise<void> => {
  const until = Date.now() + timeoutMs
  const state = async () => {
    const keys = (await Effect.runPromise(storage.keys)).filter((k) => k.startsWith(PREFIX))
    return keys.length === 0 ? "" : String(keys.length)
  }
  let last = await state()
  let quiet = 0
  while (quiet < 5 && Date.now() < until) {
    await sleep(20)
    const now = await state()
    quiet = now !== "" && now === last ? quiet + 1 : 0
    last = now
  }
  await storage.flush()
}

/**
 * The file-system calls of a cold list and nothing else: list the project
 * folders, then per `<id>.jsonl` open, fstat, read both ends into one
 * buffer, close. No decoding, no parsing, no Effect. Returns the files read.
 */
export const rawEndsFloor = (configDir: string, headBytes: number, tailBytes: number): number => {
  const root = `${configDir}/projects`
  const buffer = new Uint8Array(headBytes + tailBytes)
  let files = 0
  for (const folder of readdirSync(root, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue
    const dir = `${root}/${folder.name}`
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.name.endsWith(".jsonl") || entry.isDirectory()) continue
      const fd = openSync(`${dir}/${entry.name}`, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const size = fstatSync(fd).size
        readSync(fd, buffer, 0, Math.min(headBytes, size), 0)
        if (size > headBytes)
          readSync(fd, buffer, headBytes, Math.min(tailBytes, size), Math.max(0, size - tailBytes))
      } finally {
        closeSync(fd)
      }
      files++
    }
  }
  return files
}

/**
 * How the history benchmark's workers measure one call: wall and CPU time,
 * and memory from the kernel's counters (so buffers outside the JS heap
 * count too).
 *
 * - process peak: the whole process's peak resident set, start-up and the
 *   code each side loads included (VmHWM);
 * - call peak: the peak resident set during the call (VmHWM reset through
 *   /proc/self/clear_refs just before it);
 * - base: the resident set just before the call; call peak less base is
 *   what the call itself added.
 */
import { readFileSync, writeFileSync } from "node:fs"

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

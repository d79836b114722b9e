/**
 * One hook call at a time per session: the CLI may run a background
 * subagent's hook beside the main agent's, and each call reads, changes and
 * writes the session's state whole. The lock is a folder (`mkdir` either
 * makes it or finds it, atomically); one older than `staleMs` is a call that
 * died holding it and is taken over. A call that cannot get the lock within
 * `waitMs` does nothing (undefined) rather than hold the session up.
 */
import { mkdirSync, rmSync, statSync } from "node:fs"
import { dirname } from "node:path"

export interface LockTimes {
  readonly waitMs: number
  readonly staleMs: number
  readonly pollMs: number
}

export const HOOK_LOCK_TIMES: LockTimes = { waitMs: 20_000, staleMs: 60_000, pollMs: 20 }

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const tryLock = (path: string, staleMs: number): boolean => {
  try {
    mkdirSync(path)
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      mkdirSync(dirname(path), { recursive: true })
      return tryLock(path, staleMs)
    }
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    const age = Date.now() - (statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? Date.now())
    if (age > staleMs) rmSync(path, { recursive: true, force: true })
    return false
  }
}

export const withLock = async <A>(
  path: string,
  work: () => Promise<A>,
  times: LockTimes = HOOK_LOCK_TIMES,
): Promise<A | undefined> => {
  const until = Date.now() + times.waitMs
  while (!tryLock(path, times.staleMs)) {
    if (Date.now() >= until) return undefined
    await sleep(times.pollMs)
  }
  try {
    return await work()
  } finally {
    rmSync(path, { recursive: true, force: true })
  }
}

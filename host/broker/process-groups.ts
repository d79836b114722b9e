/**
 * A child's process group: signalling it, asking whether any member still
 * runs, waiting for it to empty, and the exit hook that kills every group
 * still live if the host process itself exits.
 */
import type { ChildProcess } from "node:child_process"
import { procGroupMembers } from "./proc.ts"

export const signalGroup = (
  child: { readonly pid: number; readonly node: ChildProcess },
  signal: NodeJS.Signals,
): void => {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // No group (already gone) or not ours: fall back to the leader alone.
    try {
      child.node.kill(signal)
    } catch {}
  }
}

/**
 * Is any member of the group still running? Signal 0 also answers for
 * zombies nobody has reaped yet (a container's init may never reap), so on
 * Linux the members found in /proc must include one that is not a zombie.
 */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  const members = procGroupMembers(pgid)
  return members === null || members.some((m) => m.state !== "Z")
}

export const sleep = (ms: number, options?: { readonly unref: boolean }) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    // A look that keeps no process alive.
    if (options?.unref) timer.unref()
  })

export const within = <A>(promise: Promise<A>, ms: number): Promise<boolean> =>
  Promise.race([promise.then(() => true), sleep(ms).then(() => false)])

/** Wait until no member of the group is left, up to `ms`. */
export const groupGone = async (pgid: number, ms: number): Promise<boolean> => {
  const until = Date.now() + ms
  while (groupAlive(pgid)) {
    if (Date.now() >= until) return false
    await sleep(25)
  }
  return true
}

// The last resort: if the host process itself exits, no child of ours stays.
const everyLiveGroup = new Set<number>()
let exitHookInstalled = false
const installExitHook = () => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const pgid of everyLiveGroup) {
      try {
        process.kill(-pgid, "SIGKILL")
      } catch {}
    }
  })
}

/** Kill the group `pgid` if the host exits before it has ended. */
export const killAtExit = (pgid: number): void => {
  everyLiveGroup.add(pgid)
  installExitHook()
}

/** The group has ended: the exit hook leaves it alone. */
export const forgetAtExit = (pgid: number): void => {
  everyLiveGroup.delete(pgid)
}

/**
 * The sweep of what a child left behind. A child's own children may leave its
 * group (the CLI runs each Bash command in a group of its own) and outlive it
 * (re-parented when it dies). So every child carries a tag in its
 * environment, which its descendants inherit, and ending a child ends every
 * process that carries its tag, and every process below it in the tree, in
 * whatever group. Linux only: where there is no /proc the sweep finds nothing.
 */
import { readFile } from "node:fs/promises"
import type { ProcessExit } from "../../sdk/plugin-api.ts"
import { procTable } from "./proc.ts"
import { sleep } from "./process-groups.ts"

/** The variable every child carries, and its descendants with it. */
export const TAG = "CVG_BROKER_TAG"

/** What the sweep needs of a child. */
export interface Sweepable {
  readonly pid: number
  /** The value of TAG in its environment, inherited by everything it starts. */
  readonly tag: string
  /** Its start in clock ticks since boot (/proc's `starttime`): nothing older can be its descendant. 0 if unknown. */
  readonly startedAt: number
  readonly exit: ProcessExit | null
}

/**
 * Does `pid`'s environment carry `TAG=tag`? "unsure" when it reads empty: a
 * process in the middle of an exec has no environment for a moment (every
 * other process this host starts has one), so it is asked again shortly.
 */
const carries = async (pid: number, needle: Buffer): Promise<boolean | "unsure"> => {
  try {
    // Off the event loop: reading a process's environment waits while that process is in an exec.
    const environ = await readFile(`/proc/${pid}/environ`)
    if (environ.length === 0) return "unsure"
    return environ.indexOf(needle) === 0 || environ.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0
  } catch {
    return false
  }
}

/** How often, and how far apart, a sweep asks again about a process that read empty. */
const UNSURE_TRIES = 3
const UNSURE_WAIT_MS = 5

/**
 * Every live process that is `child`'s: it carries the child's tag, or it
 * descends from the child or from one that does. Zombies are left out (they
 * are gone already, waiting only to be reaped); so are init and kernel
 * threads (never ours, and their environment reads empty).
 */
const leftoversOf = async (child: Sweepable): Promise<number[]> => {
  const table = await procTable()
  const needle = Buffer.from(`${TAG}=${child.tag}\0`)
  const ours = new Set<number>()
  let unsure: number[] = []
  // Only what started after the child can be its descendant: the rest of the machine is never read.
  const candidates = table.filter(
    (p) =>
      p.startedAt >= child.startedAt && p.pid !== process.pid && p.state !== "Z" && p.pid > 2 && p.ppid !== 2,
  )
  const answers = await Promise.all(candidates.map((p) => carries(p.pid, needle)))
  candidates.forEach((p, i) => {
    if (answers[i] === "unsure") unsure.push(p.pid)
    else if (answers[i]) ours.add(p.pid)
  })
  for (let tries = 0; unsure.length > 0 && tries < UNSURE_TRIES; tries++) {
    await sleep(UNSURE_WAIT_MS)
    const again: number[] = []
    for (const pid of unsure) {
      const answer = await carries(pid, needle)
      if (answer === "unsure") again.push(pid)
      else if (answer) ours.add(pid)
    }
    unsure = again
  }
  if (!child.exit) ours.add(child.pid)
  // Below any of ours in the tree, whatever its environment.
  let grew = true
  while (grew) {
    grew = false
    for (const p of table)
      if (!ours.has(p.pid) && ours.has(p.ppid) && p.pid !== process.pid) {
        ours.add(p.pid)
        grew = true
      }
  }
  const live = new Set(table.filter((p) => p.state !== "Z").map((p) => p.pid))
  return [...ours].filter((pid) => pid !== child.pid && live.has(pid))
}

const signalAll = (pids: ReadonlyArray<number>, signal: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {}
  }
}

/**
 * When the sweep looks again after the first, in the background: a process
 * caught mid-exec has no readable environment for a moment, so the one look
 * at the child's end can miss it, and once its parent is gone nothing else
 * leads to it.
 */
const LOOK_AGAIN_MS = [100, 400, 1_500]

/** End what a child left behind now, then look again a few times shortly after. */
export const endLeftovers = async (child: Sweepable, grace: number): Promise<void> => {
  await sweepLeftovers(child, grace)
  void (async () => {
    for (const ms of LOOK_AGAIN_MS) {
      await sleep(ms, { unref: true })
      await sweepLeftovers(child, grace)
    }
  })()
}

/** End what a child left behind: SIGTERM, SIGKILL after the grace, each wait bounded. */
const sweepLeftovers = async (child: Sweepable, grace: number): Promise<void> => {
  let left = await leftoversOf(child)
  if (left.length === 0) return
  signalAll(left, "SIGTERM")
  const until = Date.now() + grace
  while (left.length > 0 && Date.now() < until) {
    await sleep(25)
    left = await leftoversOf(child)
  }
  if (left.length === 0) return
  signalAll(left, "SIGKILL")
  const killedBy = Date.now() + 1_000
  while ((await leftoversOf(child)).length > 0 && Date.now() < killedBy) await sleep(25)
}

/**
 * What /proc says about processes: the table of every process (pid, parent,
 * state, start time) and the members of one process group. Empty or null
 * where there is no /proc; a process that vanishes mid-read is skipped.
 */
import { readdirSync, readFileSync } from "node:fs"

export interface ProcEntry {
  readonly pid: number
  readonly ppid: number
  readonly state: string
  /** Clock ticks since boot. */
  readonly startedAt: number
}

/** The fields of /proc/<pid>/stat after the command's closing parenthesis. */
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(")") + 2).split(" ")
/** `starttime`, field 22 of stat: the 20th after the command. */
const STARTTIME = 19

/** When `pid` started, in clock ticks since boot (0 if it cannot be read). */
export const startOf = (pid: number): number => {
  try {
    return Number(statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))[STARTTIME]) || 0
  } catch {
    return 0
  }
}

/** How many stat files procTable reads between two turns of the event loop. */
const STATS_PER_TURN = 64

/**
 * Every process in /proc (empty where there is none). Each stat file is read
 * at once (a stat read never waits on its process, unlike an environment
 * read), a few dozen per turn of the event loop: far less CPU than a promise
 * per file (open, fstat, read, close each a trip to the thread pool), and
 * the loop is never held long. Every child's end runs several sweeps.
 */
export const procTable = async (): Promise<ProcEntry[]> => {
  let names: string[]
  try {
    names = readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  const out: ProcEntry[] = []
  for (const [i, name] of names.entries()) {
    if (i > 0 && i % STATS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve))
    let stat: string
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8")
    } catch {
      continue
    }
    const fields = statFields(stat)
    out.push({
      pid: Number(name),
      ppid: Number(fields[1]),
      state: fields[0] ?? "",
      startedAt: Number(fields[STARTTIME]) || 0,
    })
  }
  return out
}

/** Members of a process group from /proc (null where there is no /proc). */
export const procGroupMembers = (pgid: number): Array<{ pid: number; state: string }> | null => {
  let pids: string[]
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return null
  }
  const members: Array<{ pid: number; state: string }> = []
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      const [state, , pgrp] = statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))
      if (Number(pgrp) === pgid) members.push({ pid: Number(pid), state: state ?? "" })
    } catch {}
  }
  return members
}

/**
 * What /proc says about processes: the table of every process (pid, parent,
 * state, start time) and the members of one process group. Empty or null
 * where there is no /proc; a process that vanishes mid-read is skipped.
 */
import { readdirSync, readFileSync } from "node:fs"
import { readdir, readFile } from "node:fs/promises"

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

/** Every process in /proc (empty where there is none); read off the event loop. */
export const procTable = async (): Promise<ProcEntry[]> => {
  let names: string[]
  try {
    names = (await readdir("/proc")).filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  const stats = await Promise.all(
    names.map((name) => readFile(`/proc/${name}/stat`, "utf8").catch(() => undefined)),
  )
  const out: ProcEntry[] = []
  names.forEach((name, i) => {
    const stat = stats[i]
    if (stat === undefined) return
    const fields = statFields(stat)
    out.push({
      pid: Number(name),
      ppid: Number(fields[1]),
      state: fields[0] ?? "",
      startedAt: Number(fields[STARTTIME]) || 0,
    })
  })
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

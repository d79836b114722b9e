/**
 * The model and effort a person last chose with /model and /effort, per
 * account, kept in the host's data folder (`tui/preferences.json`) so the
 * next start opens with them. A flag given at start wins; a remembered value
 * the agent no longer offers is dropped at start with a note (startChat).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"

/** The options remembered: the ones a person picks for themselves, not the approval mode. */
export const REMEMBERED = ["model", "effort"] as const

type Stored = Record<string, Record<string, string>>

const fileOf = (dataDir: string) => join(dataDir, "tui", "preferences.json")

const readAll = (dataDir: string): Stored => {
  try {
    const json = JSON.parse(readFileSync(fileOf(dataDir), "utf8")) as unknown
    return json && typeof json === "object" ? (json as Stored) : {}
  } catch {
    return {}
  }
}

/** The values remembered for `agentId` (only strings, only the remembered options). */
export const readPreferences = (dataDir: string, agentId: string): Record<string, string> => {
  const mine = readAll(dataDir)[agentId] ?? {}
  return Object.fromEntries(
    REMEMBERED.flatMap((id) => (typeof mine[id] === "string" ? [[id, mine[id]] as const] : [])),
  )
}

/** Remember `optionId = value` for `agentId` (other options are not kept). Failures only lose the memory. */
export const rememberPreference = (
  dataDir: string,
  agentId: string,
  optionId: string,
  value: string,
): void => {
  if (!(REMEMBERED as ReadonlyArray<string>).includes(optionId)) return
  const all = readAll(dataDir)
  all[agentId] = { ...all[agentId], [optionId]: value }
  const file = fileOf(dataDir)
  try {
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(`${file}.tmp`, `${JSON.stringify(all, null, 2)}\n`)
    renameSync(`${file}.tmp`, file)
  } catch {}
}

/**
 * The login environment as a child sees it: the merged variables, and where
 * its PATH finds a command.
 */
import { constants } from "node:fs"
import { access, stat } from "node:fs/promises"
import { posix } from "node:path"
import type { SpawnOptions } from "../../sdk/plugin-api.ts"

/** Login env + the caller's changes (a value of undefined removes the name). */
export const mergeEnv = (
  login: Readonly<Record<string, string | undefined>>,
  changes: SpawnOptions["env"],
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(login)) if (v !== undefined) out[k] = v
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (v === undefined) delete out[k]
    else out[k] = v
  }
  return out
}

/** Where PATH finds an executable `command` (absolute PATH entries only: never the host's cwd). */
export const findOnPath = async (command: string, pathVar: string | undefined): Promise<string | null> => {
  for (const dir of (pathVar ?? "").split(posix.delimiter)) {
    if (!dir.startsWith("/")) continue
    const candidate = posix.join(dir, command)
    try {
      if (!(await stat(candidate)).isFile()) continue
      await access(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return null
}

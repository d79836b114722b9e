/**
 * Where the CLI stores its conversations: `<config dir>/projects/<encoded
 * cwd>/<session id>.jsonl`, a session's own folder (subagents, workflows, a
 * rename's title file) beside it as `<session id>/`.
 */
import { Effect } from "effect"
import { Fs } from "../sdk/plugin-api.ts"
import { join } from "../sdk/paths.ts"

/** The CLI caps a folder name at 200 characters and adds a hash of the whole path. */
const MAX_DIR_NAME = 200

/** The CLI's string hash (Java's hashCode), written in base 36. */
const pathHash = (path: string): string => {
  let h = 0
  for (let i = 0; i < path.length; i++) h = ((h << 5) - h + path.charCodeAt(i)) | 0
  return Math.abs(h).toString(36)
}

/** A working directory as the CLI names its project folder: every character not [A-Za-z0-9-] becomes '-'. */
export const encodeCwd = (path: string): string => {
  const encoded = path.replace(/[^A-Za-z0-9-]/g, "-")
  return encoded.length <= MAX_DIR_NAME ? encoded : `${encoded.slice(0, MAX_DIR_NAME)}-${pathHash(path)}`
}

export const projectsDir = (configDir: string): string => join(configDir, "projects")

/** The project folder of a working directory; the CLI records the resolved path, so it is resolved first. */
export const projectDir = (configDir: string, cwd: string): Effect.Effect<string, never, Fs> =>
  Effect.gen(function* () {
    const real = (yield* (yield* Fs).realpath(cwd)) ?? cwd
    return join(projectsDir(configDir), encodeCwd(real))
  })

export const sessionFile = (dir: string, cliSessionId: string): string => join(dir, `${cliSessionId}.jsonl`)

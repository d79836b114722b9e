/**
 * Test helpers for the host: a throwaway world (HOME, workspace, data, a
 * folder outside every scope, a bin folder for fake commands) in one temp
 * folder, fake executables, and the repository's broker over such a world.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { type HostBroker, makeBroker } from "../broker/broker.ts"
import { loadManifest } from "../core/manifest.ts"

export interface TempWorld {
  /** Real path of the temp folder. */
  readonly root: string
  readonly home: string
  readonly workspace: string
  /** The host's data folder. */
  readonly hostData: string
  /** Outside every scope. */
  readonly outside: string
  /** A folder for fake commands; put it on the login PATH. */
  readonly bin: string
  /** Write a file (folders made), returning its path. */
  readonly write: (path: string, content: string) => string
  /** An executable shell script named `name` in `bin`. */
  readonly command: (name: string, script: string) => string
  readonly cleanup: () => void
}

export const makeTempWorld = (prefix = "cvg-host-"): TempWorld => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)))
  const [home, workspace, hostData, outside, bin] = ["home", "ws", "host-data", "outside", "bin"].map((d) => {
    const path = join(root, d)
    mkdirSync(path, { recursive: true })
    return path
  }) as [string, string, string, string, string]
  const write = (path: string, content: string) => {
    mkdirSync(dirname(path), { recursive: true })
    writeFileSync(path, content)
    return path
  }
  return {
    root,
    home,
    workspace,
    hostData,
    outside,
    bin,
    write,
    command: (name, script) => {
      const path = write(join(bin, name), script.startsWith("#!") ? script : `#!/bin/sh\n${script}`)
      chmodSync(path, 0o755)
      return path
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** true while a process with this pid exists. */
export const pidAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  // A zombie (exited, not yet reaped by init) is not running.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return true
  }
}

/** The repository's plugin's broker over `world`: its HOME, its host data, a login PATH of the system's. */
export const brokerIn = async (world: TempWorld): Promise<HostBroker> =>
  makeBroker(await loadManifest(join(import.meta.dirname, "../..")), {
    home: world.home,
    hostDataDir: world.hostData,
    env: { HOME: world.home, PATH: "/usr/bin:/bin" },
  })

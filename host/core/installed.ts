/**
 * The plugins installed in a host's data folder, and which are enabled:
 * `<data>/plugins.json`, beside the host's storage. Installing reads the
 * plugin's manifest and records it disabled; nothing of it is loaded until
 * the person enables it (startHost's `requireEnabled`). A plugin is
 * installed from its folder (kept where it is) or from the tarball
 * `npm pack` makes (unpacked into `<data>/installed/<owner>/<name>/`).
 *
 * Rules it keeps: the file is rewritten whole through a temporary file and
 * a rename; a reinstall of the same id keeps it enabled only when its grants
 * are unchanged (new grants are read before they run).
 */
import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { promisify } from "node:util"
import { loadManifest, type Manifest } from "./manifest.ts"

export interface InstalledPlugin {
  readonly id: string
  readonly version: string
  /** The folder with its plugin.manifest.json (what the host loads). */
  readonly dir: string
  /** What was installed: a folder or a tarball. */
  readonly source: string
  readonly enabled: boolean
  /** The grants as installed, to tell a reinstall that asks for more. */
  readonly grants: string
}

export const registryFile = (dataDir: string) => join(dataDir, "plugins.json")

export const readInstalled = (dataDir: string): InstalledPlugin[] => {
  try {
    const json = JSON.parse(readFileSync(registryFile(dataDir), "utf8")) as { plugins?: unknown }
    return Array.isArray(json.plugins) ? (json.plugins as InstalledPlugin[]) : []
  } catch {
    return []
  }
}

const writeInstalled = (dataDir: string, plugins: ReadonlyArray<InstalledPlugin>): void => {
  const file = registryFile(dataDir)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(`${file}.tmp`, `${JSON.stringify({ plugins }, null, 2)}\n`)
  renameSync(`${file}.tmp`, file)
}

export const isEnabled = (dataDir: string, pluginDir: string): boolean =>
  readInstalled(dataDir).some((p) => p.enabled && resolve(p.dir) === resolve(pluginDir))

/** The dependencies a packed plugin imports are the host package's own (a tarball carries none). */
const hostModules = resolve(import.meta.dirname, "..", "..", "node_modules")

/** Unpack `npm pack`'s tarball (its files under `package/`) into the data folder; the plugin's folder. */
const unpack = async (dataDir: string, tarball: string): Promise<string> => {
  const staging = join(dataDir, "installed", `.unpack-${process.pid}`)
  rmSync(staging, { recursive: true, force: true })
  mkdirSync(staging, { recursive: true })
  try {
    await promisify(execFile)("tar", ["-xzf", tarball, "-C", staging])
    const manifest = await loadManifest(join(staging, "package"))
    const target = join(dataDir, "installed", ...manifest.id.split("/"))
    rmSync(target, { recursive: true, force: true })
    mkdirSync(dirname(target), { recursive: true })
    renameSync(join(staging, "package"), target)
    if (!existsSync(join(target, "node_modules")) && existsSync(hostModules))
      symlinkSync(hostModules, join(target, "node_modules"), "dir")
    return target
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/** Install from a folder or a tarball: recorded, not enabled (unless a reinstall asks for nothing new). */
export const installPlugin = async (
  dataDir: string,
  from: string,
): Promise<{ readonly plugin: InstalledPlugin; readonly manifest: Manifest }> => {
  const source = resolve(from)
  const dir = /\.(tgz|tar\.gz)$/.test(source) ? await unpack(dataDir, source) : source
  const manifest = await loadManifest(dir)
  const grants = JSON.stringify(manifest.grants)
  const others = readInstalled(dataDir).filter((p) => p.id !== manifest.id)
  const before = readInstalled(dataDir).find((p) => p.id === manifest.id)
  const plugin: InstalledPlugin = {
    id: manifest.id,
    version: manifest.version,
    dir,
    source,
    enabled: before?.enabled === true && before.grants === grants,
    grants,
  }
  writeInstalled(dataDir, [...others, plugin])
  return { plugin, manifest }
}

/** Enable or disable an installed plugin; undefined when no plugin has that id. */
export const setEnabled = (dataDir: string, id: string, enabled: boolean): InstalledPlugin | undefined => {
  const plugins = readInstalled(dataDir)
  const found = plugins.find((p) => p.id === id)
  if (!found) return undefined
  const changed = { ...found, enabled }
  writeInstalled(
    dataDir,
    plugins.map((p) => (p.id === id ? changed : p)),
  )
  return changed
}

export class PluginNotEnabled extends Error {
  override readonly name = "PluginNotEnabled"
}

/**
 * The host's plugin verbs, for `cvg install <plugin>`, `cvg plugins …` and
 * the chat's /plugins: install (the manifest's grants shown, nothing loaded),
 * list what is installed with what it may do, enable and disable. The
 * plugin this package carries is named by its id (`convergence/claude`,
 * optionally `@version`); any other is a folder or an `npm pack` tarball.
 */
import { existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { type InstalledPlugin, installPlugin, readInstalled, setEnabled } from "../core/installed.ts"
import { loadManifest } from "../core/manifest.ts"
import type { Format } from "./context.ts"
import { pluginLines } from "./plugins.ts"

type Paint = (format: Format, text: string) => string

/** The repository (or installed package) this front end runs from: it carries a plugin of its own. */
export const packageRoot = resolve(import.meta.dirname, "..", "..")

/** The folder or tarball `target` names: this package's own plugin for its id, else a path. */
const sourceOf = async (target: string): Promise<string> => {
  const own = await loadManifest(packageRoot).catch(() => undefined)
  const id = target.replace(/@[^/]*$/, "")
  if (own && id === own.id) return packageRoot
  const path = resolve(target)
  if (existsSync(path)) return path
  throw new Error(
    `${target} is neither a plugin this package carries${own ? ` (${own.id})` : ""} nor a folder or tarball`,
  )
}

/** Install: what the plugin may do, and how to enable it (it is not loaded yet). */
export const install = async (
  dataDir: string,
  target: string,
  paint: Paint,
  program: string,
): Promise<{ readonly plugin: InstalledPlugin; readonly lines: string[] }> => {
  const { plugin, manifest } = await installPlugin(dataDir, await sourceOf(target))
  return {
    plugin,
    lines: [
      paint("green", `Installed ${plugin.id} ${plugin.version} from ${plugin.source}`),
      ...pluginLines(manifest, paint, { state: plugin.enabled ? "enabled" : "not enabled" }),
      plugin.enabled
        ? paint("dim", "  It was enabled before and asks for nothing new: it stays enabled.")
        : paint(
            "dim",
            `  Nothing of it runs until you enable it: ${program} plugins enable ${plugin.id} (in the chat: /plugins enable ${plugin.id})`,
          ),
    ],
  }
}

/** Every installed plugin, enabled or not, with what it may do. */
export const listPlugins = async (dataDir: string, paint: Paint, details = false): Promise<string[]> => {
  const installed = readInstalled(dataDir)
  if (installed.length === 0) return [paint("dim", `no plugins installed in ${dataDir}`)]
  const lines: string[] = []
  for (const plugin of installed) {
    const manifest = await loadManifest(plugin.dir).catch((error: Error) => error)
    if (manifest instanceof Error) {
      lines.push(
        `  ${paint("bold", plugin.id)} ${plugin.version} · ${paint("yellow", `unreadable: ${manifest.message}`)}`,
      )
      continue
    }
    lines.push(...pluginLines(manifest, paint, { state: plugin.enabled ? "enabled" : "disabled", details }))
  }
  return lines
}

/** Enable or disable by id: the line that says what changed. */
export const toggle = (dataDir: string, id: string | undefined, enabled: boolean, paint: Paint): string => {
  const ids = readInstalled(dataDir).map((p) => p.id)
  if (!id) return paint("yellow", `name a plugin: ${ids.join(", ") || "none is installed"}`)
  const changed = setEnabled(dataDir, id, enabled)
  if (!changed)
    return paint(
      "yellow",
      `no plugin ${id} is installed${ids.length > 0 ? ` (have: ${ids.join(", ")})` : ""}`,
    )
  return paint("green", `${id} ${enabled ? "enabled" : "disabled"}`)
}

/** The enabled plugin that provides agents, if any (this host runs one). */
export const enabledAgentPlugin = async (dataDir: string): Promise<InstalledPlugin | undefined> => {
  for (const plugin of readInstalled(dataDir).filter((p) => p.enabled)) {
    const manifest = await loadManifest(plugin.dir).catch(() => undefined)
    if (manifest?.grants["agents.provide"]) return plugin
  }
  return undefined
}

/**
 * `npm start` from a checkout: this repository's plugin installed and enabled
 * when it is not installed yet (a person who disabled it keeps it disabled).
 * The line that says so, or undefined when nothing changed.
 */
export const ensureOwnPlugin = async (dataDir: string, paint: Paint): Promise<string | undefined> => {
  if (!existsSync(join(packageRoot, "plugin.manifest.json"))) return undefined
  const own = await loadManifest(packageRoot)
  const installed = readInstalled(dataDir).find((p) => p.id === own.id)
  if (installed && resolve(installed.dir) === packageRoot) return undefined
  await installPlugin(dataDir, packageRoot)
  setEnabled(dataDir, own.id, true)
  return paint(
    "dim",
    `npm start installed and enabled ${own.id} from this repository in ${dataDir} (/plugins shows what it may do)`,
  )
}

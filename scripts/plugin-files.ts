/**
 * Which files are the plugin, for the checks that hold its structure
 * (plugin-boundary.test.ts, structure.test.ts). The plugin is every root
 * `.ts` file and every folder that plugin-layout.json does not name as
 * something else (sdk/, host/, testkit/…) or that starts with a dot
 * (.cache/, .tmp/, .git/): a new folder such as map/ or session/ is plugin
 * code the day it appears, with no list to update.
 */
import { readdirSync } from "node:fs"
import { join } from "node:path"
import layout from "./plugin-layout.json" with { type: "json" }

const notPlugin = new Set(layout.notPlugin)

/** Files that are configuration, not plugin code, though they sit at the root. */
const rootConfig = new Set(["vitest.config.ts"])

/** True for a path (relative to the repository, `/`-separated) inside the plugin. */
export const isPluginPath = (path: string): boolean => {
  const parts = path.split("/")
  const top = parts[0] ?? ""
  if (parts.length === 1) return !rootConfig.has(top)
  return !notPlugin.has(top) && !top.startsWith(".")
}

export const isTestFile = (path: string): boolean => path.endsWith(".test.ts")

/** Every `.ts` file under `root` that is plugin code, tests included, `/`-separated and sorted. */
export const pluginTsFiles = (root = "."): string[] => {
  const found: string[] = []
  const walk = (dir: string, rel: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) {
        if (rel === "" && !isPluginPath(`${path}/x.ts`)) continue
        walk(join(dir, entry.name), path)
      } else if (entry.isFile() && entry.name.endsWith(".ts") && isPluginPath(path)) found.push(path)
    }
  }
  walk(root, "")
  return found.sort()
}

/** The plugin's source files: what ships, tests left out. */
export const pluginSourceFiles = (root = "."): string[] => pluginTsFiles(root).filter((f) => !isTestFile(f))

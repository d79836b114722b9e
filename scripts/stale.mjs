// What the two front ends' bundles (scripts/build-tui.mjs, scripts/build-acp.mjs)
// share: esbuild's options for a Node bundle, and whether a bundle must be built
// again: its entry is missing, or a source its last build read (listed in its
// inputs.json, written from esbuild's metafile), its build script, this file or
// the lockfile is newer than the entry.
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

/** esbuild's options for a front end's bundle that runs on plain Node (20 and later). */
export const NODE_BUNDLE = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning",
  // The host bundles the plugin for its process at run time with esbuild, which
  // must stay a package (it finds its native binary beside itself).
  external: ["esbuild"],
  // Some dependencies still call require(); give the ES module one.
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
}

/**
 * @param {{ root: string, entryFile: string, inputsFile: string, script: string }} bundle
 *   `script` is the build script, relative to `root`.
 * @returns {boolean}
 */
export const isStale = ({ root, entryFile, inputsFile, script }) => {
  let built
  try {
    built = statSync(entryFile).mtimeMs
  } catch {
    return true
  }
  let inputs
  try {
    inputs = JSON.parse(readFileSync(inputsFile, "utf8"))
  } catch {
    return true
  }
  for (const path of [...inputs, script, "scripts/stale.mjs", "package-lock.json"]) {
    try {
      if (statSync(join(root, path)).mtimeMs > built) return true
    } catch {
      return true
    }
  }
  return false
}

/** Keep the repository's sources a build read (esbuild's metafile), for the next isStale. */
export const writeInputs = (root, inputsFile, metafile) => {
  const inputs = Object.keys(metafile.inputs)
    .map((path) => relative(root, resolve(root, path)))
    .filter((path) => !path.startsWith("node_modules"))
  writeFileSync(inputsFile, `${JSON.stringify(inputs)}\n`)
}

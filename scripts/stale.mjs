// Whether a bundle (scripts/build-tui.mjs, scripts/build-acp.mjs) must be built
// again, shared by both: its entry is missing, or a source its last build read
// (listed in its inputs.json, written from esbuild's metafile), its build
// script or the lockfile is newer than the entry.
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join, relative, resolve } from "node:path"

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
  for (const path of [...inputs, script, "package-lock.json"]) {
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

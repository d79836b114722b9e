// What the two front ends' bundles (scripts/build-tui.mjs, scripts/build-acp.mjs)
// share: esbuild's options for a Node bundle, the split build itself, and whether
// a bundle must be built again: its entry is missing, or a source its last build
// read (listed in its inputs.json, written from esbuild's metafile), its build
// script, this file or the lockfile is newer than the entry.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs"
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

/**
 * Bundle `entryPoints` into `out` with their chunks beside them (`[name]-[hash].mjs`),
 * remove the last build's chunks this one did not write (an agent still starting
 * from them has read them by then, or fails as it would have with overwritten
 * files), and keep the sources it read in `inputsFile` for the next isStale.
 * @param {{ root: string, out: string, entryPoints: Record<string, string>, inputsFile: string }} bundle
 */
export const buildSplit = async ({ root, out, entryPoints, inputsFile }) => {
  mkdirSync(out, { recursive: true })
  const { build } = await import("esbuild")
  const built = await build({
    ...NODE_BUNDLE,
    entryPoints,
    outdir: out,
    outExtension: { ".js": ".mjs" },
    splitting: true,
    chunkNames: "[name]-[hash]",
    metafile: true,
  })
  const written = new Set(Object.keys(built.metafile.outputs).map((path) => resolve(root, path)))
  for (const name of readdirSync(out))
    if (/-[A-Z0-9]{8}\.mjs$/.test(name) && !written.has(join(out, name))) rmSync(join(out, name))
  writeInputs(root, inputsFile, built.metafile)
}

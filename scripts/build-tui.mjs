#!/usr/bin/env node
// Builds the terminal front end that runs with plain `node` (no TypeScript
// tooling): the `cvg` command, and what `npm start` runs.
//
//   dist/tui/main.mjs     the entry (executable, `#!/usr/bin/env -S node …`): turns on
//                         Node's compile cache (Node 22.1+; nothing on Node 20),
//                         then imports the front end
//   dist/tui/cvg.mjs      host/tui/main.ts and the host, an ES module
//   dist/tui/*-HASH.mjs   chunks it imports once the input line is up (the host,
//                         the demo's world)
//   dist/tui/inputs.json  the sources the build read: a later start rebuilds when
//                         one is newer than the entry
//
//   node scripts/build-tui.mjs              build
//   node scripts/build-tui.mjs --if-stale   build only when missing or older than a source
//   node scripts/build-tui.mjs --start [args]   what `npm start` runs: install the locked
//                         dependencies when needed (ensure-install.mjs), build when stale,
//                         then run the front end in this process with the args
//
// The plugin is not in the bundle: the host runs it in a process of its own,
// bundled at start by host/plugin-process/ (esbuild stays a package for that).
// The bundle finds the repository two folders up, as the ACP bundle does.
import { chmodSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildSplit, isStale } from "./stale.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "dist", "tui")
const entryFile = join(out, "main.mjs")
const inputsFile = join(out, "inputs.json")

const stale = () => isStale({ root, entryFile, inputsFile, script: "scripts/build-tui.mjs" })

const build = async () => {
  await buildSplit({ root, out, entryPoints: { cvg: join(root, "host/tui/main.ts") }, inputsFile })
  writeFileSync(
    entryFile,
    `#!/usr/bin/env -S node --max-semi-space-size=2
// The terminal front end's entry (written by scripts/build-tui.mjs): Node's compile
// cache first, so the front end (cvg.mjs) loads from V8's cached code. The host runs
// on a small young generation (as npm start's): less peak memory, a start no slower.
import * as nodeModule from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
try {
  nodeModule.enableCompileCache?.(join(here, "..", "..", "node_modules", ".cache", "cvg-tui-compile"))
} catch {}
await import("./cvg.mjs")
`,
  )
  chmodSync(entryFile, 0o755)
}

const mode = process.argv[2]
if (mode === "--start") {
  await import("./ensure-install.mjs")
  if (stale()) {
    process.stderr.write("[start] building the terminal front end (scripts/build-tui.mjs)…\n")
    await build()
  }
  // The front end reads its own arguments; it was started by npm start, not as `cvg`.
  process.argv.splice(2, 1)
  process.env.CVG_LAUNCHER = "npm start"
  await import(pathToFileURL(entryFile).href)
} else if (mode === "--if-stale") {
  if (stale()) await build()
} else {
  await build()
  process.stderr.write(`[build-tui] ${entryFile} (entry), ${join(out, "cvg.mjs")}\n`)
}

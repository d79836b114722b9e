// Builds the ACP agent an editor can start with plain `node` (no TypeScript
// tooling), as two files:
//
//   dist/acp/main.mjs     the entry editors name: turns on Node's compile cache
//                         (Node 22.1+; nothing on Node 20), then imports the agent
//   dist/acp/server.mjs   host/acp/main.ts and the host, an ES module
//   dist/acp/*-HASH.mjs   the chunks server.mjs imports: the ACP side (the SDK and
//                         the agent), loaded while the plugin process starts; the
//                         demo's world; what those share with the host
//
// Why the entry: a cache only covers modules loaded after it is enabled, and
// the agent is one module. With the cache, a start reads V8's code for the
// bundle instead of parsing and compiling 1.5 MB of JavaScript: the ACP
// process's peak RSS at start is ~13 MB lower (`npm run bench -- acp`). The
// cache lives in node_modules/.cache/cvg-acp-compile (Node checks each entry
// against the file's contents and its own version; a folder it cannot write
// only means no cache).
//
// The plugin is not in the bundle: the host runs the repository's plugin in a
// process of its own, bundled at start by host/plugin-process/ (esbuild stays
// a package for that).
//
//   node scripts/build-acp.mjs      → dist/acp/main.mjs, dist/acp/server.mjs and its chunks,
//                                     and the plugin process prebuilt (dist/plugin-process/)
//   node scripts/build-acp.mjs --if-stale   the agent only, when missing or older than a source
//   node scripts/build-acp.mjs --start [args]   what `npm run acp` runs: install the locked
//                                     dependencies when needed, build the agent when missing or
//                                     older than a source (scripts/stale.mjs, as build-tui.mjs),
//                                     then run the bundle in this process with the args. Nothing on
//                                     stdout but the agent's: it is the ACP channel.
//
// In a checkout the bundle runs the repository's plugin, bundled at start; in
// a package (`npm pack`, `npm install -g`) the plugin process's prebuilt files
// below. Either way it runs the `claude` on the user's PATH (--demo: the pinned one).
import { execFileSync } from "node:child_process"
import { copyFileSync, existsSync, mkdirSync, statSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { buildSplit, isStale } from "./stale.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "dist", "acp")
const entryFile = join(out, "main.mjs")
const inputsFile = join(out, "inputs.json")

const stale = () => isStale({ root, entryFile, inputsFile, script: "scripts/build-acp.mjs" })

/** The agent: dist/acp/main.mjs, server.mjs and its chunks, and inputs.json for isStale. */
const buildAgent = async () => {
  // Split: main.ts imports the ACP side (the SDK and the agent) once the plugin process is starting,
  // so that part is a chunk of its own, evaluated while the child starts (host/acp/main.ts).
  // Chunks sit beside server.mjs: modules that find the repository from their own address
  // (import.meta.url, two folders up) must stay two folders down.
  await buildSplit({ root, out, entryPoints: { server: join(root, "host/acp/main.ts") }, inputsFile })

  const entry = `#!/usr/bin/env node
  // The ACP agent's entry (written by scripts/build-acp.mjs; \`cvg-acp\` in a package): Node's compile
  // cache first, so the agent (server.mjs) loads from V8's cached code.
  import * as nodeModule from "node:module"
  import { dirname, join } from "node:path"
  import { fileURLToPath } from "node:url"

  const here = dirname(fileURLToPath(import.meta.url))
  try {
    nodeModule.enableCompileCache?.(join(here, "..", "..", "node_modules", ".cache", "cvg-acp-compile"))
  } catch {}
  await import("./server.mjs")
  `
  writeFileSync(entryFile, entry, { mode: 0o755 })
  process.stderr.write(`[build-acp] ${entryFile} (entry), ${join(out, "server.mjs")}\n`)
}

/** The plugin process prebuilt for a package. */
const buildPluginProcess = () => {
  // The plugin process's two files, prebuilt for a package (`npm pack` runs this as prepack): an installed
  // package has no esbuild, and host/plugin-process/bundle.ts then takes these. Built by the host's own
  // bundler (the same options), then copied.
  const shipped = join(root, "dist", "plugin-process")
  const made = JSON.parse(
    execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        `import("./host/plugin-process/bundle.ts").then(async (m) => process.stdout.write(JSON.stringify(await m.pluginCode(process.cwd(), "main.ts"))))`,
      ],
      { cwd: root, encoding: "utf8" },
    ),
  )
  mkdirSync(shipped, { recursive: true })
  copyFileSync(made.entry, join(shipped, "child.mjs"))
  copyFileSync(made.bundle, join(shipped, "plugin.js"))
  process.stderr.write(`[build-acp] ${shipped} (the plugin process, prebuilt)\n`)
}

const mode = process.argv[2]
if (mode === "--start") {
  // ensure-install's `npm ci` would print on stdout, the ACP channel: it runs with stdout on stderr.
  const marker = join(root, "node_modules/.package-lock.json")
  if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(join(root, "package-lock.json")).mtimeMs)
    execFileSync(process.execPath, [join(root, "scripts/ensure-install.mjs")], {
      cwd: root,
      stdio: ["ignore", 2, 2],
    })
  if (stale()) {
    process.stderr.write("[acp] building the agent (scripts/build-acp.mjs)…\n")
    await buildAgent()
  }
  // The agent reads its own arguments, and runs its entry again for a terminal sign-in.
  process.argv.splice(1, 2, entryFile)
  await import(pathToFileURL(entryFile).href)
} else if (mode === "--if-stale") {
  if (stale()) await buildAgent()
} else {
  await buildAgent()
  buildPluginProcess()
}

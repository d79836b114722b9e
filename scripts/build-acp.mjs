// Builds the ACP agent an editor can start with plain `node` (no TypeScript
// tooling): dist/acp/main.mjs (host/acp/main.ts and the host, one ES module).
// The plugin is not in it: the host runs the repository's plugin in a process
// of its own, bundled at start by host/plugin-process/ (esbuild stays a
// package for that).
//
//   node scripts/build-acp.mjs      → dist/acp/main.mjs
//
// The bundle stays in this checkout: it finds the pinned `claude` in
// node_modules/.bin (two folders up), as `npm run acp` does.
import { mkdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "dist", "acp")

mkdirSync(out, { recursive: true })

const common = {
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

await build({ ...common, entryPoints: [join(root, "host/acp/main.ts")], outfile: join(out, "main.mjs") })
process.stderr.write(`[build-acp] ${join(out, "main.mjs")}\n`)

// Builds the ACP agent an editor can start with plain `node` (no TypeScript
// tooling): dist/acp/main.mjs (host/acp/main.ts and the host, one ES module)
// and dist/acp/plugin/ (the plugin's main.ts bundled, with its manifest and
// models.json, loaded by the host exactly as from the repository).
//
//   node scripts/build-acp.mjs      → dist/acp/main.mjs
//
// The bundle stays in this checkout: it finds the pinned `claude` in
// node_modules/.bin (two folders up), as `npm run acp` does.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const out = join(root, "dist", "acp")
const plugin = join(out, "plugin")
mkdirSync(plugin, { recursive: true })

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  logLevel: "warning",
  // Some dependencies still call require(); give the ES module one.
  banner: {
    js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
  },
}

await build({ ...common, entryPoints: [join(root, "host/acp/main.ts")], outfile: join(out, "main.mjs") })
await build({ ...common, entryPoints: [join(root, "main.ts")], outfile: join(plugin, "main.mjs") })

const manifest = JSON.parse(readFileSync(join(root, "plugin.manifest.json"), "utf8"))
writeFileSync(
  join(plugin, "plugin.manifest.json"),
  `${JSON.stringify({ ...manifest, main: "main.mjs" }, null, 2)}\n`,
)
copyFileSync(join(root, "models.json"), join(plugin, "models.json"))
process.stderr.write(`[build-acp] ${join(out, "main.mjs")}\n`)

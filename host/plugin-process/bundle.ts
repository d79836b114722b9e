/**
 * The code a plugin process runs, as two files it may read: the process's
 * entry (child.ts, lockdown.ts) and the plugin's bundle (its `main`, its
 * dependencies and sdk/serve.ts, as one script that sets `__cvgPlugin`).
 *
 * Why a bundle: under the permission model the child may read only what it
 * is granted. One file per plugin keeps that grant to one path (not the
 * plugin's folder and all of node_modules, where any file could be read),
 * loads with plain Node (no TypeScript loader, which would need hooks and a
 * worker), and lets the child run it as a script whose `import()` reaches no
 * loader.
 *
 * Rules it keeps:
 * - Rebuilt when stale: each bundle keeps the size and mtime of every input
 *   esbuild read and its options; any change (or a new esbuild) rebuilds it.
 * - Written to a temporary file and renamed: hosts starting at once (test
 *   files in parallel) never read a half-written bundle.
 * - The plugin's bundle has a V8 code cache beside it (code-cache.ts, Node
 *   24 and later), made when the bundle is (re)built or the cache is
 *   missing: a start then skips parsing and compiling the bundle.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, resolve } from "node:path"
import type { BuildOptions } from "esbuild"
import { CODE_FLAGS, codeCachePath, heapFlags } from "./child-flags.ts"
import { codeCacheSupported } from "./code-cache.ts"

// Two folders up from here, and from the ACP front end's bundle (dist/acp/main.mjs) alike.
const repoRoot = resolve(import.meta.dirname, "../..")

/**
 * An installed package (`npm pack`) has no esbuild: it ships this plugin's
 * two files prebuilt (scripts/build-acp.mjs, dist/plugin-process/), used
 * only there, so a checkout always runs its current sources.
 */
const prebuiltFor = (mainPath: string): PluginCode | undefined => {
  const dir = join(repoRoot, "dist", "plugin-process")
  if (esbuildVersion !== "none" || mainPath !== join(repoRoot, "main.ts")) return undefined
  const code = { entry: join(dir, "child.mjs"), bundle: join(dir, "plugin.js") }
  return existsSync(code.entry) && existsSync(code.bundle) ? code : undefined
}

/** A package.json's text, or one saying "none" when it cannot be found (an installed package has no esbuild). */
function readFileSyncOr(path: () => string): string {
  try {
    return readFileSync(path(), "utf8")
  } catch {
    return '{"version":"none"}'
  }
}
// Where tools keep their caches (ignored by git and Biome), one per checkout.
const cacheRoot = join(repoRoot, "node_modules", ".cache", "cvg-plugin-process")

export interface PluginCode {
  /** The process's entry (an ES module). */
  readonly entry: string
  /** The plugin's bundle (a script). */
  readonly bundle: string
}

interface Stamp {
  readonly esbuild: string
  /** The build's options, as JSON: a change of options is a change of output. */
  readonly options: string
  readonly inputs: Readonly<Record<string, readonly [number, number]>>
}

/**
 * esbuild's version from its package.json: a fresh bundle is the usual case,
 * and loading esbuild only to read its version would put that load on every
 * host's way to its plugin process's spawn; `build` is imported when a
 * bundle is stale.
 */
const esbuildVersion = (
  JSON.parse(readFileSyncOr(() => createRequire(import.meta.url).resolve("esbuild/package.json"))) as {
    version: string
  }
).version

const stampOf = (inputs: Iterable<string>): Stamp["inputs"] => {
  const out: Record<string, readonly [number, number]> = {}
  for (const path of inputs) {
    const s = statSync(path)
    out[path] = [s.size, s.mtimeMs]
  }
  return out
}

const fresh = (file: string, options: string): boolean => {
  try {
    const stamp = JSON.parse(readFileSync(`${file}.stamp.json`, "utf8")) as Stamp
    if (stamp.esbuild !== esbuildVersion || stamp.options !== options) return false
    statSync(file)
    for (const [path, [size, mtimeMs]] of Object.entries(stamp.inputs)) {
      const s = statSync(path)
      if (s.size !== size || s.mtimeMs !== mtimeMs) return false
    }
    return true
  } catch {
    return false
  }
}

const writeAtomic = (file: string, content: string) => {
  const temp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`
  writeFileSync(temp, content)
  renameSync(temp, file)
}

type Options = BuildOptions

/** The generated entry of a plugin bundle (not a file: its text comes from the path of `main`, in the key). */
const STDIN_NAME = "plugin-process-entry.js"

/** Build `options` into `file` unless the file is fresh; true when it was built. */
const bundleInto = async (file: string, options: Options): Promise<boolean> => {
  const optionsJson = JSON.stringify(options)
  if (fresh(file, optionsJson)) return false
  mkdirSync(dirname(file), { recursive: true })
  const { build } = await import("esbuild")
  const result = await build({ ...options, write: false, metafile: true, bundle: true, logLevel: "silent" })
  const output = result.outputFiles?.[0]
  if (!output) throw new Error(`esbuild wrote nothing for ${file}`)
  const inputs = Object.keys(result.metafile?.inputs ?? {})
    .filter((p) => !p.startsWith("<") && !p.endsWith(STDIN_NAME))
    .map((p) => resolve(options.absWorkingDir ?? process.cwd(), p))
  writeAtomic(file, output.text)
  writeAtomic(
    `${file}.stamp.json`,
    JSON.stringify({
      esbuild: esbuildVersion,
      options: optionsJson,
      inputs: stampOf(inputs),
    } satisfies Stamp),
  )
  return true
}

// Run by `node CODE_FLAGS -e`: compiles the bundle as child.ts does (a script, its path as its
// filename) and writes the file code-cache.ts reads: the text's SHA-256, then V8's data.
const MAKER = `
const { createHash } = require("node:crypto")
const { readFileSync, renameSync, writeFileSync } = require("node:fs")
const { Script } = require("node:vm")
const [bundle, out] = process.argv.slice(1)
const code = readFileSync(bundle, "utf8")
const data = new Script(code, { filename: bundle, importModuleDynamically: () => { throw new Error("no") } }).createCachedData()
const temp = out + "." + process.pid + ".tmp"
writeFileSync(temp, Buffer.concat([createHash("sha256").update(code).digest(), data]))
renameSync(temp, out)
`

/** How long making the cache may take (a Node start and one compile) before it is given up. */
const MAKE_TIMEOUT_MS = 20_000

/** No cache, or one older than the bundle (made for another front end's flags before a rebuild). */
const cacheStale = (bundle: string, cache: string): boolean => {
  try {
    return statSync(cache).mtimeMs < statSync(bundle).mtimeMs
  } catch {
    return true
  }
}

/** Make the code cache of `bundle` under `flags` (heapFlags; resolves either way: a cache that could not be made is no cache). */
const makeCodeCache = (bundle: string, flags: ReadonlyArray<string>): Promise<void> =>
  new Promise((done) => {
    // No environment, as the plugin process has none: NODE_OPTIONS could carry flags V8 checks.
    const child = spawn(
      process.execPath,
      [...flags, ...CODE_FLAGS, "-e", MAKER, bundle, codeCachePath(bundle, flags)],
      {
        stdio: "ignore",
        env: {},
      },
    )
    const timer = setTimeout(() => child.kill("SIGKILL"), MAKE_TIMEOUT_MS)
    child.once("error", () => {
      clearTimeout(timer)
      done()
    })
    child.once("exit", () => {
      clearTimeout(timer)
      done()
    })
  })

/**
 * Both files for the plugin in `pluginDir` whose entry is `main`, built or
 * reused, and the code cache for the child's heap flags (`v8Flags` as
 * childArgs takes them).
 */
export const pluginCode = async (
  pluginDir: string,
  main: string,
  v8Flags: ReadonlyArray<string> = [],
): Promise<PluginCode> => {
  const mainPath = resolve(pluginDir, main)
  const shipped = prebuiltFor(mainPath)
  if (shipped) return shipped
  const key = createHash("sha256").update(mainPath).digest("hex").slice(0, 16)
  const entry = join(cacheRoot, "child.mjs")
  const bundle = join(cacheRoot, key, "plugin.js")
  await bundleInto(entry, {
    entryPoints: [join(repoRoot, "host/plugin-process/child.ts")],
    absWorkingDir: repoRoot,
    outfile: entry,
    format: "esm",
    platform: "node",
    target: "node20",
  })
  const built = await bundleInto(bundle, {
    stdin: {
      contents: [
        `import * as main from ${JSON.stringify(mainPath)}`,
        `import { servePlugin } from ${JSON.stringify(join(repoRoot, "sdk/serve.ts"))}`,
        "export const start = (port) => servePlugin(port, main)",
      ].join("\n"),
      resolveDir: pluginDir,
      sourcefile: STDIN_NAME,
      loader: "js",
    },
    absWorkingDir: repoRoot,
    outfile: bundle,
    format: "iife",
    globalName: "__cvgPlugin",
    // Not Node: packages that offer a build without Node modules (yaml) give that one.
    platform: "neutral",
    mainFields: ["module", "main"],
    target: "node20",
  })
  const flags = heapFlags(v8Flags)
  if (codeCacheSupported() && (built || cacheStale(bundle, codeCachePath(bundle, flags))))
    await makeCodeCache(bundle, flags)
  return { entry, bundle }
}

/**
 * The Claude Code plugin's script (its entry and the module it loads) and
 * its notices are committed inside the
 * plugin folder (a marketplace install copies the folder and builds nothing),
 * so they must be exactly what `npm run build:trace-plugin` builds from the
 * source today: a change to trace/ or host/trace/ without a rebuild fails here.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { BUNDLE, BUNDLE_MAIN, buildTracePlugin, NOTICES, root } from "../../scripts/build-trace-plugin.ts"

describe("the plugin's committed script", () => {
  it("is what the build makes from the source (run `npm run build:trace-plugin` after a change)", async () => {
    const built = await buildTracePlugin()
    expect(Object.keys(built).sort()).toEqual([BUNDLE, BUNDLE_MAIN, NOTICES].sort())
    for (const [path, text] of Object.entries(built)) {
      const committed = readFileSync(join(root, path), "utf8")
      // Compared as a flag first: a 600 kB diff of minified code helps nobody.
      expect(committed === text, `${path} is stale: run npm run build:trace-plugin`).toBe(true)
    }
  }, 120_000)

  it("names every package it bundles, with its license, in the notices", async () => {
    const notices = readFileSync(join(root, NOTICES), "utf8")
    for (const name of ["effect", "zod", "diff", "shell-quote", "@noble/hashes"])
      expect(notices).toMatch(new RegExp(`^## ${name.replace("/", "\\/")} \\d`, "m"))
  })
})

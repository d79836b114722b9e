/** The plugin process's command line: heap-size flags pass, nothing that widens the permission model does. */
import { describe, expect, it } from "vitest"
import { CODE_FLAGS, childArgs, heapFlags, PROCESS_FLAGS, permissionFlag } from "./child-flags.ts"

describe("childArgs", () => {
  it("takes heap-size flags and refuses every other flag a front end passes", () => {
    const args = childArgs("/e.mjs", "/b.js", [
      "--max-semi-space-size=1",
      "--max-old-space-size=96",
      "--allow-fs-read=/",
      "--allow-child-process",
      "--max-semi-space-size=1 --allow-worker",
    ])
    expect(args.slice(0, 3)).toEqual(["--max-semi-space-size=1", "--max-old-space-size=96", permissionFlag()])
    // The bundle's code cache (code-cache.ts) is the one more file it may read.
    expect(args.filter((a) => a.startsWith("--allow-"))).toEqual([
      "--allow-fs-read=/e.mjs",
      "--allow-fs-read=/b.js",
      "--allow-fs-read=/b.js.max-semi-space-size=1,max-old-space-size=96.v8cache",
    ])
    // The entry, the bundle, and the cache for these heap flags (V8 counts some of them in a cache's flags).
    expect(args.slice(-3)).toEqual([
      "/e.mjs",
      "/b.js",
      "/b.js.max-semi-space-size=1,max-old-space-size=96.v8cache",
    ])
  })

  it("starts with a 64 MB first heap limit unless the front end sizes the heap itself", () => {
    expect(childArgs("/e.mjs", "/b.js").slice(0, 2)).toEqual(["--initial-heap-size=64", permissionFlag()])
    expect(childArgs("/e.mjs", "/b.js", ["--allow-worker"]).slice(0, 2)).toEqual([
      "--initial-heap-size=64",
      permissionFlag(),
    ])
    // The ACP front end's young generation of 1 MB is its memory choice: no default beside it.
    expect(childArgs("/e.mjs", "/b.js", ["--max-semi-space-size=1"]).slice(0, 2)).toEqual([
      "--max-semi-space-size=1",
      permissionFlag(),
    ])
    expect(childArgs("/e.mjs", "/b.js", ["--initial-heap-size=32"]).slice(0, 2)).toEqual([
      "--initial-heap-size=32",
      permissionFlag(),
    ])
  })

  it("drops every other V8 flag, tier-up ones too, and names the code cache by the heap's alone", () => {
    const chosen = [
      "--max-semi-space-size=1",
      "--always-sparkplug",
      "--no-lazy",
      "--allow-natives-syntax",
      "--expose-gc",
      "--no-disallow-code-generation-from-strings",
      "--max-semi-space-size=1 --allow-addons",
    ]
    expect(heapFlags(chosen)).toEqual(["--max-semi-space-size=1"])
    const cache = "/b.js.max-semi-space-size=1.v8cache"
    expect(childArgs("/e.mjs", "/b.js", chosen)).toEqual([
      "--max-semi-space-size=1",
      permissionFlag(),
      "--allow-fs-read=/e.mjs",
      "--allow-fs-read=/b.js",
      `--allow-fs-read=${cache}`,
      ...CODE_FLAGS,
      ...PROCESS_FLAGS,
      "--no-warnings",
      "/e.mjs",
      "/b.js",
      cache,
    ])
  })
})

/** The plugin process's command line: heap-size flags pass, nothing that widens the permission model does. */
import { describe, expect, it } from "vitest"
import { childArgs, permissionFlag } from "./child-flags.ts"

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
      "--allow-fs-read=/b.js.v8cache",
    ])
    expect(args.slice(-2)).toEqual(["/e.mjs", "/b.js"])
  })
})

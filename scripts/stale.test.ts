/**
 * scripts/stale.mjs, the staleness check both bundles share: a bundle is
 * built again when its entry or inputs list is missing, or when a source it
 * read, its build script, the shared build module or the lockfile is newer
 * than its entry. And
 * `npm run acp` starts the bundle through it (no TypeScript loader).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
// @ts-expect-error: a plain ES module script, no types
import { isStale, writeInputs } from "./stale.mjs"

const roots: string[] = []
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true })
})

const tree = () => {
  const root = mkdtempSync(join(tmpdir(), "cvg-stale-"))
  roots.push(root)
  mkdirSync(join(root, "src"))
  mkdirSync(join(root, "dist"))
  mkdirSync(join(root, "scripts"))
  for (const path of ["src/a.ts", "scripts/build.mjs", "scripts/stale.mjs", "package-lock.json"])
    writeFileSync(join(root, path), "")
  const bundle = {
    root,
    entryFile: join(root, "dist/main.mjs"),
    inputsFile: join(root, "dist/inputs.json"),
    script: "scripts/build.mjs",
  }
  const age = (path: string, seconds: number) => utimesSync(join(root, path), seconds, seconds)
  return { root, bundle, age }
}

describe("isStale", () => {
  it("is stale with no entry or no inputs list, fresh after a build, stale again when a source changes", () => {
    const { root, bundle, age } = tree()
    expect(isStale(bundle)).toBe(true)
    writeFileSync(bundle.entryFile, "")
    expect(isStale(bundle)).toBe(true)
    writeInputs(root, bundle.inputsFile, { inputs: { "src/a.ts": {}, "node_modules/x/index.js": {} } })
    expect(JSON.parse(readFileSync(bundle.inputsFile, "utf8"))).toEqual(["src/a.ts"])
    const sources = ["src/a.ts", "scripts/build.mjs", "scripts/stale.mjs", "package-lock.json"]
    for (const path of sources) age(path, 1_000)
    age("dist/main.mjs", 2_000)
    expect(isStale(bundle)).toBe(false)
    for (const path of sources) {
      age(path, 3_000)
      expect(isStale(bundle), path).toBe(true)
      age(path, 1_000)
    }
    // A source the last build read that is gone: built again.
    rmSync(join(root, "src/a.ts"))
    expect(isStale(bundle)).toBe(true)
  })
})

describe("npm run acp", () => {
  it("runs the bundle through build-acp.mjs --start, as npm start does the terminal's", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }
    expect(pkg.scripts.acp).toBe("node scripts/build-acp.mjs --start")
    const script = readFileSync("scripts/build-acp.mjs", "utf8")
    expect(script).toMatch(/import \{[^}]*\bisStale\b[^}]*\} from "\.\/stale\.mjs"/)
    expect(readFileSync("scripts/build-tui.mjs", "utf8")).toContain('from "./stale.mjs"')
  })
})

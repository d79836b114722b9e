/**
 * The plugin runs sandboxed: its files, at the root and in every plugin
 * folder (map/, session/, any new one; scripts/plugin-files.ts says which),
 * reach the world only through the broker. This fails if any of them imports
 * a Node module, host/ or testkit/, and if the type check or the test run
 * would miss a plugin file in a folder.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import picomatch from "picomatch"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"
import { isPluginPath, pluginSourceFiles, pluginTsFiles } from "./scripts/plugin-files.ts"
import vitestConfig from "./vitest.config.ts"

const pluginFiles = pluginSourceFiles()
const importsOf = (source: string) =>
  [
    ...source.matchAll(/(?:import|export)\s[^"']*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1] ?? m[2] ?? "")
const forbidden = (spec: string) =>
  spec.startsWith("node:") ||
  /^(fs|path|os|child_process|crypto|http|https|net|url|util|stream|process|worker_threads)(\/|$)/.test(
    spec,
  ) ||
  /(^|\/)(host|testkit|bench)\//.test(spec) ||
  spec.startsWith("@effect/platform-node") ||
  spec.startsWith("@anthropic-ai/")

/** The forbidden imports of each plugin source file under `root`, files with none left out. */
const violations = (root: string): Record<string, string[]> => {
  const found: Record<string, string[]> = {}
  for (const file of pluginSourceFiles(root)) {
    const bad = importsOf(readFileSync(join(root, file), "utf8")).filter(forbidden)
    if (bad.length > 0) found[file] = bad
  }
  return found
}

/** The files `tsc -p tsconfig.json` checks when the repository's tsconfig sits in `root`. */
const typeChecked = (root: string): string[] => {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config
  const parsed = ts.parseJsonConfigFileContent(config, ts.sys, root)
  return parsed.fileNames.map((f) => f.slice(root.length + 1)).sort()
}

/** The files vitest runs as tests, by its projects' own include and exclude patterns. */
const testsRun = (files: ReadonlyArray<string>): string[] => {
  const projects = (vitestConfig.test?.projects ?? []).map((project) => {
    const test = typeof project === "object" && "test" in project ? project.test : undefined
    return {
      include: picomatch(test?.include ?? [], { dot: true }),
      exclude: picomatch(test?.exclude ?? [], { dot: true }),
    }
  })
  return files.filter((f) => projects.some((p) => p.include(f) && !p.exclude(f)))
}

/** A scratch copy of the layout with a plugin file in a new folder. */
const fixture = mkdtempSync(join(tmpdir(), "plugin-boundary-"))
afterAll(() => rmSync(fixture, { recursive: true, force: true }))
const write = (path: string, text: string) => {
  mkdirSync(join(fixture, path, ".."), { recursive: true })
  writeFileSync(join(fixture, path), text)
}
write("tsconfig.json", readFileSync("tsconfig.json", "utf8"))
write("main.ts", 'import { x } from "./future/deep/part.ts"\nexport const y = x\n')
write("future/deep/part.ts", 'import { readFile } from "node:fs"\nexport const x = readFile\n')
write("future/deep/part.test.ts", 'import { x } from "./part.ts"\n')
write("host/node-side.ts", 'import { readFile } from "node:fs"\nexport const z = readFile\n')
write("sdk/api.ts", "export const api = 1\n")
write(".cache/tool/x.ts", 'import "node:fs"\n')

describe("plugin boundary", () => {
  it("has plugin root files to check", () => {
    expect(pluginFiles).toContain("main.ts")
  })
  it.each(pluginFiles)("%s imports nothing from node:, host/ or testkit/", (file) => {
    const bad = importsOf(readFileSync(file, "utf8")).filter(forbidden)
    expect(bad).toEqual([])
  })
  it("detects a forbidden import (self-check)", () => {
    expect(
      importsOf('import { readFile } from "node:fs"\nimport x from "./host/broker/broker.ts"').filter(
        forbidden,
      ),
    ).toHaveLength(2)
  })
  it("sdk files the plugin imports stay free of Node too", () => {
    const sdk = readdirSync("sdk").filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    for (const file of sdk)
      expect(importsOf(readFileSync(`sdk/${file}`, "utf8")).filter(forbidden), file).toEqual([])
  })
})

describe("plugin folders", () => {
  it("a folder is plugin code unless it is a known other part or hidden", () => {
    expect(isPluginPath("agent.ts")).toBe(true)
    expect(isPluginPath("map/stream.ts")).toBe(true)
    expect(isPluginPath("session/approvals/open.ts")).toBe(true)
    for (const other of ["sdk/x.ts", "host/x.ts", "testkit/x.ts", "bench/x.ts", "e2e/x.ts", "scripts/x.ts"])
      expect(isPluginPath(other), other).toBe(false)
    expect(isPluginPath(".cache/node24/x.ts")).toBe(false)
    expect(isPluginPath("vitest.config.ts")).toBe(false)
  })
  it("a nested plugin file importing node: is found and refused", () => {
    expect(pluginTsFiles(fixture)).toEqual(["future/deep/part.test.ts", "future/deep/part.ts", "main.ts"])
    expect(violations(fixture)).toEqual({ "future/deep/part.ts": ["node:fs"] })
  })
  it("the type check covers a plugin file in a new folder", () => {
    expect(typeChecked(fixture)).toEqual(expect.arrayContaining(["future/deep/part.ts", "main.ts"]))
    expect(typeChecked(fixture)).not.toContain(".cache/tool/x.ts")
  })
  it("the type check covers every plugin file here", () => {
    expect(typeChecked(process.cwd())).toEqual(expect.arrayContaining(pluginTsFiles()))
  })
  it("the test run covers a test in a new plugin folder, and every plugin test here", () => {
    expect(testsRun(["future/deep/part.test.ts", "future/deep/part.ts", ".cache/x/y.test.ts"])).toEqual([
      "future/deep/part.test.ts",
    ])
    const tests = pluginTsFiles().filter((f) => f.endsWith(".test.ts"))
    expect(testsRun(tests)).toEqual(tests)
  })
})

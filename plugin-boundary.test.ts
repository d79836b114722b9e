/**
 * The plugin runs sandboxed: its root files reach the world only through the
 * broker. This fails if any of them imports a Node module, host/ or testkit/.
 */
import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

const isSource = (f: string) => f.endsWith(".ts") && !f.endsWith(".test.ts")
// The root files and the plugin's own folders.
const pluginFiles = [
  ...readdirSync(".").filter((f) => isSource(f) && f !== "vitest.config.ts"),
  ...readdirSync("trace")
    .filter(isSource)
    .map((f) => `trace/${f}`),
]
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
      importsOf('import { readFile } from "node:fs"\nimport x from "./host/broker.ts"').filter(forbidden),
    ).toHaveLength(2)
  })
  it("sdk files the plugin imports stay free of Node too", () => {
    const sdk = readdirSync("sdk").filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts"))
    for (const file of sdk)
      expect(importsOf(readFileSync(`sdk/${file}`, "utf8")).filter(forbidden), file).toEqual([])
  })
})

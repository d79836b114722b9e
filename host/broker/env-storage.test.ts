import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeBroker, storageFile } from "./broker.ts"
import { envNameMatcher } from "./env-broker.ts"
import { loadManifest, type Manifest } from "../core/manifest.ts"
import { cacheFileOf, openJsonStorage } from "./storage.ts"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"

const repoRoot = join(import.meta.dirname, "../..")
const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

let world: TempWorld
let manifest: Manifest
beforeEach(async () => {
  world = makeTempWorld()
  manifest = await loadManifest(repoRoot)
})
afterEach(() => world.cleanup())

describe("env grant", () => {
  it("matches exact names and the CLAUDE_ prefix wildcard", () => {
    const granted = envNameMatcher(["HOME", "CLAUDE_CONFIG_DIR", "CLAUDE_*"])
    expect(granted("HOME")).toBe(true)
    expect(granted("CLAUDE_EXTRA_ARGS")).toBe(true)
    expect(granted("CLAUDE_CONFIG_DIR")).toBe(true)
    expect(granted("CLAUDE_")).toBe(false)
    expect(granted("CLAUDE")).toBe(false)
    expect(granted("ANTHROPIC_API_KEY")).toBe(false)
    expect(granted("PATH")).toBe(false)
    expect(granted("home")).toBe(false)
  })

  it("answers granted names only, read fresh at every call", async () => {
    const env: Record<string, string | undefined> = {
      HOME: world.home,
      PATH: "/usr/bin",
      ANTHROPIC_API_KEY: "sk-secret",
      CLAUDE_EXTRA_ARGS: "--debug",
    }
    const broker = await makeBroker(manifest, {
      home: world.home,
      hostDataDir: world.hostData,
      env: () => env,
    })
    try {
      expect(await run(broker.api.env.get("HOME"))).toBe(world.home)
      expect(await run(broker.api.env.get("CLAUDE_EXTRA_ARGS"))).toBe("--debug")
      expect(await run(broker.api.env.get("ANTHROPIC_API_KEY"))).toBeUndefined()
      expect(await run(broker.api.env.get("PATH"))).toBeUndefined()
      expect(broker.logger.refusals().map((e) => e.message)).toEqual([
        "refused env: ANTHROPIC_API_KEY (not in the manifest's env grant)",
        "refused env: PATH (not in the manifest's env grant)",
      ])
      expect(await run(broker.api.env.all)).toEqual({ HOME: world.home, CLAUDE_EXTRA_ARGS: "--debug" })
      // A change in the login environment applies without a restart.
      env.CLAUDE_EXTRA_ARGS = "--verbose"
      env.CLAUDE_CONFIG_DIR = "/elsewhere"
      expect(await run(broker.api.env.get("CLAUDE_EXTRA_ARGS"))).toBe("--verbose")
      expect(await run(broker.api.env.all)).toEqual({
        HOME: world.home,
        CLAUDE_EXTRA_ARGS: "--verbose",
        CLAUDE_CONFIG_DIR: "/elsewhere",
      })
    } finally {
      await broker.close()
    }
  })
})

describe("storage", () => {
  it("persists to <hostData>/storage/<plugin id>.json and survives a host restart", async () => {
    const first = await makeBroker(manifest, { home: world.home, hostDataDir: world.hostData, env: {} })
    await run(first.api.storage.set("instances", [{ id: "personal", configDir: "~/.claude_personal" }]))
    await run(first.api.storage.set("session:a", { alias: "b" }))
    await run(first.api.storage.set("gone", 1))
    await run(first.api.storage.delete("gone"))
    await first.close()

    const file = storageFile(world.hostData, "convergence/claude")
    expect(file).toBe(join(world.hostData, "storage/convergence/claude.json"))
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      instances: [{ id: "personal", configDir: "~/.claude_personal" }],
      "session:a": { alias: "b" },
    })

    const second = await makeBroker(manifest, { home: world.home, hostDataDir: world.hostData, env: {} })
    try {
      expect([...(await run(second.api.storage.keys))].sort()).toEqual(["instances", "session:a"])
      expect(await run(second.api.storage.get("session:a"))).toEqual({ alias: "b" })
      expect(await run(second.api.storage.get("gone"))).toBeUndefined()
    } finally {
      await second.close()
    }
  })

  it("keeps the plugin's caches (keys under cache:) in a file of their own, out of the one a person edits", async () => {
    const broker = await makeBroker(manifest, { home: world.home, hostDataDir: world.hostData, env: {} })
    await run(broker.api.storage.set("instances", [{ id: "work" }]))
    await run(broker.api.storage.set("cache:history:list:/x", "{}"))
    await broker.close()
    const file = storageFile(world.hostData, "convergence/claude")
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ instances: [{ id: "work" }] })
    expect(JSON.parse(readFileSync(cacheFileOf(file), "utf8"))).toEqual({ "cache:history:list:/x": "{}" })
    const again = await makeBroker(manifest, { home: world.home, hostDataDir: world.hostData, env: {} })
    try {
      expect([...(await run(again.api.storage.keys))].sort()).toEqual(["cache:history:list:/x", "instances"])
      expect(await run(again.api.storage.get("cache:history:list:/x"))).toBe("{}")
    } finally {
      await again.close()
    }
  })

  it("a string is kept as it is and read back the same after a restart, whatever code units it holds", async () => {
    // Strings skip the JSON round trip (a list's cache shards are large ones): JSON keeps every code unit.
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: "binary", maxLength: 200 }), async (text) => {
        const file = join(world.hostData, "strings.json")
        const first = await openJsonStorage(file)
        await run(first.set("k", text))
        expect(await run(first.get("k"))).toBe(text)
        await first.flush()
        const again = await openJsonStorage(file)
        expect(await run(again.get("k"))).toBe(text)
      }),
      { numRuns: 60 },
    )
  })

  it("values are copies: changing what was stored or read does not change the store", async () => {
    const storage = await openJsonStorage(join(world.hostData, "s.json"))
    const value = { list: [1] }
    await run(storage.set("k", value))
    value.list.push(2)
    const read = (await run(storage.get("k"))) as { list: number[] }
    read.list.push(3)
    expect(await run(storage.get("k"))).toEqual({ list: [1] })
  })

  it("writes one at a time by temp file and rename: the file is always whole, no temp file is left", async () => {
    const file = join(world.hostData, "storage/p.json")
    const storage = await openJsonStorage(file)
    await run(storage.set("seed", 0))
    let reads = 0
    let torn = 0
    let reading = true
    const reader = (async () => {
      while (reading) {
        try {
          JSON.parse(readFileSync(file, "utf8"))
        } catch {
          torn++
        }
        reads++
        await new Promise((r) => setImmediate(r))
      }
    })()
    const big = "x".repeat(20_000)
    await run(
      Effect.forEach(
        Array.from({ length: 60 }, (_, i) => i),
        (i) => storage.set(`key${i}`, { i, big }),
        {
          concurrency: "unbounded",
          discard: true,
        },
      ),
    )
    reading = false
    await reader
    expect(reads).toBeGreaterThan(0)
    expect(torn).toBe(0)
    const onDisk = JSON.parse(readFileSync(file, "utf8"))
    expect(Object.keys(onDisk)).toHaveLength(61)
    expect(readdirSync(join(world.hostData, "storage"))).toEqual(["p.json"])
  })

  it("a file that is not a JSON object is moved aside, not overwritten", async () => {
    const file = join(world.hostData, "bad.json")
    writeFileSync(file, "{ torn")
    const errors: string[] = []
    const storage = await openJsonStorage(file, (message) => errors.push(message))
    expect(await run(storage.keys)).toEqual([])
    expect(errors).toEqual(["plugin storage was not a JSON object; moved aside"])
    const aside = readdirSync(world.hostData).find((f) => f.startsWith("bad.json.corrupt-"))
    expect(aside && readFileSync(join(world.hostData, aside), "utf8")).toBe("{ torn")
    await run(storage.set("a", 1))
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({ a: 1 })
  })
})

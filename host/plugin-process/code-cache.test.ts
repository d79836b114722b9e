/**
 * The plugin bundle's V8 code cache: made by the host beside the bundle,
 * used by the plugin process only for the very text it was made from, and
 * anything wrong with it (another bundle's, data V8 refuses) only means
 * compiling as before; on Node 20 never used (its import() callback would
 * be lost: code-cache.ts).
 */
import { createHash } from "node:crypto"
import { readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Host, startHost } from "../core/host.ts"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"
import { pluginCode } from "./bundle.ts"
import { heapFlags, codeCachePath } from "./child-flags.ts"
import { cachedDataFor, codeCacheSupported } from "./code-cache.ts"

const probeDir = join(import.meta.dirname, "../testing/fixtures/probe-plugin")
const sha = (text: string) => createHash("sha256").update(text).digest()

describe("cachedDataFor", () => {
  const data = Buffer.from("v8 data")
  it("gives the data only for the text whose hash heads the file", () => {
    const file = Buffer.concat([sha("the bundle"), data])
    expect(cachedDataFor("the bundle", file)).toEqual(data)
    // Same length, other content: V8 alone would take it (it checks the length only).
    expect(cachedDataFor("the bundlf", file)).toBeUndefined()
    expect(cachedDataFor("the bundle", undefined)).toBeUndefined()
    expect(cachedDataFor("the bundle", sha("the bundle"))).toBeUndefined()
  })
})

describe("a plugin process's start", () => {
  let world: TempWorld
  let host: Host | undefined
  beforeEach(() => {
    world = makeTempWorld("cvg-code-cache-")
  })
  afterEach(async () => {
    await host?.close()
    host = undefined
    world.cleanup()
  })

  const compiledFrom = async (pluginV8Flags?: ReadonlyArray<string>): Promise<string> => {
    await host?.close()
    host = await startHost({
      pluginDir: probeDir,
      home: world.home,
      dataDir: world.hostData,
      env: {},
      ...(pluginV8Flags ? { pluginV8Flags } : {}),
    })
    // The plugin works whatever it compiled from.
    expect((await host.call("probe", "initialize")).id).toBe("probe")
    const line = host.logger.entries.find((e) => e.message.startsWith("plugin bundle compiled: "))
    return line?.message.slice("plugin bundle compiled: ".length) ?? "not said"
  }

  // The suite runs on Node 20 and on Node 24: each pass holds its own half (no skipped test in either).
  const onNode20 = async () => {
    const { bundle } = await pluginCode(probeDir, "main.ts")
    const cache = codeCachePath(bundle, heapFlags([]))
    writeFileSync(cache, Buffer.concat([sha(readFileSync(bundle, "utf8")), Buffer.alloc(4096, 7)]))
    try {
      expect(await compiledFrom()).toBe("no code cache")
    } finally {
      rmSync(cache, { force: true })
    }
  }

  const onNode24 = async () => {
    const { bundle } = await pluginCode(probeDir, "main.ts")
    const cache = codeCachePath(bundle, heapFlags([]))
    const made = readFileSync(cache)
    try {
      expect(await compiledFrom()).toBe("code cache")

      // Another bundle's cache (its hash, this data): not used.
      writeFileSync(cache, Buffer.concat([sha("another bundle"), made.subarray(32)]))
      expect(await compiledFrom()).toBe("no code cache")

      // This bundle's hash over data V8 does not take.
      writeFileSync(cache, Buffer.concat([made.subarray(0, 32), Buffer.alloc(4096, 7)]))
      expect(await compiledFrom()).toBe("code cache refused by V8")

      // A missing cache is made again at the next start.
      rmSync(cache)
      expect(await compiledFrom()).toBe("code cache")

      // Another front end's heap flags, which V8 counts in its cache's flags: a cache of their own.
      const other = ["--initial-heap-size=32"]
      rmSync(codeCachePath(bundle, heapFlags(other)), { force: true })
      expect(await compiledFrom(other)).toBe("code cache")
      expect(await compiledFrom()).toBe("code cache")
    } finally {
      // Other test files start this plugin too: leave them a good cache.
      writeFileSync(cache, made)
    }
  }

  it("Node 24: compiles from the cache the host made, and without it when the cache is another text's or V8 refuses it; Node 20: compiles without a cache, even with this bundle's beside it", () =>
    codeCacheSupported() ? onNode24() : onNode20())
})

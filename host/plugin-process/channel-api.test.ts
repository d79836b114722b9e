/**
 * The plugin's API over the channel (sdk/context.ts `channelApi`) against
 * the host's broker served on the other end (serve-broker.ts), joined in
 * memory: the same answers as the broker gives in-process, `readEnds` across
 * several slices and over a byte lane that cuts its records anywhere, byte streams, a scoped process ended with its scope, and
 * refusals that keep their tags.
 */
import { join } from "node:path"
import { Effect, Exit, Scope, Stream } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Message, makePeer, type Port } from "../../sdk/channel.ts"
import { channelApi } from "../../sdk/context.ts"
import type { FileEnds, PluginApi } from "../../sdk/plugin-api.ts"
import { type HostBroker, makeBroker } from "../broker/broker.ts"
import { loadManifest } from "../core/manifest.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"
import { serveBroker } from "./serve-broker.ts"

const repoRoot = join(import.meta.dirname, "../..")

/**
 * Two peers joined in memory; with `lanePiece`, the host's byte streams take
 * a byte lane that hands them over in pieces of that many bytes (a pipe's
 * reads cut the stream anywhere, records and all).
 */
const pair = (lanePiece?: number) => {
  const listeners: Partial<Record<"a" | "b", (b: ReadonlyArray<Message>) => void>> = {}
  let laneReader: ((sid: number, piece: Uint8Array) => void) | undefined
  const lane = { bytes: 0 }
  const deliver = (sid: number, copy: Uint8Array) => {
    for (let at = 0; at < copy.byteLength; at += lanePiece ?? copy.byteLength)
      laneReader?.(sid, copy.subarray(at, at + (lanePiece ?? copy.byteLength)))
  }
  const port = (self: "a" | "b", other: "a" | "b"): Port => ({
    post: (batch) => {
      const copy = structuredClone(batch)
      setImmediate(() => listeners[other]?.(copy))
    },
    listen: (receive) => {
      listeners[self] = receive
    },
    later: (flush) => queueMicrotask(flush),
    ...(lanePiece !== undefined &&
      (self === "b"
        ? {
            sendBytes: (sid: number, chunk: Uint8Array) => {
              const copy = chunk.slice()
              lane.bytes += copy.byteLength
              setImmediate(() => deliver(sid, copy))
            },
          }
        : {
            listenBytes: (receive: (sid: number, piece: Uint8Array) => void) => {
              laneReader = receive
            },
          })),
  })
  return { plugin: makePeer(port("a", "b")), host: makePeer(port("b", "a")), lane }
}

let world: TempWorld
let broker: HostBroker
let api: PluginApi

beforeEach(async () => {
  world = makeTempWorld("cvg-channel-api-")
  broker = await makeBroker(await loadManifest(repoRoot), {
    home: world.home,
    hostDataDir: world.hostData,
    env: { HOME: world.home, PATH: `${world.bin}:/usr/bin:/bin`, CLAUDE_X: "1", SECRET: "no" },
    killGraceMs: 300,
  })
  api = overChannel(pair())
})

const releases: Array<() => Promise<void>> = []
/** The plugin's API over `peers`, the host's broker served at their other end. */
const overChannel = ({ plugin, host }: Pick<ReturnType<typeof pair>, "plugin" | "host">): PluginApi => {
  releases.push(serveBroker(host, broker, () => {}).releaseAll)
  return channelApi(plugin, {
    apiVersion: broker.api.apiVersion,
    paths: broker.api.fs.paths,
    providers: new Map(),
    staged: new Map(),
  })
}
afterEach(async () => {
  for (const release of releases.splice(0)) await release()
  await broker.close()
  world.cleanup()
})

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)

describe("the plugin API over the channel", () => {
  it("reads both ends of many files across several slices, each visited once with its own bytes", async () => {
    const dir = join(world.home, ".claude/projects/p")
    const paths = Array.from({ length: 40 }, (_, i) =>
      world.write(join(dir, `f${i}.jsonl`), `head-${i}-`.padEnd(1000 + i, "x") + `-tail-${i}`),
    )
    const asked = [...paths, join(dir, "missing.jsonl"), join(world.outside, "nope")]
    const seen = new Map<number, { head: string; tail: string; size: number } | null>()
    // 300 KB a file: a slice is 16 files, so 40 files cross in three.
    await run(
      api.fs.readEnds!(asked, 300_000, 8, (index, ends: FileEnds | null) => {
        expect(seen.has(index)).toBe(false)
        seen.set(
          index,
          ends && {
            head: new TextDecoder().decode(ends.head.subarray(0, 8)),
            tail: new TextDecoder().decode(ends.tail),
            size: ends.size,
          },
        )
      }),
    )
    expect(seen.size).toBe(42)
    for (let i = 0; i < 40; i++)
      expect(seen.get(i)).toEqual({
        head: `head-${i}-`.padEnd(8, "x").slice(0, 8),
        tail: `x-tail-${i}`.slice(-8),
        size: 1000 + i + `-tail-${i}`.length,
      })
    expect(seen.get(40)).toBeNull()
    expect(seen.get(41)).toBeNull()
  })

  it("reads ends over a byte lane that cuts the records anywhere: every file once, its bytes and times exact", async () => {
    const dir = join(world.home, ".claude/projects/q")
    const paths = Array.from({ length: 30 }, (_, i) =>
      world.write(join(dir, `f${i}.jsonl`), `head-${i}-`.padEnd(100 + i * 7, "é") + `-tail-${i}`),
    )
    const asked = [join(dir, "missing.jsonl"), ...paths, dir]
    const direct = new Map<number, unknown>()
    const shape = (ends: FileEnds | null) =>
      ends && {
        head: Buffer.from(ends.head).toString("hex"),
        tail: Buffer.from(ends.tail).toString("hex"),
        size: ends.size,
        mtimeMs: ends.mtimeMs,
        birthtimeMs: ends.birthtimeMs,
      }
    await run(broker.api.fs.readEnds!(asked, 64, 48, (i, ends) => void direct.set(i, shape(ends))))
    for (const piece of [1, 13, 40, 4096]) {
      const peers = pair(piece)
      const laned = overChannel(peers)
      const seen = new Map<number, unknown>()
      await run(
        laned.fs.readEnds!(asked, 64, 48, (i, ends) => {
          expect(seen.has(i)).toBe(false)
          seen.set(i, shape(ends))
        }),
      )
      expect(seen, `pieces of ${piece} bytes`).toEqual(direct)
      expect(peers.lane.bytes).toBeGreaterThan(30 * 64)
    }
    expect(direct.get(0)).toBeNull()
    expect(direct.get(31)).toBeNull()
    expect(direct.get(1)).toMatchObject({ size: Buffer.byteLength(`head-0-`.padEnd(100, "é") + "-tail-0") })
  })

  it("lists a folder with its files' ends in one call over a lane that cuts it anywhere, as the broker does", async () => {
    const dir = join(world.home, ".claude/projects/r")
    for (let i = 0; i < 12; i++)
      world.write(join(dir, `s${i}.jsonl`), `head-${i}-`.padEnd(90 + i, "é") + `-tail-${i}`)
    world.write(join(dir, "s0/subagents/a.jsonl"), "sub")
    world.write(join(dir, "notes.txt"), "n")
    const listingOf = async (fs: PluginApi["fs"], path: string, maxEnds: number) => {
      const out: { entries: string[]; withEnds?: boolean; files: Record<string, string | null> } = {
        entries: [],
        files: {},
      }
      let names: string[] = []
      const answer = await run(
        fs.listEnds!(
          path,
          { suffix: ".jsonl", headBytes: 32, tailBytes: 16, maxEnds },
          {
            entries: (entries, withEnds) => {
              names = entries.map((e) => `${e.name}:${e.kind}`)
              out.entries = [...names].sort()
              out.withEnds = withEnds
            },
            file: (i, ends) => {
              out.files[names[i] as string] =
                ends &&
                `${Buffer.from(ends.head).toString("hex")}/${Buffer.from(ends.tail).toString("hex")}/${ends.size}/${ends.mtimeMs}`
            },
          },
        ),
      )
      return { answer, ...out }
    }
    for (const maxEnds of [100, 5]) {
      const direct = await listingOf(broker.api.fs, dir, maxEnds)
      expect(direct.withEnds).toBe(maxEnds === 100)
      expect(Object.keys(direct.files)).toHaveLength(12)
      for (const piece of [1, 29, 4096]) {
        const peers = pair(piece)
        expect(await listingOf(overChannel(peers).fs, dir, maxEnds), `pieces of ${piece}`).toEqual(direct)
        expect(peers.lane.bytes).toBeGreaterThan(12 * 40)
      }
    }
    const missing = await listingOf(overChannel(pair(7)).fs, join(dir, "none"), 100)
    expect(missing).toEqual({ answer: null, entries: [], files: {} })
    const outside = await listingOf(overChannel(pair(7)).fs, world.outside, 100)
    expect(outside.answer).toBeNull()
  })

  it("reads the ends of a folder larger than a slice in the same call, as the broker does, the slices taken as credit comes", async () => {
    // 700 files: more than one readEnds slice (at most 512) and more than the
    // serve side once read at once, when a larger folder got sizes only and
    // each file was read again (an lstat and a round trip more a file).
    const dir = join(world.home, ".claude/projects/big")
    for (let i = 0; i < 700; i++)
      world.write(join(dir, `s${String(i).padStart(3, "0")}.jsonl`), `h${i}`.padEnd(3000, "x") + `t${i}`)
    const seen = async (fs: PluginApi["fs"]) => {
      const out = { withEnds: undefined as boolean | undefined, files: new Map<string, string>() }
      let names: string[] = []
      await run(
        fs.listEnds!(
          dir,
          { suffix: ".jsonl", headBytes: 1024, tailBytes: 2048, maxEnds: 10_000 },
          {
            entries: (entries, withEnds) => {
              names = entries.map((e) => e.name)
              out.withEnds = withEnds
            },
            file: (i, ends) => {
              const name = names[i] as string
              expect(out.files.has(name)).toBe(false)
              out.files.set(
                name,
                ends
                  ? `${ends.head.byteLength}:${ends.head[1]}/${ends.tail.byteLength}:${ends.size}`
                  : "none",
              )
            },
          },
        ),
      )
      return out
    }
    const direct = await seen(broker.api.fs)
    expect(direct.withEnds).toBe(true)
    expect(direct.files.size).toBe(700)
    const peers = pair(4096)
    const laned = await seen(overChannel(peers).fs)
    expect(laned.withEnds).toBe(true)
    expect(laned.files).toEqual(direct.files)
    // Each file's ends crossed once: no sizes-only records besides.
    expect(peers.lane.bytes).toBeLessThan(700 * (40 + 1024 + 2048) + 64 * 1024)
  })

  it("answers fs, env and storage as the broker does", async () => {
    const file = world.write(join(world.home, ".claude/settings.json"), "x".repeat(200_000))
    expect(await run(api.fs.read(file))).toHaveLength(200_000)
    expect(await run(api.fs.read(join(world.outside, "x")))).toBeNull()
    expect(Array.from((await run(api.fs.readRange(file, 10, 13)))!)).toEqual([120, 120, 120])
    const stream = await run(api.fs.stream(file, 100))
    const bytes = await run(
      Stream.runFold(
        stream!,
        () => 0,
        (n, c) => n + c.byteLength,
      ),
    )
    expect(bytes).toBe(200_000 - 100)
    expect(await run(api.fs.stream(join(world.outside, "x")))).toBeNull()
    expect(await run(api.env.get("CLAUDE_X"))).toBe("1")
    expect(await run(api.env.get("SECRET"))).toBeUndefined()
    await run(api.storage.set("k", { a: [1, 2] }))
    expect(await run(api.storage.get("k"))).toEqual({ a: [1, 2] })
    expect(await run(api.storage.keys)).toContain("k")
  })

  it("spawns in the caller's scope and ends the process with it; refusals keep their tag", async () => {
    world.command("claude", `#!/bin/sh\necho ready\nwhile IFS= read -r l; do echo "echo:$l"; done\n`)
    const scope = await run(Scope.make())
    const handle = await run(api.process.spawn("claude", []).pipe(Scope.provide(scope)))
    await run(handle.write("ping\n"))
    const out = await run(
      handle.stdout.pipe(
        Stream.decodeText(),
        Stream.takeUntil((s) => s.includes("echo:ping")),
        Stream.mkString,
      ),
    )
    expect(out).toContain("ready")
    expect(broker.processes.live()).toHaveLength(1)
    await run(Scope.close(scope, Exit.void))
    expect(broker.processes.live()).toEqual([])
    expect(pidAlive(handle.pid!)).toBe(false)
    const refused = await run(Effect.flip(api.process.run("rm", ["-rf", "/"])))
    expect(refused).toMatchObject({ _tag: "NotGranted", capability: "process", detail: "rm" })
  })
})

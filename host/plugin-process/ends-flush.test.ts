/**
 * The byte lane's flush for the list's reads (serve-broker.ts `flushBytes`):
 * a `readEnds` slice, or a folder's `listEnds` records, leave for the plugin
 * as soon as they are written, before the host reads the next slice or the
 * next folder in the same poll phase. The host's lane here corks as
 * parent.ts's does (what is written waits for the turn's end) and logs when
 * bytes leave; the broker's reads are stand-ins that log when they run, so
 * the order of reads and sends is the test.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Message, makePeer, type Port } from "../../sdk/channel.ts"
import { channelApi } from "../../sdk/context.ts"
import type { FileEnds, FsShape, PluginApi } from "../../sdk/plugin-api.ts"
import { type HostBroker, makeBroker } from "../broker.ts"
import { loadManifest } from "../manifest.ts"
import { makeTempWorld, type TempWorld } from "../testing.ts"
import { serveBroker } from "./serve-broker.ts"

const repoRoot = join(import.meta.dirname, "../..")

/** Plugin and host peers in memory; the host's lane holds its bytes until the turn ends or a flush. */
const corkedPair = (log: string[]) => {
  const listeners: Partial<Record<"plugin" | "host", (b: ReadonlyArray<Message>) => void>> = {}
  let laneReader: ((sid: number, piece: Uint8Array) => void) | undefined
  let held: Array<[number, Uint8Array]> = []
  let uncorkQueued = false
  const flushBytes = () => {
    if (held.length === 0) return
    const out = held
    held = []
    log.push(`sent ${out.reduce((n, [, c]) => n + c.byteLength, 0)}`)
    setImmediate(() => {
      for (const [sid, chunk] of out) laneReader?.(sid, chunk)
    })
  }
  const post =
    (other: "plugin" | "host") =>
    (batch: ReadonlyArray<Message>): void => {
      const copy = structuredClone(batch)
      setImmediate(() => listeners[other]?.(copy))
    }
  const host: Port = {
    post: post("plugin"),
    listen: (receive) => {
      listeners.host = receive
    },
    later: (flush) => queueMicrotask(flush),
    sendBytes: (sid, chunk) => {
      held.push([sid, chunk.slice()])
      if (!uncorkQueued) {
        uncorkQueued = true
        setImmediate(() => {
          uncorkQueued = false
          flushBytes()
        })
      }
    },
    flushBytes,
  }
  const plugin: Port = {
    post: post("host"),
    listen: (receive) => {
      listeners.plugin = receive
    },
    later: (flush) => queueMicrotask(flush),
    listenBytes: (receive) => {
      laneReader = receive
    },
  }
  return { host: makePeer(host), plugin: makePeer(plugin), flushBytes }
}

/** Ends of a fake file: its index in the head, 40 bytes. */
const endsOf = (i: number): FileEnds => ({
  head: new TextEncoder().encode(`head-${i}`.padEnd(32, ".")),
  tail: new TextEncoder().encode(`tail-${i}`.padEnd(8, ".")),
  size: 40,
  mtimeMs: 1000 + i,
  birthtimeMs: 1000,
})

/** After a separate callback each (as the folders' checks end on the thread pool), within one phase. */
const ownCallback = Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))

let world: TempWorld
let broker: HostBroker
beforeEach(async () => {
  world = makeTempWorld("cvg-ends-flush-")
  broker = await makeBroker(await loadManifest(repoRoot), {
    home: world.home,
    hostDataDir: world.hostData,
    env: { HOME: world.home },
    killGraceMs: 300,
  })
})
afterEach(async () => {
  await broker.close()
  world.cleanup()
})

/** The plugin's API over the corked pair, the broker's fs reads replaced by `fs`'s. */
const overCorked = (log: string[], fs: Partial<FsShape>, flush: boolean): PluginApi => {
  const { host, plugin, flushBytes } = corkedPair(log)
  const served = { ...broker, api: { ...broker.api, fs: { ...broker.api.fs, ...fs } } } as HostBroker
  serveBroker(host, served, () => {}, flush ? flushBytes : undefined)
  return channelApi(plugin, {
    apiVersion: broker.api.apiVersion,
    paths: broker.api.fs.paths,
    providers: new Map(),
    staged: new Map(),
  })
}

describe("the list's reads on the byte lane", () => {
  const readEnds: FsShape["readEnds"] = (paths, _head, _tail, visit) =>
    Effect.sync(() => {
      for (let i = 0; i < paths.length; i++) visit(i, endsOf(i))
    })

  const readInSlices = async (flush: boolean) => {
    const log: string[] = []
    const api = overCorked(
      log,
      {
        readEnds: (paths, head, tail, visit) =>
          Effect.suspend(() => {
            log.push(`read ${paths.length}`)
            return readEnds(paths, head, tail, visit)
          }),
      },
      flush,
    )
    const seen: number[] = []
    // 32 + 8 bytes a file: a slice is 512 files, so 1,300 files are read in three.
    const paths = Array.from({ length: 1300 }, (_, i) => join(world.home, `.claude/projects/p/${i}.jsonl`))
    await Effect.runPromise(api.fs.readEnds!(paths, 32, 8, (i) => void seen.push(i)))
    expect(seen).toEqual(paths.map((_, i) => i))
    return log
  }

  it("sends each readEnds slice before the host reads the next", async () => {
    const log = await readInSlices(true)
    expect(log.filter((l) => l.startsWith("read"))).toEqual(["read 512", "read 512", "read 276"])
    expect(log.map((l) => l.split(" ")[0])).toEqual(["read", "sent", "read", "sent", "read", "sent"])
  })

  it("without the flush the slices wait for the turn's end (the test's own control)", async () => {
    const log = await readInSlices(false)
    expect(log.map((l) => l.split(" ")[0])).toEqual(["read", "read", "read", "sent"])
  })

  const listTwoFolders = async (flush: boolean) => {
    const log: string[] = []
    const api = overCorked(
      log,
      {
        listEnds: (dir, _options, visit) =>
          ownCallback.pipe(
            Effect.andThen(
              Effect.sync(() => {
                log.push(`read ${dir.split("/").pop()}`)
                const entries = Array.from({ length: 20 }, (_, i) => ({
                  name: `${i}.jsonl`,
                  kind: "file" as const,
                }))
                visit.entries(entries, true)
                for (let i = 0; i < entries.length; i++) visit.file(i, endsOf(i))
                return { withEnds: true }
              }),
            ),
          ),
      },
      flush,
    )
    const files = { a: 0, b: 0 }
    const listing = (name: "a" | "b") =>
      api.fs.listEnds!(
        join(world.home, `.claude/projects/${name}`),
        { suffix: ".jsonl", headBytes: 32, tailBytes: 8, maxEnds: 100 },
        { entries: () => {}, file: () => void files[name]++ },
      )
    await Effect.runPromise(Effect.all([listing("a"), listing("b")], { concurrency: "unbounded" }))
    expect(files).toEqual({ a: 20, b: 20 })
    return log
  }

  it("sends a folder's listEnds records before the host reads the next folder in the same phase", async () => {
    expect(await listTwoFolders(true)).toEqual([
      "read a",
      expect.stringMatching(/^sent /),
      "read b",
      expect.stringMatching(/^sent /),
    ])
  })

  it("without the flush both folders are read before any byte leaves (the test's own control)", async () => {
    const log = await listTwoFolders(false)
    expect(log.map((l) => l.split(" ")[0])).toEqual(["read", "read", "sent"])
  })
})

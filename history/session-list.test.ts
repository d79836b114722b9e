/**
 * list_sessions on a host with `listEnds` (history/session-list.ts): one call a
 * folder, its shard's `get` beside it; the
 * same page as list + readEnds; a folder the host's `listEnds` refuses (too
 * many entries) still listed through `list` and `readEnds`; a small page
 * over many folders side by side never reads every folder's ends at once.
 */
import { Effect, Layer } from "effect"
import { describe, expect, it, vi } from "vitest"
import { listSessions } from "./session-list.ts"
import { listEndsBy } from "../sdk/file-ends.ts"
import { Fs, type FsShape, Storage } from "../sdk/plugin-api.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"

const HOME = "/home/user"
const CONFIG = `${HOME}/.claude`
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`
const session = (n: number) =>
  `${JSON.stringify({ type: "queue-operation", operation: "enqueue", timestamp: "2026-11-01T10:00:00.000Z" })}\n${JSON.stringify(
    {
      parentUuid: null,
      isSidechain: false,
      type: "user",
      message: { role: "user", content: `prompt ${n}` },
      uuid: uuid(1000 + n),
      timestamp: "2026-11-01T10:00:01.000Z",
      cwd: `/w/${n % 4}`,
    },
  )}\n`

/** Four project folders of five sessions each, and an old-layout file that is no candidate. */
const files: Record<string, string> = {}
for (let n = 1; n <= 20; n++) files[`${CONFIG}/projects/-w-${n % 4}/${uuid(n)}.jsonl`] = session(n)
files[`${CONFIG}/projects/-w-0/agent-a1.jsonl`] = session(99)

const setup = (hostListEnds: "yes" | "refuses" | "none", vanishing = new Set<string>()) => {
  const broker = makeMemoryBroker({ home: HOME, files: { ...files } })
  const base = broker.api.fs
  const calls: string[] = []
  const tracked: FsShape = {
    ...base,
    list: (dir) => {
      calls.push(`list ${dir.split("/").pop()}`)
      return base.list(dir)
    },
    readEnds: (paths, head, tail, visit) => {
      calls.push(`${head === 0 ? "sizes" : "ends"} ${paths.length}`)
      // A vanishing file is there for a stat, gone by the time its ends are read.
      return base.readEnds!(paths, head, tail, (i, ends) =>
        visit(i, head > 0 && vanishing.has(paths[i] as string) ? null : ends),
      )
    },
  }
  const made = listEndsBy(base.list, base.readEnds!)
  const fs: FsShape =
    hostListEnds === "none"
      ? tracked
      : {
          ...tracked,
          listEnds: (dir, options, visit) => {
            calls.push(`listEnds ${dir.split("/").pop()} ${options.maxEnds}`)
            return hostListEnds === "refuses" ? Effect.succeed(null) : made(dir, options, visit)
          },
        }
  const storage = broker.api.storage
  const gets: string[] = []
  /** Run at each `storage.keys` (the list's own at its start, the cache's save after the answer). */
  const onKeys: Array<() => void> = []
  const run = (limit?: number) => {
    calls.length = 0
    gets.length = 0
    return Effect.runPromise(
      listSessions(CONFIG, limit === undefined ? {} : { limit }).pipe(
        Effect.provide(Layer.succeed(Fs, fs)),
        Effect.provide(
          Layer.succeed(Storage, {
            ...storage,
            get: (key) => {
              gets.push(key)
              return storage.get(key)
            },
            keys: Effect.suspend(() => {
              for (const f of onKeys) f()
              return storage.keys
            }),
          }),
        ),
      ),
    )
  }
  return { run, calls, gets, broker, onKeys }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe("list_sessions on a host with listEnds", () => {
  it("one listEnds call a folder, no list or readEnds of its own; the same page as without it", async () => {
    const host = setup("yes")
    const page = await host.run(1000)
    expect(page.sessions).toHaveLength(20)
    expect(host.calls.filter((c) => !c.startsWith("listEnds")).sort()).toEqual(["list projects"])
    expect(host.calls.filter((c) => c.startsWith("listEnds"))).toHaveLength(4)
    // Each folder's shard asked for beside its listing, none there yet.
    expect(host.gets).toHaveLength(4)
    expect(page).toEqual(await setup("none").run(1000))
  })

  it("warm: each folder's sizes only, beside its shard; nothing read", async () => {
    const host = setup("yes")
    const cold = await host.run(1000)
    await settle()
    const warm = await host.run(1000)
    expect(warm).toEqual(cold)
    expect(host.calls.filter((c) => c.startsWith("listEnds")).every((c) => c.endsWith(" 0"))).toBe(true)
    expect(host.calls.filter((c) => c.startsWith("ends"))).toEqual([])
    expect(host.gets).toHaveLength(4)
  })

  it("a folder the host refuses is listed through list and readEnds, the same page", async () => {
    const host = setup("refuses")
    const page = await host.run(1000)
    expect(host.calls.filter((c) => c.startsWith("list -w")).length).toBe(4)
    expect(page).toEqual(await setup("none").run(1000))
  })

  it("a page of 8 over four folders of five never reads every folder's ends at once", async () => {
    const host = setup("yes")
    const page = await host.run(8)
    // The memory broker gives every file mtime 0: the ids order them.
    expect(page.sessions.map((s) => s.title)).toEqual(Array.from({ length: 8 }, (_, i) => `prompt ${i + 1}`))
    // Side by side, each folder may read at once only its share of the page (2 of 8): sizes only, then
    // the first folder listed (the page still holds it) and the page's rest. Reading each folder as if it
    // were alone would read all twenty.
    const read = host.calls
      .filter((c) => c.startsWith("ends"))
      .reduce((n, c) => n + Number(c.split(" ")[1]), 0)
    expect(read).toBeLessThanOrEqual(13)
    expect(
      host.calls.filter((c) => c.startsWith("listEnds")).every((c) => Number(c.split(" ")[2]) <= 2),
    ).toBe(true)
  })

  it("a changed file gone by the time it is read is not cached as no session", async () => {
    const path = `${CONFIG}/projects/-w-1/${uuid(5)}.jsonl`
    const vanishing = new Set<string>()
    const host = setup("yes", vanishing)
    await host.run(1000)
    await settle()
    host.broker.files.set(path, `${session(5)}${session(5)}`)
    vanishing.add(path)
    const page = await host.run(1000)
    await settle()
    expect(page.sessions.map((s) => s.session_id)).not.toContain(uuid(5))
    const shard = JSON.parse(host.broker.storage.get(`cache:history:list:${CONFIG}/projects/-w-1`) as string)
    expect(shard.files[uuid(5)]).toBeUndefined()
    // Back, unchanged since: read and listed again.
    vanishing.clear()
    expect((await host.run(1000)).sessions.map((s) => s.session_id)).toContain(uuid(5))
  })

  it("the cache's shards are made only once storage has answered its keys, then all written", async () => {
    // Through a plugin process the answer's last bytes leave only when the plugin's loop is free: a thousand
    // entries serialized at once, right after it, would hold them back.
    await settle() // the earlier tests' saves, which would count here
    const host = setup("yes")
    const stringify = vi.spyOn(JSON, "stringify")
    const shardTexts = () =>
      stringify.mock.calls.filter(
        ([value]) => typeof value === "object" && value !== null && "files" in value,
      ).length
    const atKeys: number[] = []
    host.onKeys.push(() => atKeys.push(shardTexts()))
    try {
      await host.run(1000)
      await settle()
      // The list's own keys at its start, then the save's: no shard made before either.
      expect(atKeys).toEqual([0, 0])
      expect(shardTexts()).toBe(4)
    } finally {
      stringify.mockRestore()
    }
    const stored = [...host.broker.storage.keys()].filter((k) => k.startsWith("cache:history:list:"))
    expect(stored).toHaveLength(4)
  })
})

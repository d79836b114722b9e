/**
 * The host broker's `listEnds` (a folder's listing and its files' ends in
 * one call): the same grant checks as `list` and `readEnds`, which it is
 * made of. Outside every scope, a folder or file linked out of them, `..`
 * out: null or a null file, logged; more entries than it lists at once:
 * refused and logged, while `list` still serves the folder; more matching
 * files than `maxEnds`: sizes and times only.
 */
import { mkdirSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { DirEntry, FsShape, ListEndsOptions } from "../../sdk/plugin-api.ts"
import type { HostBroker } from "./broker.ts"
import { makeFsBroker } from "./fs-broker.ts"
import { makeScopeSet } from "./scopes.ts"
import { brokerIn, makeTempWorld, type TempWorld } from "../testing/testing.ts"

const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes)

let world: TempWorld
let broker: HostBroker

beforeEach(async () => {
  world = makeTempWorld("cvg-list-ends-")
  broker = await brokerIn(world)
})
afterEach(async () => {
  await broker.close()
  world.cleanup()
})

const refusals = () => broker.logger.refusals().map((e) => e.message)

const JSONL: ListEndsOptions = { suffix: ".jsonl", headBytes: 3, tailBytes: 2, maxEnds: 100 }

/** One call's answer, its listing, and each visited file by name with its ends copied out. */
const listed = async (fs: FsShape, dir: string, options: ListEndsOptions = JSONL) => {
  let entries: ReadonlyArray<DirEntry> = []
  let withEnds: boolean | undefined
  const files = new Map<string, { head: string; tail: string; size: number } | null>()
  const answer = await run(
    fs.listEnds!(dir, options, {
      entries: (e, ends) => {
        entries = e
        withEnds = ends
      },
      file: (i, ends) => {
        const name = entries[i]?.name ?? `#${i}`
        expect(files.has(name)).toBe(false)
        files.set(name, ends && { head: text(ends.head), tail: text(ends.tail), size: ends.size })
      },
    }),
  )
  return { answer, entries, withEnds, files }
}

describe("listEnds", () => {
  it("lists a folder and reads the ends of its matching files, a link into a scope followed", async () => {
    const dir = join(world.home, ".claude/projects/-ws")
    world.write(join(dir, "a.jsonl"), "AAAA-aa")
    world.write(join(dir, "b.txt"), "not matched")
    world.write(join(dir, "a/subagents/x.jsonl"), "inside the session's folder")
    world.write(join(world.home, ".agents/skills/x/SKILL.md"), "SKILL")
    symlinkSync(join(world.home, ".agents/skills/x/SKILL.md"), join(dir, "in-scope.jsonl"))
    const { answer, entries, withEnds, files } = await listed(broker.api.fs, dir)
    expect(answer).toEqual({ withEnds: true })
    expect(withEnds).toBe(true)
    expect(entries.map((e) => `${e.name}:${e.kind}`).sort()).toEqual([
      "a.jsonl:file",
      "a:directory",
      "b.txt:file",
      "in-scope.jsonl:link",
    ])
    expect(Object.fromEntries(files)).toEqual({
      "a.jsonl": { head: "AAA", tail: "aa", size: 7 },
      "in-scope.jsonl": { head: "SKI", tail: "LL", size: 5 },
    })
    expect(refusals()).toEqual([])
  })

  it("refuses a folder outside every scope, `..` out of one, and a folder linked out of them", async () => {
    world.write(join(world.home, ".ssh/id_rsa.jsonl"), "secret")
    mkdirSync(join(world.home, ".claude/projects"), { recursive: true })
    symlinkSync(join(world.home, ".ssh"), join(world.home, ".claude/projects/-evil"))
    for (const dir of [join(world.home, ".ssh"), "~/.claude/../.ssh", "~/.claude/projects/-evil"]) {
      const { answer, files } = await listed(broker.api.fs, dir)
      expect(answer, dir).toBeNull()
      expect(files.size).toBe(0)
    }
    expect(refusals()).toHaveLength(3)
  })

  it("a file linked out of every scope is listed but never read: a null file, logged", async () => {
    const dir = join(world.home, ".claude/projects/-ws")
    world.write(join(dir, "a.jsonl"), "AAAA")
    world.write(join(world.home, ".ssh/id_rsa"), "secret")
    symlinkSync(join(world.home, ".ssh/id_rsa"), join(dir, "outside.jsonl"))
    const { files } = await listed(broker.api.fs, dir)
    expect(files.get("outside.jsonl")).toBeNull()
    expect(files.get("a.jsonl")).toMatchObject({ head: "AAA" })
    expect(refusals()).toHaveLength(1)
    expect(refusals()[0]).toContain("outside.jsonl")
  })

  it("refuses a folder of more entries than it lists at once, and logs it; list still serves it", async () => {
    const dir = join(world.home, ".claude/projects/-many")
    for (let n = 0; n < 5; n++) world.write(join(dir, `f${n}.jsonl`), `${n}`)
    const fs = makeFsBroker({
      scopes: makeScopeSet(["~/.claude/**"], {
        home: world.home,
        data: world.hostData,
        workspaces: () => [],
      }),
      home: world.home,
      data: world.hostData,
      refuse: (path, reason) => seen.push(`${path}: ${reason}`),
      listEndsMaxEntries: 4,
    })
    const seen: string[] = []
    expect((await listed(fs, dir)).answer).toBeNull()
    expect(seen).toEqual([`${dir}: holds 5 entries, more than the 4 listEnds lists at once`])
    expect(await run(fs.list(dir))).toHaveLength(5)
  })

  it("past maxEnds matching files, gives sizes and times only; nameLength narrows the match", async () => {
    const dir = join(world.home, ".claude/projects/-ws")
    for (let n = 0; n < 3; n++) world.write(join(dir, `f${n}.jsonl`), `${n}`.repeat(10))
    world.write(join(dir, "longer-name.jsonl"), "x")
    const few = await listed(broker.api.fs, dir, { ...JSONL, maxEnds: 3 })
    expect(few.withEnds).toBe(false)
    expect([...few.files.values()]).toEqual(Array(4).fill({ head: "", tail: "", size: expect.any(Number) }))
    const narrow = await listed(broker.api.fs, dir, { ...JSONL, maxEnds: 3, nameLength: "f0.jsonl".length })
    expect(narrow.withEnds).toBe(true)
    expect([...narrow.files.keys()].sort()).toEqual(["f0.jsonl", "f1.jsonl", "f2.jsonl"])
    expect(narrow.files.get("f1.jsonl")).toEqual({ head: "111", tail: "11", size: 10 })
  })

  it("a missing folder and a file are null, without a refusal", async () => {
    const file = world.write(join(world.home, ".claude/projects/-ws/a.jsonl"), "A")
    expect((await listed(broker.api.fs, join(world.home, ".claude/projects/none"))).answer).toBeNull()
    expect((await listed(broker.api.fs, file)).answer).toBeNull()
    expect(refusals()).toEqual([])
  })
})

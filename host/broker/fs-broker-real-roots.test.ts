/**
 * The broker's grant check under a linked ~/.claude (a dotfiles checkout,
 * the benchmarks' HOMEs): a path with a link on it is checked against where
 * the scope roots really live, and each root's real place is worked out only
 * when the answer needs it. The first check of a path asks the root that
 * covers it, which settles it: one realpath for the roots, not one a root
 * (the isolated list checks a folder once per `readEnds` slice: ~600 checks
 * at 50,000 sessions, each of them a realpath of every root before).
 */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import type * as promises from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { HostBroker } from "./broker.ts"
import { brokerIn, makeTempWorld, type TempWorld } from "../testing/testing.ts"

const realpaths: string[] = []
vi.mock("node:fs/promises", async (original) => {
  const actual = await original<typeof promises>()
  return {
    ...actual,
    realpath: (path: string, ...rest: []) => {
      realpaths.push(String(path))
      return actual.realpath(path, ...rest)
    },
  }
})

const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)

let world: TempWorld
let broker: HostBroker
let folder: string

beforeEach(async () => {
  world = makeTempWorld()
  // ~/.claude links to a folder elsewhere; the grant covers its real place.
  const config = join(world.outside, "dotfiles/claude")
  folder = join(config, "projects/p")
  mkdirSync(folder, { recursive: true })
  for (let i = 0; i < 3; i++) writeFileSync(join(folder, `s${i}.jsonl`), `{"n":${i}}\n`)
  symlinkSync(config, join(world.home, ".claude"))
  broker = await brokerIn(world)
})

afterEach(async () => {
  await broker.close()
  world.cleanup()
})

describe("the grant check under a linked ~/.claude", () => {
  it("reads a folder's ends with one realpath of the path and one of the roots (its scope's)", async () => {
    const linked = join(world.home, ".claude/projects/p")
    const sizes: number[] = []
    realpaths.length = 0
    await run(
      broker.api.fs.readEnds!(
        [0, 1, 2].map((i) => `${linked}/s${i}.jsonl`),
        16,
        16,
        (_, ends) => void sizes.push(ends?.size ?? -1),
      ),
    )
    expect(sizes.sort()).toEqual([8, 8, 8])
    // The folder's own path, then ~/.claude's real place: no other root's.
    expect(realpaths).toEqual([linked, join(world.home, ".claude")])
  })

  it("still refuses a link out of every scope, after asking every root", async () => {
    symlinkSync(join(world.outside, "elsewhere"), join(world.home, ".claude/projects/out"))
    mkdirSync(join(world.outside, "elsewhere"))
    writeFileSync(join(world.outside, "elsewhere/x.jsonl"), "x")
    expect(await run(broker.api.fs.read(join(world.home, ".claude/projects/out/x.jsonl")))).toBeNull()
    expect(await run(broker.api.fs.read(join(world.home, ".claude/projects/p/s0.jsonl")))).toBe('{"n":0}\n')
  })
})

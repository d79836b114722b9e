/**
 * The fs broker against a racing swap: a folder inside a granted scope is
 * exchanged (renameat2 RENAME_EXCHANGE) with a link to a folder outside, over
 * and over, while the plugin reads. A check of the path followed by an open of
 * the path again loses this race; a check of what was opened does not. Every
 * read must give the inside file or nothing, never the outside one.
 */
import { spawn } from "node:child_process"
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { HostBroker } from "./broker.ts"
import { brokerIn, makeTempWorld, type TempWorld } from "../testing/testing.ts"

const RACER = join(import.meta.dirname, "../testing/fixtures", "swap-race.py")
/** How long each race runs: long enough for tens of thousands of swaps. */
const RACE_MS = 1_500
const FILES = 40

let world: TempWorld
let broker: HostBroker
let inside: string
let swapped: string

beforeEach(async () => {
  world = makeTempWorld()
  broker = await brokerIn(world)
  // ~/.claude/projects/-ws holds "in" files; /outside holds same-named "OUT" files.
  inside = join(world.home, ".claude/projects/-ws")
  const outside = join(world.root, "outside")
  mkdirSync(inside, { recursive: true })
  mkdirSync(outside, { recursive: true })
  for (let n = 0; n < FILES; n++) {
    writeFileSync(join(inside, `f${n}.jsonl`), `in:${n}\n`)
    writeFileSync(join(outside, `f${n}.jsonl`), `OUT:${n}\n`)
  }
  swapped = join(world.home, ".claude/projects/-ws.swap")
  symlinkSync(outside, swapped)
})

afterEach(async () => {
  await broker.close()
  world.cleanup()
})

/** Run the racer for RACE_MS while `read` runs in a loop; the reads' answers. */
const race = async <A>(read: () => Promise<A>): Promise<{ answers: A[]; swaps: number }> => {
  const racer = spawn("python3", [RACER, inside, swapped, String(RACE_MS / 1000)], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  let out = ""
  racer.stdout.on("data", (chunk) => (out += chunk))
  let running = true
  const done = new Promise<number>((resolve) =>
    racer.once("exit", () => {
      running = false
      resolve(Number(out.trim()))
    }),
  )
  const answers: A[] = []
  while (running) answers.push(await read())
  return { answers, swaps: await done }
}

const text = (bytes: Uint8Array | undefined | null) => (bytes ? new TextDecoder().decode(bytes) : null)
const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect)
const outsideAnswers = (answers: ReadonlyArray<string | null>) =>
  answers.filter((a) => a?.includes("OUT")).length

describe("a folder swapped for a link to outside while the plugin reads", () => {
  it("read gives the inside file or nothing, never the outside one", async () => {
    const { answers, swaps } = await race(() => run(broker.api.fs.read(join(inside, "f1.jsonl"))))
    expect(swaps).toBeGreaterThan(100)
    expect(answers.length).toBeGreaterThan(20)
    expect(outsideAnswers(answers)).toBe(0)
    expect(answers.filter((a) => a === "in:1\n").length).toBeGreaterThan(0)
  })

  it("readRange and stream: never the outside file", async () => {
    const { answers } = await race(async () => {
      const range = text(await run(broker.api.fs.readRange(join(inside, "f2.jsonl"), 0, 10)))
      const stream = await run(broker.api.fs.stream(join(inside, "f3.jsonl")))
      const streamed =
        stream === null
          ? null
          : await run(
              stream.pipe(
                Stream.decodeText(),
                Stream.mkString,
                Effect.orElseSucceed(() => ""),
              ),
            )
      return `${range}|${streamed}`
    })
    expect(outsideAnswers(answers)).toBe(0)
    expect(answers.some((a) => a.includes("in:2") && a.includes("in:3"))).toBe(true)
  })

  it("readEnds batches (the folder checked once): no file read from outside", async () => {
    const paths = Array.from({ length: FILES }, (_, n) => join(inside, `f${n}.jsonl`))
    const { answers } = await race(async () => {
      const seen: Array<string | null> = []
      await run(broker.api.fs.readEnds!(paths, 16, 0, (_, ends) => seen.push(text(ends?.head))))
      return seen.join(",")
    })
    expect(outsideAnswers(answers)).toBe(0)
    expect(answers.some((a) => a.includes("in:7"))).toBe(true)
  })

  it("list and realpath: never the outside folder", async () => {
    mkdirSync(join(world.root, "outside", "only-outside"))
    const { answers } = await race(async () => {
      const entries = await run(broker.api.fs.list(inside))
      const real = await run(broker.api.fs.realpath(join(inside, "f4.jsonl")))
      return `${entries?.some((e) => e.name === "only-outside") ? "OUT" : "in"}|${real?.includes("outside") ? "OUT" : "in"}`
    })
    expect(outsideAnswers(answers)).toBe(0)
  })
})

/**
 * The isolated host keeps nothing per live frame: the real host with the
 * replay fixture (host/fixtures/replay-plugin) in its own plugin process,
 * the recorded CLI frames piped through `cat` again and again; after the
 * first replays (JIT, channel and lane buffers warm) the host's heap after a
 * full collection stays where it was, so no event, batch, chunk or lane
 * buffer of a frame outlives the frame. The same check with the host's own
 * event record on fails (it keeps every event), which is what it would catch
 * (NOTES.md, Performance, `isolation`, seventh pass).
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterEach, describe, expect, it } from "vitest"
import { type Host, startHost } from "../host.ts"
import { makeTempWorld, type TempWorld } from "../testing.ts"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const repoRoot = join(import.meta.dirname, "../..")
const IDS = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16})\b/g
const REPETITIONS = 12
const REPLAYS = 6

/** Every recording's stdout, its ids made new per repetition (as a long session's would be). */
const writeFrames = (path: string): number => {
  const base = readdirSync(join(repoRoot, "testdata"))
    .filter((d) => existsSync(join(repoRoot, "testdata", d, "stdout.jsonl")))
    .sort()
    .flatMap((d) =>
      readFileSync(join(repoRoot, "testdata", d, "stdout.jsonl"), "utf8")
        .split("\n")
        .filter((l) => l.trim() !== ""),
    )
  const fd = openSync(path, "w")
  try {
    for (let rep = 0; rep < REPETITIONS; rep++)
      writeSync(fd, `${base.map((l) => l.replace(IDS, `$1_${rep}`)).join("\n")}\n`)
  } finally {
    closeSync(fd)
  }
  return base.length * REPETITIONS
}

let world: TempWorld | undefined
let host: Host | undefined

afterEach(async () => {
  await host?.close()
  host = undefined
  world?.cleanup()
  world = undefined
})

const heapAfterGc = () => {
  gc()
  return getHeapStatistics().used_heap_size
}

/** The heap's growth over the later replays, and the events each replay brought. */
const growthOverReplays = async (recordEvents: boolean) => {
  world = makeTempWorld("cvg-live-retain-")
  const frames = join(world.outside, "frames.jsonl")
  const frameCount = writeFrames(frames)
  host = await startHost({
    pluginDir: join(repoRoot, "host/fixtures/replay-plugin"),
    home: world.home,
    dataDir: world.hostData,
    env: { HOME: world.home, PATH: "/usr/bin:/bin" },
    isolation: "process",
    recordEvents,
  })
  let heard = 0
  host.events.subscribe((e) => {
    if (e.kind === "agent_event") heard++
  })
  const replay = async () => {
    const answer = await host!.call("replay", "prompt", { sessionId: "retain", text: frames })
    return Number(answer.run_id)
  }
  await replay()
  await replay()
  const before = heapAfterGc()
  let emitted = 0
  for (let i = 2; i < REPLAYS; i++) emitted += await replay()
  const after = heapAfterGc()
  return { growth: after - before, emitted, heard, frameCount }
}

describe("the isolated host over many live frames", () => {
  it("keeps nothing per frame: its heap after a full collection does not grow replay after replay", async () => {
    const { growth, emitted, heard, frameCount } = await growthOverReplays(false)
    expect(frameCount).toBeGreaterThan(7_000)
    expect(emitted).toBeGreaterThan(1_000)
    expect(heard).toBe((emitted * REPLAYS) / (REPLAYS - 2))
    // Four replays of ~7,800 frames: 1 MB is ~32 bytes a frame.
    expect(growth).toBeLessThan(1024 * 1024)
  })

  it("would catch a host that keeps every event (its own record, on)", async () => {
    const { growth, emitted } = await growthOverReplays(true)
    expect(growth).toBeGreaterThan(emitted * 100)
  })
})

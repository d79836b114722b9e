/**
 * The isolated host keeps nothing per live frame: the real host with the
 * replay fixture (host/testing/fixtures/replay-plugin) in its own plugin process,
 * the recorded CLI frames piped through `cat` again and again; after the
 * first replays (JIT, channel and lane buffers warm) the host's heap after a
 * full collection stays where it was, so no event, batch, chunk or lane
 * buffer of a frame outlives the frame. The same check with the host's own
 * event record on fails (it keeps every event), which is what it would catch.
 */
import { closeSync, existsSync, openSync, readdirSync, readFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { getHeapStatistics, setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { afterEach, describe, expect, it } from "vitest"
import { type Host, startHost } from "../core/host.ts"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const repoRoot = join(import.meta.dirname, "../..")
const IDS = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16})\b/g
const REPETITIONS = 12
/** Replays before the first reading: JIT, channel and lane buffers warm. */
const WARM_REPLAYS = 2
/** Replays read, each followed by a full collection. */
const READ_REPLAYS = 10
/** How many readings at each end are taken as one figure (their median). */
const END_READINGS = 4

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

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/**
 * The heap's growth over the later replays, and the events each replay
 * brought. One reading after a full collection swings from replay to replay
 * even with nothing kept, so the growth is the median of the last readings
 * less the median of the first.
 */
const growthOverReplays = async (recordEvents: boolean) => {
  world = makeTempWorld("cvg-live-retain-")
  const frames = join(world.outside, "frames.jsonl")
  const frameCount = writeFrames(frames)
  host = await startHost({
    pluginDir: join(repoRoot, "host/testing/fixtures/replay-plugin"),
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
  let emitted = 0
  for (let i = 0; i < WARM_REPLAYS; i++) emitted += await replay()
  const readings: number[] = []
  for (let i = 0; i < READ_REPLAYS; i++) {
    emitted += await replay()
    readings.push(heapAfterGc())
  }
  const growth = median(readings.slice(-END_READINGS)) - median(readings.slice(0, END_READINGS))
  // The replays between the two ends' middles.
  const perReplay = emitted / (WARM_REPLAYS + READ_REPLAYS)
  return { growth, perReplay, emitted, heard, frameCount }
}

describe("the isolated host over many live frames", () => {
  it("keeps nothing per frame: its heap after a full collection does not grow replay after replay", async () => {
    const { growth, emitted, heard, frameCount } = await growthOverReplays(false)
    expect(frameCount).toBeGreaterThan(7_000)
    expect(emitted).toBeGreaterThan(1_000)
    expect(heard).toBe(emitted)
    // Six replays of ~7,800 frames between the two ends: 1 MB is ~21 bytes a frame.
    expect(growth).toBeLessThan(1024 * 1024)
  }, 60_000)

  it("would catch a host that keeps every event (its own record, on)", async () => {
    const { growth, perReplay } = await growthOverReplays(true)
    // Six replays' events between the two ends, at least 100 bytes each.
    expect(growth).toBeGreaterThan((READ_REPLAYS - END_READINGS) * perReplay * 100)
  }, 60_000)
})

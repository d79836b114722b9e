/**
 * Large and bad answers between a real host and its real plugin process
 * (the IPC channel, sdk/channel.ts): an answer far larger than a pipe's
 * buffer arrives whole; a plugin process that dies while its answer is
 * still crossing fails that call clearly (nothing half-read is taken for a
 * message), and the next call starts a new process that answers whole; an
 * answer no serializer can carry fails only its own call; an answer with a
 * long array crosses in parts and arrives whole, and a part no serializer
 * can carry fails its call the same way.
 */
import { readFileSync } from "node:fs"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { PART_BYTES } from "../../sdk/channel.ts"
import type { Host } from "../core/host.ts"
import { startStreamHost } from "./stream-host.ts"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"

let world: TempWorld
let host: Host | undefined

beforeEach(async () => {
  world = makeTempWorld("cvg-answers-")
  host = await startStreamHost(world)
})
afterEach(async () => {
  await host?.close()
  host = undefined
  world.cleanup()
})

const answer = (h: Host, answerBytes: number) =>
  h.call("stream", "prompt", { sessionId: "s", text: JSON.stringify({ file: "", answerBytes }) })

/** Bytes `pid` has written so far (all its descriptors), from /proc. */
const written = (pid: number): number =>
  Number(/wchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, "utf8"))?.[1] ?? Number.NaN)

describe("answers, between real processes", () => {
  it("carries an answer far larger than a pipe's buffer whole", async () => {
    const size = 24 * 1024 * 1024
    const { run_id } = await answer(host!, size)
    expect(run_id.length).toBe(size)
    expect(run_id.startsWith(`${size}:xxx`)).toBe(true)
    expect(run_id.endsWith("xxx")).toBe(true)
    expect(host!.logger.entries.filter((e) => e.message.includes("malformed"))).toEqual([])
  })

  it("carries an answer with a long array in parts (sdk/channel.ts), whole and in order", async () => {
    // Six parts' worth: entries of 2 KB.
    const n = Math.ceil((6 * PART_BYTES) / 2048)
    const got = (await host!.call("stream", "prompt", {
      sessionId: "s",
      text: JSON.stringify({ file: "", answerEntries: n, entryBytes: 2048 }),
    })) as unknown as { run_id: string; entries: Array<{ i: number; text: string }> }
    expect(got.run_id).toBe("entries")
    expect(got.entries).toHaveLength(n)
    expect(got.entries.every((e, i) => e.i === i && e.text === `entry ${i}`.padEnd(2048, "."))).toBe(true)
    expect(host!.logger.entries.filter((e) => e.message.includes("malformed"))).toEqual([])
  })

  /** A prompt whose answer no serializer carries: its call fails saying so, and the same process answers the next. */
  const failsToCarry = async (params: Record<string, unknown>) => {
    const h = host!
    const pid = h.pluginProcess()!.pid
    const failed = await h
      .call("stream", "prompt", { sessionId: "s", text: JSON.stringify({ file: "", ...params }) })
      .then(
        () => "answered",
        (e: unknown) => String((e as { message?: unknown })?.message ?? e),
      )
    expect(failed).toMatch(/cannot carry/)
    expect((await answer(h, 1000)).run_id.length).toBe(1000)
    expect(h.pluginProcess()!.pid).toBe(pid)
  }

  it("a part the serializer cannot carry fails its call clearly; the process goes on", () =>
    failsToCarry({
      answerEntries: Math.ceil((6 * PART_BYTES) / 2048),
      entryBytes: 2048,
      badEntryAt: Math.ceil((3 * PART_BYTES) / 2048),
    }))

  it("an answer the serializer cannot carry fails its call clearly; the process goes on", () =>
    failsToCarry({ unserializable: true }))

  it("a log line the serializer cannot carry is reported dropped, and the call goes on", async () => {
    const h = host!
    const { run_id } = await h.call("stream", "prompt", {
      sessionId: "s",
      text: JSON.stringify({ file: "", unserializableLog: true }),
    })
    expect(run_id).toBe("logged")
    await vi.waitFor(
      () =>
        expect(
          h.logger.entries.some(
            (e) =>
              e.level === "warn" && /a note message the channel cannot carry .* was dropped/.test(e.message),
          ),
        ).toBe(true),
      { timeout: 5_000 },
    )
    expect(h.logger.entries.filter((e) => e.message.includes("bad arguments"))).toEqual([])
  })

  it("a plugin process that dies mid-answer: the call fails clearly, the next one restarts it", async () => {
    const h = host!
    const first = h.pluginProcess()!.pid
    const size = 256 * 1024 * 1024
    const before = written(first)
    const call = answer(h, size).then(
      () => "answered",
      (e: unknown) => String((e as { message?: unknown })?.message ?? e),
    )
    // Killed once the answer has started to cross, long before all of it could have.
    const until = Date.now() + 20_000
    while (written(first) - before < 4 * 1024 * 1024 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 2))
    const crossed = written(first) - before
    process.kill(first, "SIGKILL")
    expect(crossed).toBeGreaterThan(4 * 1024 * 1024)
    expect(crossed).toBeLessThan(size)
    const failed = await call
    expect(failed).toMatch(/plugin process .* exited/)
    // The call fails at the exit; the death is reported once its processes are ended, a moment later.
    await vi.waitFor(
      () =>
        expect(h.logger.entries.some((e) => e.level === "error" && e.message.includes("died"))).toBe(true),
      { timeout: 5_000 },
    )
    // The half frame it left is dropped with the process, never read as a batch.
    expect(h.logger.entries.filter((e) => e.message.includes("malformed"))).toEqual([])
    const { run_id } = await answer(h, 1024 * 1024)
    expect(run_id.length).toBe(1024 * 1024)
    expect(h.pluginProcess()!.pid).not.toBe(first)
  })
})

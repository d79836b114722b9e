/**
 * The byte lane between a real host and its real plugin process (fd 4 of
 * the child, lane.ts): a child's stdout far larger than any pipe's buffer
 * arrives whole; a plugin that stops reading holds the source back (the
 * bytes the source has read stay within a few credit windows, not the
 * file); and a plugin process killed while its lane is full is reported,
 * its processes ended, the host unharmed, and the next call streams again.
 * A plugin that asks for stdout lent and keeps views anyway sees them
 * overwritten (the lane reads into given-back buffers again); one that does
 * not lend keeps every chunk intact.
 */
import { randomBytes } from "node:crypto"
import { readdirSync, readFileSync, readlinkSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { STREAM_WINDOW } from "../../sdk/channel.ts"
import type { Host } from "../core/host.ts"
import { startStreamHost } from "./stream-host.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"

const SIZE = 48 * 1024 * 1024

let world: TempWorld
let host: Host | undefined
let file: string
let want: string

const fnv1a = (bytes: Uint8Array) => {
  let hash = 0x811c9dc5
  for (let i = 0; i < bytes.byteLength; i++) hash = Math.imul(hash ^ (bytes[i] as number), 0x01000193)
  return (hash >>> 0).toString(16)
}

beforeEach(async () => {
  world = makeTempWorld("cvg-lane-")
  const bytes = randomBytes(SIZE)
  file = join(world.outside, "big.bin")
  world.write(file, "")
  await import("node:fs/promises").then((fs) => fs.writeFile(file, bytes))
  want = `${SIZE}:${fnv1a(bytes)}`
  host = await startStreamHost(world)
})
afterEach(async () => {
  await host?.close()
  host = undefined
  world.cleanup()
})

const prompt = (h: Host, pauseMs = 0, keep?: "lent" | "fresh") =>
  h.call("stream", "prompt", { sessionId: "s", text: JSON.stringify({ file, pauseMs, keep }) })

/** How far `pid` has read the file (its descriptor's offset), or null before it opened it. */
const readOffset = (pid: number): number | null => {
  try {
    for (const fd of readdirSync(`/proc/${pid}/fd`))
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === file) {
        const pos = /pos:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8"))?.[1]
        return pos === undefined ? null : Number(pos)
      }
  } catch {}
  return null
}

const waitUntil = async (check: () => boolean, ms = 10_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 20))
  }
}

const catPid = async (h: Host) => {
  await waitUntil(() => h.processes().some((p) => p.command === "cat" && readOffset(p.pid) !== null))
  return h.processes().find((p) => p.command === "cat")!.pid
}

describe("the byte lane, between real processes", () => {
  it("carries a stream far larger than a pipe's buffer whole and in order", async () => {
    expect((await prompt(host!)).run_id).toBe(want)
  })

  it("a lent stdout's buffers are read into again (a kept view is overwritten); one not lent keeps every chunk", async () => {
    const [size, asRead, keptNotLent] = String((await prompt(host!, 0, "fresh")).run_id).split(":")
    expect(`${size}:${asRead}`).toBe(want)
    expect(keptNotLent).toBe(asRead)
    const [lentSize, lentAsRead, keptLent] = String((await prompt(host!, 0, "lent")).run_id).split(":")
    // Read right while pulled: only the views kept past their next pull changed.
    expect(`${lentSize}:${lentAsRead}`).toBe(want)
    expect(keptLent).not.toBe(lentAsRead)
  })

  it("holds the source back while the plugin does not read", async () => {
    const answer = prompt(host!, 1_500)
    const pid = await catPid(host!)
    await new Promise((r) => setTimeout(r, 1_000))
    const ahead = readOffset(pid) ?? 0
    // The plugin's window, the host's read-ahead, a pipe and two socket buffers: a few MiB, never the file.
    expect(ahead).toBeGreaterThan(0)
    expect(ahead).toBeLessThan(4 * STREAM_WINDOW + 4 * 1024 * 1024)
    expect((await answer).run_id).toBe(want)
  })

  it("a plugin process killed mid-stream: reported, its source ended, and the next call streams again", async () => {
    const h = host!
    const answer = prompt(h, 5_000).then(
      () => "answered",
      (e: unknown) => String((e as { message?: unknown })?.message ?? e),
    )
    const pid = await catPid(h)
    const plugin = h.pluginProcess()!
    process.kill(plugin.pid, "SIGKILL")
    expect(await answer).toMatch(/exited|died/)
    await waitUntil(() => !pidAlive(pid) && h.processes().length === 0)
    // Reported once its processes are ended (their sweeps done), which may be a moment after they leave the list.
    const reported = () => h.logger.entries.some((e) => e.level === "error" && e.message.includes("died"))
    await waitUntil(reported, 5_000).catch(() => undefined)
    expect(reported()).toBe(true)
    expect((await prompt(h)).run_id).toBe(want)
    expect(h.pluginProcess()!.pid).not.toBe(plugin.pid)
  })
})

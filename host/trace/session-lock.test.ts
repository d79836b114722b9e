/** The per-session lock of the plugin's hooks: one holder at a time, a dead holder's lock taken over, a bounded wait. */
import { mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { withLock } from "./session-lock.ts"

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const times = { waitMs: 2_000, staleMs: 60_000, pollMs: 5 }

describe("withLock", () => {
  it("runs one holder at a time, in a folder it makes, and frees the lock after a failure", async () => {
    dir = mkdtempSync(join(tmpdir(), "lock-"))
    const lock = join(dir, "trace", "s.json.lock")
    const order: string[] = []
    const hold = (name: string) =>
      withLock(
        lock,
        async () => {
          order.push(`${name} in`)
          await sleep(30)
          order.push(`${name} out`)
          return name
        },
        times,
      )
    expect(await Promise.all([hold("a"), hold("b")])).toEqual(["a", "b"])
    expect(order).toEqual(["a in", "a out", "b in", "b out"])
    await expect(withLock(lock, () => Promise.reject(new Error("boom")), times)).rejects.toThrow("boom")
    expect(await withLock(lock, async () => "free again", times)).toBe("free again")
  })

  it("takes over a lock older than the stale age, and gives up on a live one after the wait", async () => {
    dir = mkdtempSync(join(tmpdir(), "lock-"))
    const lock = join(dir, "s.lock")
    mkdirSync(lock)
    const old = new Date(Date.now() - 120_000)
    utimesSync(lock, old, old)
    expect(await withLock(lock, async () => "taken over", times)).toBe("taken over")
    mkdirSync(lock)
    expect(await withLock(lock, async () => "never", { ...times, waitMs: 50 })).toBeUndefined()
  })
})

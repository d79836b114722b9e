/**
 * The watchdog's rules on a fake clock: a ping left unanswered for the
 * deadline is reported once; answers (errors too) keep the child alive; a
 * stall of the host's own timers starts the wait again.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { watchChild } from "./watchdog.ts"

beforeEach(() => {
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
})

/** A peer whose pings are answered (or not) as the test says; counts them. */
const peer = (answer: "never" | "ok" | "error") => {
  let pings = 0
  return {
    pings: () => pings,
    request: (op: string) => {
      expect(op).toBe("ping")
      pings++
      if (answer === "never") return new Promise<never>(() => {})
      return answer === "ok" ? Promise.resolve(undefined) : Promise.reject(new Error("no operation ping"))
    },
  }
}

describe("watchChild", () => {
  it("reports a ping unanswered for the deadline, once, and pings no more", async () => {
    const child = peer("never")
    const silent: number[] = []
    watchChild(child, 4_000, (ms) => silent.push(ms))
    await vi.advanceTimersByTimeAsync(4_500)
    expect(silent).toEqual([])
    await vi.advanceTimersByTimeAsync(1_000)
    expect(silent).toEqual([4_000])
    await vi.advanceTimersByTimeAsync(20_000)
    expect(silent).toHaveLength(1)
    expect(child.pings()).toBe(1)
  })

  it("keeps a child that answers, an error being an answer too", async () => {
    for (const answer of ["ok", "error"] as const) {
      const child = peer(answer)
      const silent: number[] = []
      const watch = watchChild(child, 4_000, (ms) => silent.push(ms))
      await vi.advanceTimersByTimeAsync(60_000)
      expect(silent).toEqual([])
      // One ping a second (a quarter of the deadline).
      expect(child.pings()).toBe(60)
      watch.stop()
    }
  })

  it("starts the wait again after the host's own timers stalled", async () => {
    const child = peer("never")
    const silent: number[] = []
    watchChild(child, 4_000, (ms) => silent.push(ms))
    await vi.advanceTimersByTimeAsync(1_000) // the ping goes out
    // The host's loop blocked for 10 s: its timer fires late once, and the wait restarts there.
    vi.setSystemTime(Date.now() + 10_000)
    await vi.advanceTimersByTimeAsync(1_000)
    expect(silent).toEqual([])
    await vi.advanceTimersByTimeAsync(3_000)
    expect(silent).toEqual([])
    await vi.advanceTimersByTimeAsync(1_000)
    expect(silent).toEqual([4_000])
  })

  it("is quiet once stopped", async () => {
    const child = peer("never")
    const silent: number[] = []
    watchChild(child, 4_000, (ms) => silent.push(ms)).stop()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(silent).toEqual([])
    expect(child.pings()).toBe(0)
  })
})

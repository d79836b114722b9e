/**
 * The slice pool (slice-pool.ts): reads held to the read-ahead and let
 * through in turn, a buffer used again only once given back, the free
 * buffers it keeps bounded, and a wait that ends with its stream.
 */
import { describe, expect, it } from "vitest"
import { makeSlicePool } from "./slice-pool.ts"

const open = () => new AbortController().signal
/** Whether `p` has settled after the queued callbacks ran. */
const settled = async (p: Promise<unknown>) => {
  let done = false
  void p.then(() => (done = true))
  await new Promise((resolve) => setImmediate(resolve))
  return done
}

describe("the slice pool", () => {
  it("reserves within the read-ahead, lets one through when nothing is out, and the waiters in turn", async () => {
    const pool = makeSlicePool(100, 1000)
    expect(await pool.room(60, open())).toBe(true)
    const second = pool.room(60, open())
    const third = pool.room(30, open())
    // 60 + 60 would pass the read-ahead: the second waits, and the third behind it, though it would fit.
    expect(await settled(second)).toBe(false)
    expect(await settled(third)).toBe(false)
    pool.settle(60)
    expect(await second).toBe(true)
    expect(await third).toBe(true)
    expect(pool.stats().out).toBe(90)
    pool.settle(90)
    // Larger than the whole read-ahead: through when nothing is out, never held for ever.
    expect(await pool.room(500, open())).toBe(true)
    expect(pool.stats().out).toBe(500)
  })

  it("ends a wait, reserving nothing, when its stream is closed, and lets the next through", async () => {
    const pool = makeSlicePool(100, 1000)
    await pool.room(80, open())
    const closing = new AbortController()
    const closed = pool.room(50, closing.signal)
    const after = pool.room(10, open())
    closing.abort()
    expect(await closed).toBe(false)
    expect(await after).toBe(true)
    expect(pool.stats().out).toBe(90)
    expect(await pool.room(10, closing.signal)).toBe(false)
  })

  it("uses a buffer again only once it is given back, the smallest that fits, and keeps no more than it may", () => {
    const pool = makeSlicePool(1 << 20, 300)
    const a = pool.take(100)
    const b = pool.take(200)
    expect(pool.take(100)).not.toBe(a)
    pool.give(b, 200)
    pool.give(a, 100)
    expect(pool.stats().free).toBe(300)
    expect(pool.take(50)).toBe(a)
    expect(pool.take(150)).toBe(b)
    expect(pool.take(150)).not.toBe(b)
    // Past what it keeps: left to the collector.
    pool.give(new Uint8Array(400), 400)
    expect(pool.stats().free).toBe(0)
    pool.settle(0)
    expect(pool.stats().free).toBe(0)
  })
})

import { describe, expect, it } from "vitest"
import { joinBytes } from "./bytes.ts"

describe("joinBytes", () => {
  it("joins parts in order, with or without their total", () => {
    const parts = [Uint8Array.of(1, 2), Uint8Array.of(), Uint8Array.of(3), Uint8Array.of(4, 5, 6)]
    expect([...joinBytes(parts)]).toEqual([1, 2, 3, 4, 5, 6])
    expect([...joinBytes(parts, 6)]).toEqual([1, 2, 3, 4, 5, 6])
  })

  it("gives the only part back as it is, and an empty array for none", () => {
    const only = Uint8Array.of(7, 8)
    expect(joinBytes([only])).toBe(only)
    expect(joinBytes([]).length).toBe(0)
  })
})

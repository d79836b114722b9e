/**
 * The mapper bench's orders: every permutation, and for a stream of
 * repetitions cut into the same chunks each time, every chunk position
 * meeting every order (else one side always runs first on the same chunk
 * and the ratio leans).
 */
import { describe, expect, it } from "vitest"
import { permutations, repetitionOrder } from "./mapper.ts"

describe("bench orders", () => {
  it("lists every order of the sides once", () => {
    for (const n of [1, 2, 3, 4]) {
      const orders = permutations(n)
      const keys = new Set(orders.map((o) => o.join(",")))
      expect(keys.size).toBe(orders.length)
      expect(orders.length).toBe([1, 1, 2, 6, 24][n])
      for (const o of orders) expect([...o].sort()).toEqual(Array.from({ length: n }, (_, i) => i))
    }
  })

  it("gives every chunk position of a repetition every order, whatever the chunks a repetition", () => {
    for (const sides of [2, 3, 4]) {
      const orders = permutations(sides)
      for (const chunksPerRep of [1, 2, 3, 4, 5, 6, 7]) {
        for (let chunk = 0; chunk < chunksPerRep; chunk++) {
          const seen = new Map<string, number>()
          const first = new Map<number, number>()
          for (let rep = 0; rep < orders.length; rep++) {
            const order = repetitionOrder(orders, rep, chunk)
            seen.set(order.join(","), (seen.get(order.join(",")) ?? 0) + 1)
            first.set(order[0] as number, (first.get(order[0] as number) ?? 0) + 1)
          }
          expect(seen.size).toBe(orders.length)
          // So each side runs first on this chunk equally often (the floor too).
          for (let side = 0; side < sides; side++) expect(first.get(side)).toBe(orders.length / sides)
        }
      }
    }
  })
})

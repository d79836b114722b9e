/**
 * The compiled checks (wire/check.ts) answer exactly as Zod does: every
 * schema a frame is checked with, on every recorded frame and on those
 * frames mutated (a field retyped, removed, a huge string, an odd number,
 * nesting), and on arbitrary JSON values; plus the edges of Zod's rules
 * that JSON can reach (a key missing against one read off the prototype,
 * non-finite numbers, `__proto__` keys).
 */
import fc from "fast-check"
import { z } from "zod"
import { describe, expect, it } from "vitest"
import { applyMutations, mutationArb } from "../testkit/fuzz-kit.ts"
import { recordings } from "../testkit/recordings.ts"
import { compileCheck } from "./check.ts"
import { frameSchemasChecked } from "../wire.ts"

const schemas = frameSchemasChecked()
const lines = recordings().flatMap((r) => r.lines)
const sizes = { maxDepth: 200, maxString: 2_000 }
const structural = mutationArb(sizes).filter((m) => !["bytes", "cr", "cut", "glue"].includes(m.op))

/** The schemas whose compiled answer differs from Zod's on `value`, by index. */
const disagreements = (value: unknown): number[] =>
  schemas.flatMap((schema, i) => (compileCheck(schema)(value) === schema.safeParse(value).success ? [] : [i]))

describe("compiled checks against Zod", () => {
  it("agree on every recorded frame", () => {
    const bad = lines.filter((line) => disagreements(JSON.parse(line)).length > 0)
    expect(bad).toEqual([])
  })

  it("agree on mutated recorded frames", () => {
    fc.assert(
      fc.property(fc.nat(), fc.array(structural, { minLength: 1, maxLength: 4 }), (at, mutations) => {
        const text = new TextDecoder().decode(
          applyMutations(lines[at % lines.length] as string, mutations, []).bytes,
        )
        let value: unknown
        try {
          value = JSON.parse(text)
        } catch {
          return
        }
        expect(disagreements(value)).toEqual([])
      }),
      { numRuns: 1_500 },
    )
  })

  it("agree on arbitrary JSON values", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        expect(disagreements(value)).toEqual([])
      }),
      { numRuns: 500 },
    )
  })

  it("agree on the edges of Zod's rules", () => {
    const shapes = [
      z.looseObject({ a: z.unknown() }),
      z.looseObject({ toString: z.unknown() }),
      z.looseObject({ toString: z.string().nullish() }),
      z.looseObject({ a: z.string().nullish(), b: z.number().nullish() }),
      z.looseObject({ a: z.unknown().optional() }),
      z.looseObject({ a: z.literal("x") }),
      z.record(z.string(), z.number()),
      z.union([z.array(z.looseObject({ type: z.string() })), z.string()]),
    ]
    const values = [
      {},
      { a: undefined },
      { a: null },
      { a: "x", b: 1 },
      { a: "y" },
      { toString: "s" },
      JSON.parse('{"__proto__":{"a":"x"}}'),
      { b: Number.POSITIVE_INFINITY },
      { b: Number.NaN },
      { "1": 2, b: -0 },
      [],
      [{ type: "t" }],
      "text",
      null,
      7,
    ]
    for (const schema of shapes)
      for (const value of values)
        expect([schema, value, compileCheck(schema)(value)]).toEqual([
          schema,
          value,
          schema.safeParse(value).success,
        ])
  })
})

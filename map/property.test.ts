/**
 * The mapper is total, as a property (fast-check) over the recorded frames
 * of testdata/: a recording is played whole through the session's own line
 * pipeline (testkit/fuzz-kit.ts `feedLine`: LineSplitter, readLine,
 * decodeLine, the mapper) with one of its lines mutated (nesting past any
 * stack, wrong types, huge strings, non-finite numbers, removed fields, raw
 * bytes, CR, cut lines, glued frames). Nothing may throw, every event must
 * have the protocol's types and serialise, a line is bad at most once, a
 * line that must be bad says so, and the lines after it map as if it had
 * not been there. Bounded: a few hundred cases; `npm run fuzz` runs millions.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { applyMutations, feedLine, mutationArb, newTally } from "../testkit/fuzz-kit.ts"
import { recordings } from "../testkit/recordings.ts"
import { makeMapper } from "../map.ts"
import { conforms, decodeValue, StreamEvent } from "../wire.ts"

const recs = recordings()
const allLines = recs.flatMap((r) => r.lines)
const encoder = new TextEncoder()
const sizes = { maxDepth: 3_000, maxString: 200_000 }

describe("the mapper over mutated recordings", () => {
  it("every recorded line reads clean (the baseline the property leans on)", () => {
    const tally = newTally()
    for (const rec of recs) {
      const mapper = makeMapper({ sessionId: "s" })
      for (const line of rec.lines) feedLine(tally, mapper, encoder.encode(line), undefined)
    }
    expect(tally.examples).toEqual([])
    expect(tally.badLines).toBe(0)
    expect(tally.frames).toBe(allLines.length)
  })

  it("never throws, never emits a malformed event, says each bad line once", () => {
    fc.assert(
      fc.property(
        fc.nat(),
        fc.nat(),
        fc.array(mutationArb(sizes), { minLength: 1, maxLength: 3 }),
        (which, at, mutations) => {
          const rec = recs[which % recs.length] as (typeof recs)[number]
          const index = at % rec.lines.length
          const mapper = makeMapper({ sessionId: "s" })
          const tally = newTally()
          rec.lines.forEach((line, i) => {
            if (i !== index) feedLine(tally, mapper, encoder.encode(line), undefined)
            else {
              const mutated = applyMutations(line, mutations, allLines)
              feedLine(tally, mapper, mutated.bytes, mutated)
            }
          })
          expect(tally.examples).toEqual([])
          expect(tally.escaped + tally.malformed + tally.silentBadLines + tally.cleanLinesFlagged).toBe(0)
        },
      ),
      { numRuns: 250 },
    )
  })

  it("the hand-written stream_event check accepts nothing its Zod schema refuses", () => {
    const streamLines = allLines.filter((l) => l.startsWith('{"type":"stream_event"'))
    const structural = mutationArb(sizes).filter(
      (m) => !["bytes", "cr", "cut", "glue", "deep"].includes(m.op),
    )
    fc.assert(
      fc.property(fc.nat(), fc.array(structural, { minLength: 1, maxLength: 3 }), (at, mutations) => {
        const line = streamLines[at % streamLines.length] as string
        const text = new TextDecoder().decode(applyMutations(line, mutations, []).bytes)
        let value: unknown
        try {
          value = JSON.parse(text)
        } catch {
          return
        }
        const decoded = decodeValue(structuredClone(value), false)
        if (
          decoded.kind === "frame" &&
          decoded.problem === undefined &&
          decoded.frame.type === "stream_event"
        )
          expect(conforms(StreamEvent, value)).toBe(true)
      }),
      { numRuns: 500 },
    )
  })
})

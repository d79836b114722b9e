/**
 * The durable record of inputs written but not yet reported
 * (session/undelivered.ts): what it keeps, for how long, and what a fresh
 * process makes of what an earlier one left.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { brokerContext } from "../sdk/context.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import {
  makeUndeliveredRecord,
  takeUndelivered,
  UNDELIVERED_CAP,
  undeliveredKey,
  unknownAfterRestart,
} from "./undelivered.ts"

const withBroker = <A>(
  storage: Record<string, unknown>,
  body: (b: ReturnType<typeof makeMemoryBroker>) => Effect.Effect<A, never, never>,
) => {
  const broker = makeMemoryBroker({ storage })
  return Effect.runPromise(body(broker))
}

describe("the undelivered record", () => {
  it("holds an input from before its write until its report, then leaves no key behind", () =>
    withBroker({}, (broker) =>
      Effect.gen(function* () {
        const record = makeUndeliveredRecord("s1")
        yield* record.add({ uuid: "u1", delivery_id: "d1", run_id: "r1" })
        yield* record.add({ uuid: "u2", run_id: "r1" })
        expect(broker.storage.get(undeliveredKey("s1"))).toEqual([
          { uuid: "u1", delivery_id: "d1", run_id: "r1" },
          { uuid: "u2", run_id: "r1" },
        ])
        yield* record.forget("u1")
        yield* record.settled
        expect(broker.storage.get(undeliveredKey("s1"))).toEqual([{ uuid: "u2", run_id: "r1" }])
        yield* record.forget("u2")
        yield* record.settled
        expect(broker.storage.has(undeliveredKey("s1"))).toBe(false)
        expect(undeliveredKey("s1").startsWith("cache:")).toBe(false)
      }).pipe(Effect.provideContext(brokerContext(broker.api))),
    ))

  it("is bounded per session: the oldest inputs go first", () =>
    withBroker({}, (broker) =>
      Effect.gen(function* () {
        const record = makeUndeliveredRecord("s1")
        for (let i = 0; i < UNDELIVERED_CAP + 5; i++) yield* record.add({ uuid: `u${i}`, run_id: "r" })
        const kept = broker.storage.get(undeliveredKey("s1")) as Array<{ uuid: string }>
        expect(kept).toHaveLength(UNDELIVERED_CAP)
        expect(kept[0]?.uuid).toBe("u5")
      }).pipe(Effect.provideContext(brokerContext(broker.api))),
    ))

  it("a fresh process takes what an earlier one left, once, and each becomes one unknown report", () =>
    withBroker(
      {
        [undeliveredKey("s1")]: [{ uuid: "u1", delivery_id: "d1", run_id: "r1" }, { uuid: 7 }, "junk"],
        [undeliveredKey("s2")]: [{ uuid: "other", run_id: "r9" }],
      },
      (broker) =>
        Effect.gen(function* () {
          const left = yield* takeUndelivered("s1")
          expect(left).toEqual([{ uuid: "u1", delivery_id: "d1", run_id: "r1" }])
          expect(yield* takeUndelivered("s1")).toEqual([])
          expect(broker.storage.has(undeliveredKey("s2"))).toBe(true)
          expect(unknownAfterRestart("s1", left[0]!)).toMatchObject({
            type: "input_delivery",
            session_id: "s1",
            run_id: "r1",
            input_uuid: "u1",
            delivery_id: "d1",
            state: "unknown",
          })
        }).pipe(Effect.provideContext(brokerContext(broker.api))),
    ))

  it("an unreadable value is dropped, not kept for ever", () =>
    withBroker({ [undeliveredKey("s1")]: { not: "a list" } }, (broker) =>
      Effect.gen(function* () {
        expect(yield* takeUndelivered("s1")).toEqual([])
        expect(broker.storage.has(undeliveredKey("s1"))).toBe(false)
      }).pipe(Effect.provideContext(brokerContext(broker.api))),
    ))
})

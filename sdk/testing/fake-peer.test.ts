/**
 * FakePeer's `drained`: it completes only once the reading side has handled
 * every line written, however slow its handler is.
 */
import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { lines } from "../lines.ts"
import { makeFakePeer } from "./fake-peer.ts"

/** A reader like the plugin's: one line at a time, each handled before the next is asked for. */
const slowReader = (handled: string[], delayMs: number) =>
  Effect.gen(function* () {
    const peer = yield* makeFakePeer
    const handle = yield* peer.spawn([], {})
    const proc = yield* peer.nextProcess
    const reader = yield* lines(handle.stdout).pipe(
      Stream.runForEach((line) =>
        Effect.sleep(delayMs).pipe(Effect.andThen(Effect.sync(() => void handled.push(line)))),
      ),
      Effect.forkChild,
    )
    return { proc, reader }
  })

describe("FakePeer drained", () => {
  it("waits until the reader has handled every line written so far", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const handled: string[] = []
        const { proc, reader } = yield* slowReader(handled, 20)
        yield* proc.send({ type: "a" })
        yield* proc.send({ type: "b" })
        yield* proc.sendRaw("not json")
        // Nothing is handled yet: a test that did not wait would see too little.
        expect(handled.length).toBeLessThan(3)
        yield* proc.drained
        expect(handled).toEqual(['{"type":"a"}', '{"type":"b"}', "not json"])
        // Later writes are waited for too.
        yield* proc.send({ type: "c" })
        yield* proc.drained
        expect(handled).toHaveLength(4)
        yield* Fiber.interrupt(reader)
      }).pipe(Effect.scoped),
    ))

  it("completes at once when nothing is waiting to be read", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const handled: string[] = []
        const { proc } = yield* slowReader(handled, 0)
        yield* proc.drained
        yield* proc.send({ type: "a" })
        yield* proc.drained
        yield* proc.drained
        expect(handled).toHaveLength(1)
      }).pipe(Effect.scoped),
    ))

  it("keeps waiting while nobody reads the process", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const peer = yield* makeFakePeer
        yield* peer.spawn([], {})
        const proc = yield* peer.nextProcess
        yield* proc.send({ type: "a" })
        const error = yield* Effect.flip(
          proc.drained.pipe(
            Effect.timeoutOrElse({ duration: 50, orElse: () => Effect.fail(new Error("still waiting")) }),
          ),
        )
        expect(error.message).toBe("still waiting")
      }).pipe(Effect.scoped),
    ))
})

/**
 * Interrupting a caller that waits on a control request (product notes,
 * "Tests": control-request timeout and interruption): the wait ends at once,
 * not at the request's timeout; the answer that comes later matches nothing
 * and harms nothing; the channel goes on correlating the next request.
 */
import { Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeControlChannel } from "./control.ts"

describe("a pending control request", () => {
  it("ends at once when its caller is interrupted; its late answer is dropped and the channel goes on", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const written: Array<{ request_id: string; request: { subtype: string } }> = []
        const channel = makeControlChannel({
          send: (frame) =>
            Effect.sync(() => {
              written.push(frame as (typeof written)[number])
            }),
          timeoutMs: 60_000,
        })
        const waiting = yield* Effect.forkChild(channel.request("get_settings"))
        yield* Effect.yieldNow
        expect(written).toHaveLength(1)
        const started = Date.now()
        yield* Fiber.interrupt(waiting)
        const exit = yield* Fiber.await(waiting)
        expect(Exit.hasInterrupts(exit)).toBe(true)
        expect(Date.now() - started).toBeLessThan(1_000)
        const first = written[0]?.request_id as string
        // The answer to the abandoned request arrives after all.
        yield* channel.onResponse({
          type: "control_response",
          response: { subtype: "success", request_id: first, response: { applied: {} } },
        } as never)
        const next = yield* Effect.forkChild(channel.request("set_model", { model: "claude-sonnet-5-5" }))
        yield* Effect.yieldNow
        const second = written[1]?.request_id as string
        expect(second).not.toBe(first)
        yield* channel.onResponse({
          type: "control_response",
          response: { subtype: "success", request_id: second, response: { model: "claude-sonnet-5-5" } },
        } as never)
        expect(yield* Fiber.join(next)).toEqual({ model: "claude-sonnet-5-5" })
      }),
    ))
})

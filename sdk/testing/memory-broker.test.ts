/**
 * The in-memory broker lends a process's stdout as the plugin process's
 * lane does when asked (`stdout: { lend: true }`): a view kept past its pull
 * is overwritten, so a reader that keeps views fails in unit tests too; a
 * stdout not asked lent keeps every chunk.
 */
import { Effect, Fiber, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { makeFakePeer } from "./fake-peer.ts"
import { makeMemoryBroker } from "./memory-broker.ts"

const decoder = new TextDecoder()

/** Every stdout chunk the reader got, kept as views (no copy), beside their text when pulled. */
const keptViews = (lend: boolean) =>
  Effect.gen(function* () {
    const peer = yield* makeFakePeer
    const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
    const handle = yield* broker.api.process.spawn("claude", [], lend ? { stdout: { lend: true } } : {})
    const proc = yield* peer.nextProcess
    const views: Uint8Array[] = []
    const whenPulled: string[] = []
    const reading = yield* handle.stdout.pipe(
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          views.push(chunk)
          whenPulled.push(decoder.decode(chunk))
        }),
      ),
      Effect.forkChild,
    )
    yield* proc.sendRaw("first line, kept as a view")
    yield* proc.drained
    yield* proc.sendRaw("second")
    yield* proc.drained
    yield* proc.exit(0)
    yield* Fiber.join(reading)
    return { now: views.map((v) => decoder.decode(v)), whenPulled }
  }).pipe(Effect.scoped, Effect.runPromise)

describe("memory broker: lent stdout", () => {
  it("overwrites a kept view at the next pull when stdout is lent", async () => {
    const { now, whenPulled } = await keptViews(true)
    expect(whenPulled.join("")).toBe("first line, kept as a view\nsecond\n")
    expect(now.join("")).not.toBe(whenPulled.join(""))
  })

  it("keeps every chunk intact when stdout is not lent", async () => {
    const { now, whenPulled } = await keptViews(false)
    expect(whenPulled.join("")).toBe("first line, kept as a view\nsecond\n")
    expect(now).toEqual(whenPulled)
  })
})

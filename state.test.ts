import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { brokerContext } from "./sdk/context.ts"
import type { Broker } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import {
  cliIdFor,
  forgetForks,
  keepSent,
  moveFork,
  pendingForkOf,
  rememberFork,
  loadSessionState,
  rememberOptions,
  rememberSent,
  saveSessionState,
  sentRecordOf,
  setCliAlias,
} from "./state.ts"

const setup = (storage: Record<string, unknown> = {}) => {
  const broker = makeMemoryBroker({ storage })
  const run = <A>(effect: Effect.Effect<A, never, Broker>) =>
    Effect.runPromise(Effect.provideContext(effect, brokerContext(broker.api)))
  return { broker, run }
}

/** The broker's storage with every read's answer held a moment, as a storage across a channel answers. */
const slowStorage = (storage: Record<string, unknown> = {}) => {
  const broker = makeMemoryBroker({ storage })
  const api = {
    ...broker.api,
    storage: {
      ...broker.api.storage,
      // The value is read, then answered a moment later: another change may land in between.
      get: (key: string) => broker.api.storage.get(key).pipe(Effect.tap(() => Effect.sleep("5 millis"))),
    },
  }
  const run = <A>(effect: Effect.Effect<A, never, Broker>) =>
    Effect.runPromise(Effect.provideContext(effect, brokerContext(api)))
  return { broker, run }
}

describe("session state", () => {
  it("two changes racing (a prompt's sent entry, an option change) both stay", async () => {
    const { run, broker } = slowStorage()
    await run(
      Effect.all(
        [
          rememberSent("h1", "a", "uuid-a"),
          rememberOptions("h1", { model: "claude-opus-5-5" }),
          rememberSent("h1", "b", "uuid-b"),
          setCliAlias("h2", "c2"),
          keepSent("h2", new Set(), 0),
          rememberOptions("h2", { effort: "high" }),
        ],
        { concurrency: "unbounded" },
      ),
    )
    expect(broker.storage.get("session:h1")).toEqual({
      sent: { a: "uuid-a", b: "uuid-b" },
      options: { model: "claude-opus-5-5" },
    })
    expect(broker.storage.get("session:h2")).toEqual({ cli: "c2", sent: {}, options: { effort: "high" } })
  })

  it("is fresh when nothing is stored", async () => {
    const { run } = setup()
    expect(await run(loadSessionState("h1"))).toEqual({ sent: {} })
    expect(await run(cliIdFor("h1"))).toBe("h1")
  })

  it("round-trips under session:<host id>", async () => {
    const { run, broker } = setup()
    await run(saveSessionState("h1", { cli: "c1", sent: { item1: 0 } }))
    expect(broker.storage.get("session:h1")).toEqual({ cli: "c1", sent: { item1: 0 } })
    expect(await run(loadSessionState("h1"))).toEqual({ cli: "c1", sent: { item1: 0 } })
    expect(await run(cliIdFor("h1"))).toBe("c1")
  })

  it("remembers each sent prompt's record uuid and keeps only what a rewind kept", async () => {
    const { run, broker } = setup()
    await run(rememberSent("h1", "a", "uuid-a"))
    await run(rememberSent("h1", "b", "uuid-b"))
    await run(rememberSent("h1", "c", "uuid-c"))
    expect(broker.storage.get("session:h1")).toEqual({ sent: { a: "uuid-a", b: "uuid-b", c: "uuid-c" } })
    expect(await run(sentRecordOf("h1", "b"))).toBe("uuid-b")
    expect(await run(sentRecordOf("h1", "z"))).toBeUndefined()
    await run(keepSent("h1", new Set(["uuid-a"]), 1))
    expect(await run(loadSessionState("h1"))).toEqual({ sent: { a: "uuid-a" } })
  })

  it("still reads the prompt indexes older versions stored, and keeps those before the rewind", async () => {
    const { run } = setup({ "session:h1": { sent: { old0: 0, old1: 1, old2: 2 } } })
    expect(await run(sentRecordOf("h1", "old1"))).toBe(1)
    await run(rememberSent("h1", "new", "uuid-n"))
    await run(keepSent("h1", new Set(["uuid-n"]), 2))
    expect(await run(loadSessionState("h1"))).toEqual({ sent: { old0: 0, old1: 1, new: "uuid-n" } })
  })

  it("a negative index or an empty uuid is unreadable state", async () => {
    const { run } = setup({ "session:h1": { sent: { a: -1, b: "" } } })
    expect(await run(loadSessionState("h1"))).toEqual({ sent: {} })
  })

  it("an alias starts a new prompt map", async () => {
    const { run } = setup({ "session:h1": { sent: { a: 0 } } })
    await run(setCliAlias("h1", "c2"))
    expect(await run(loadSessionState("h1"))).toEqual({ cli: "c2", sent: {} })
  })

  it("reads a corrupt value as fresh state and warns", async () => {
    const { run, broker } = setup({ "session:h1": { cli: 7, sent: "nope" } })
    expect(await run(loadSessionState("h1"))).toEqual({ sent: {} })
    expect(broker.logs.some((l) => l.level === "warn" && l.message.includes("h1"))).toBe(true)
  })

  it("accepts a legacy value without a sent map", async () => {
    const { run } = setup({ "session:h1": { cli: "c9" } })
    expect(await run(loadSessionState("h1"))).toEqual({ cli: "c9", sent: {} })
  })
})

describe("forks not yet written", () => {
  it("keep the origin's prompts as the fork's, move with a rewind, and go once written", async () => {
    const { run, broker } = setup({ "session:f1": { sent: { own: "uuid-own" } } })
    const fork = { origin: "o1", cwd: "/ws", title: "alpha", forkedAt: "2026-12-07T00:00:00.000Z", size: 10 }
    await run(rememberFork("f1", fork, { i1: "uuid-1", i2: "uuid-2", own: "other" }))
    expect(broker.storage.get("session:f1")).toEqual({
      sent: { i1: "uuid-1", i2: "uuid-2", own: "uuid-own" },
    })
    expect(await run(pendingForkOf("f1"))).toEqual(fork)
    await run(moveFork("f1", "m1"))
    expect(await run(pendingForkOf("f1"))).toEqual({ ...fork, at: "m1" })
    await run(forgetForks(["f1"]))
    expect(await run(pendingForkOf("f1"))).toBeUndefined()
  })
})

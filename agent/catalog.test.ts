/**
 * The catalog on its own (agent/catalog.ts) against a scripted `claude`
 * (FakePeer): what a session's answer fills, when a probe runs, and that a
 * failed probe is tried again rather than remembered.
 */
import { Effect, Exit, Fiber, Scope } from "effect"
import { describe, expect, it } from "vitest"
import { makeCatalog } from "./catalog.ts"
import { makeCliDetector } from "../cli-version.ts"
import { brokerContext } from "../sdk/context.ts"
import { type FakePeer, makeFakePeer } from "../sdk/testing/fake-peer.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { decodeLine } from "../wire.ts"

const setup = Effect.gen(function* () {
  const peer: FakePeer = yield* makeFakePeer
  const broker = makeMemoryBroker({ home: "/home/user", spawn: { claude: peer.spawn } })
  const services = brokerContext(broker.api)
  const scope = Scope.makeUnsafe()
  let changes = 0
  const catalog = makeCatalog({
    agentId: "claude",
    api: broker.api,
    account: { id: "claude", name: "Claude" },
    cli: makeCliDetector(),
    scope,
    decodeLine: decodeLine as Parameters<typeof makeCatalog>[0]["decodeLine"],
    timeouts: { controlMs: 2_000 },
    changed: Effect.sync(() => {
      changes++
    }),
    provide: (effect) => Effect.provideContext(effect, services),
  })
  return { peer, catalog, services, scope, changes: () => changes }
})

const run = <A>(body: (world: Effect.Success<typeof setup>) => Effect.Effect<A, unknown, never>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const world = yield* setup
      try {
        return yield* body(world)
      } finally {
        yield* Scope.close(world.scope, Exit.void)
      }
    }) as Effect.Effect<A, unknown>,
  )

const OPUS = { value: "opus", displayName: "Opus", description: "", resolvedModel: "claude-opus-5-5" }
const SONNET = { value: "sonnet", displayName: "Sonnet", description: "", resolvedModel: "claude-sonnet-5-5" }

describe("catalog", () => {
  it("takes the first session's answer, tells the host once, and keeps it over later answers", () =>
    run(({ catalog, changes }) =>
      Effect.gen(function* () {
        yield* catalog.adopt({ models: [SONNET], commands: [{ name: "review", description: "Review" }] })
        expect(catalog.commands()).toEqual([{ name: "review", description: "Review" }])
        yield* catalog.adopt({ models: [OPUS], commands: [] })
        expect(catalog.commands()).toEqual([{ name: "review", description: "Review" }])
        expect(changes()).toBe(1)
        // Known already: warming starts no probe.
        yield* catalog.warm
      }),
    ))

  it("a failed probe is not remembered: the next call probes again", () =>
    run(({ catalog, peer, services }) =>
      Effect.gen(function* () {
        const first = yield* catalog.probe.pipe(
          Effect.provideContext(services),
          Effect.exit,
          Effect.forkChild,
        )
        const dying = yield* peer.nextProcess
        yield* dying.expectControl("initialize")
        yield* dying.exit(1)
        expect(Exit.isFailure(yield* Fiber.join(first))).toBe(true)
        expect(catalog.commands()).toEqual([])

        const second = yield* catalog.usage.pipe(Effect.provideContext(services), Effect.forkChild)
        const probe = yield* peer.nextProcess
        const init = yield* probe.expectControl("initialize")
        yield* probe.respond(init.request_id, { commands: [{ name: "review" }] })
        const usage = yield* probe.expectControl("get_usage")
        yield* probe.respond(usage.request_id, {
          rate_limits: { five_hour: { utilization: 50, resets_at: "2026-01-01T05:00:00Z" } },
        })
        const limits = yield* Fiber.join(second)
        expect(limits.windows[0]).toMatchObject({ id: "five_hour", used: 0.5 })
        expect(catalog.limits()).toEqual(limits)
        expect(catalog.commands()).toEqual([{ name: "review" }])
        expect(peer.processes).toHaveLength(2)
      }),
    ))

  it("without any limits known, get_usage answers empty windows", () =>
    run(({ catalog, peer, services }) =>
      Effect.gen(function* () {
        const fiber = yield* catalog.usage.pipe(Effect.provideContext(services), Effect.forkChild)
        const probe = yield* peer.nextProcess
        const init = yield* probe.expectControl("initialize")
        yield* probe.respond(init.request_id, {})
        const usage = yield* probe.expectControl("get_usage")
        yield* probe.respond(usage.request_id, { rate_limits: null })
        const limits = yield* Fiber.join(fiber)
        expect(limits.windows).toEqual([])
        expect(limits.reset_credits).toEqual([])
      }),
    ))
})

/**
 * The session's parts against a scripted `claude` (FakePeer) and the real
 * wire decoder: typed control answers, the one close path of the control
 * channel, unread frame kinds counted and logged once, and hooks handed the
 * owner's record. Waits use FakePeer's `drained`, never sleeps.
 */
import { readFileSync } from "node:fs"
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { ProcessExited } from "../errors.ts"
import { launchArgs } from "./launch.ts"
import { makeMapper } from "../map.ts"
import { brokerContext } from "../sdk/context.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { type FakePeer, type FakeProcess, makeFakePeer } from "../sdk/testing/fake-peer.ts"
import { type MemoryBroker, makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { type LiveSession, makeOwnedSession, type SessionHooks } from "../session.ts"
import { makeControlChannel } from "./control.ts"
import { unknownKindOf } from "./unknown-frames.ts"
import { decodeLine } from "../wire.ts"

const HOST_ID = "host-parts"
const CLI_ID = "22222222-2222-4222-8222-222222222222"

/** The owner's record in these tests: what each hook was handed. */
interface Owned {
  readonly live: LiveSession
  readonly handed: Array<{ readonly hook: string; readonly record: Owned }>
}

interface Harness {
  readonly peer: FakePeer
  readonly broker: MemoryBroker
  readonly owned: Owned
  readonly events: AgentEvent[]
  readonly proc: FakeProcess
}

const run = <A>(
  body: (h: Harness) => Effect.Effect<A, unknown, Broker>,
  options: { readonly initAnswer?: Record<string, unknown>; readonly hooks?: SessionHooks<Owned> } = {},
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const peer = yield* makeFakePeer
      const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
      const context = brokerContext(broker.api)
      const note = (hook: string, record: Owned) =>
        Effect.sync(() => void record.handed.push({ hook, record }))
      const owned = yield* makeOwnedSession<Owned>(
        {
          hostId: HOST_ID,
          cwd: "/work/ws",
          tools: [],
          start: { kind: "new", cliId: CLI_ID },
          prepareLaunch: (start, record) =>
            note("prepareLaunch", record).pipe(
              Effect.as({ args: launchArgs({ start, workspace: "/work/ws", optionFlags: [] }), env: {} }),
            ),
          makeMapper: () => makeMapper({ sessionId: HOST_ID }),
          // No decodeLine: the session reads frames with wire.ts's own decoder.
          emit: (event) => Effect.sync(() => void broker.events.push(event)),
          hooks: options.hooks ?? {
            initialized: (_answer, record) => note("initialized", record),
            launched: (record) => note("launched", record),
            sent: (_input, record) => note("sent", record),
            runEnded: (record) => note("runEnded", record),
          },
        },
        (live) => ({ live, handed: [] }),
      ).pipe(Effect.provideContext(context))
      const boot = yield* owned.live.ensureProcess.pipe(Effect.provideContext(context), Effect.forkChild)
      const proc = yield* peer.nextProcess
      const init = yield* proc.expectControl("initialize")
      yield* proc.respond(init.request_id, options.initAnswer ?? { models: [], commands: [] })
      yield* Fiber.join(boot).pipe(Effect.orDie)
      return yield* body({ peer, broker, owned, events: broker.events, proc }).pipe(
        Effect.provideContext(context),
      )
    }).pipe(Effect.scoped) as Effect.Effect<A, unknown, never>,
  )

describe("typed control requests", () => {
  it("get_usage answers its decoded type", () =>
    run(({ proc, owned }) =>
      Effect.gen(function* () {
        const fiber = yield* owned.live.request("get_usage").pipe(Effect.forkChild)
        const req = yield* proc.expectControl("get_usage")
        yield* proc.respond(req.request_id, {
          rate_limits_available: true,
          rate_limits: { five_hour: { utilization: 42, resets_at: "2026-12-01T12:00:00Z" } },
        })
        const answer = yield* Fiber.join(fiber)
        // Typed: these fields are the schema's, read without a cast.
        expect(answer?.rate_limits_available).toBe(true)
        expect(answer?.rate_limits?.five_hour?.utilization).toBe(42)
      }),
    ))

  it("an answer of the wrong shape fails with ControlAnswerInvalid, and the session goes on", () =>
    run(({ proc, owned }) =>
      Effect.gen(function* () {
        const bad = yield* owned.live.request("get_usage").pipe(Effect.flip, Effect.forkChild)
        const req = yield* proc.expectControl("get_usage")
        yield* proc.respond(req.request_id, { rate_limits_available: "yes" })
        const error = yield* Fiber.join(bad)
        expect(error._tag).toBe("ControlAnswerInvalid")
        expect(error.message).toContain("get_usage")
        expect(error.message).toContain("rate_limits_available")
        const good = yield* owned.live.request("set_model", { model: "sonnet" }).pipe(Effect.forkChild)
        const next = yield* proc.expectControl("set_model")
        yield* proc.respond(next.request_id, { model: "claude-sonnet-5-5" })
        expect((yield* Fiber.join(good))?.model).toBe("claude-sonnet-5-5")
      }),
    ))

  it("an answer with no body decodes as an empty answer", () =>
    run(({ proc, owned }) =>
      Effect.gen(function* () {
        const fiber = yield* owned.live
          .request("apply_flag_settings", { settings: {} })
          .pipe(Effect.forkChild)
        const req = yield* proc.expectControl("apply_flag_settings")
        yield* proc.respond(req.request_id)
        expect(yield* Fiber.join(fiber)).toEqual({})
      }),
    ))

  it("an initialize answer of the wrong shape is one warning: the process stays, the hook is not called", () =>
    run(
      ({ broker, owned }) =>
        Effect.sync(() => {
          expect(owned.live.isRunning()).toBe(true)
          const warnings = broker.logs.filter((l) => l.level === "warn" && l.message.includes("initialize"))
          expect(warnings).toHaveLength(1)
          expect(owned.handed.map((h) => h.hook)).not.toContain("initialized")
        }),
      { initAnswer: { models: "none" } },
    ))
})

describe("the control channel's one close path", () => {
  it("fails every waiter, and every later request, with the process's exit", async () => {
    const written: unknown[] = []
    const channel = makeControlChannel({
      send: (frame) => Effect.sync(() => void written.push(frame)),
      timeoutMs: 5_000,
    })
    const exit = new ProcessExited({ code: 1, signal: null, stderr: "boom" })
    const errors = await Effect.runPromise(
      Effect.gen(function* () {
        const a = yield* channel.request("get_settings").pipe(Effect.flip, Effect.forkChild)
        const b = yield* channel.request("interrupt").pipe(Effect.flip, Effect.forkChild)
        yield* Effect.yieldNow
        yield* channel.failAll(exit)
        const later = yield* channel.request("stop_task", { task_id: "t" }).pipe(Effect.flip)
        return [yield* Fiber.join(a), yield* Fiber.join(b), later]
      }),
    )
    expect(errors.map((e) => e._tag)).toEqual(["ProcessExited", "ProcessExited", "ProcessExited"])
    expect(errors.every((e) => e === exit)).toBe(true)
    // The later request was never written.
    expect(written).toHaveLength(2)
  })
})

describe("frames this plugin does not read", () => {
  it("names a kind by its type, or system/<subtype>, and known frames not at all", () => {
    const kinds = [
      '{"type":"command_lifecycle","state":"queued"}',
      '{"type":"system","subtype":"brand_new"}',
      '{"type":"system","subtype":"init","model":"m","session_id":"s"}',
      '{"type":"result","subtype":"success"}',
    ].map((line) => {
      const decoded = decodeLine(line)
      return decoded.kind === "frame" ? unknownKindOf(decoded.frame) : decoded.kind
    })
    expect(kinds).toEqual(["command_lifecycle", "system/brand_new", undefined, undefined])
  })

  it("counts every frame of an unread kind and logs each kind once", () =>
    run(({ proc, owned, broker }) =>
      Effect.gen(function* () {
        for (let i = 0; i < 3; i++) yield* proc.send({ type: "command_lifecycle", state: "queued" })
        yield* proc.send({ type: "system", subtype: "brand_new", detail: 1 })
        yield* proc.send({ type: "system", subtype: "brand_new", detail: 2 })
        yield* proc.send({ type: "system", subtype: "status", status: "requesting" })
        yield* proc.drained
        expect(Object.fromEntries(owned.live.unknownFrames())).toEqual({
          command_lifecycle: 3,
          "system/brand_new": 2,
        })
        const logged = broker.logs.filter((l) => l.message.includes("does not read"))
        expect(logged.map((l) => l.message.match(/\(([^)]+)\)/)?.[1])).toEqual([
          "command_lifecycle",
          "system/brand_new",
        ])
        // The session goes on: a request still gets its answer.
        const fiber = yield* owned.live.request("get_settings").pipe(Effect.forkChild)
        const req = yield* proc.expectControl("get_settings")
        yield* proc.respond(req.request_id, { applied: { ultracode: false } })
        expect((yield* Fiber.join(fiber))?.applied?.ultracode).toBe(false)
      }),
    ))
})

describe("a control request that fails its schema", () => {
  it("is one diagnostic and is answered with an error, so the CLI is not left waiting", () =>
    run(({ proc, owned, broker }) =>
      Effect.gen(function* () {
        // can_use_tool without tool_name: wire.ts refuses the frame.
        const answer = yield* proc.request({ subtype: "can_use_tool", input: { command: "ls" } }, 1_000)
        expect(answer.subtype).toBe("error")
        expect(answer.error).toContain("can_use_tool")
        expect(answer.error).toContain("tool_name")
        expect(broker.logs.filter((l) => l.message.includes("unreadable line"))).toHaveLength(1)
        // The session goes on.
        const fiber = yield* owned.live.request("get_settings").pipe(Effect.forkChild)
        const req = yield* proc.expectControl("get_settings")
        yield* proc.respond(req.request_id, {})
        expect(yield* Fiber.join(fiber)).toEqual({})
      }),
    ))
})

describe("a recording of the real CLI", () => {
  it("logs 2.1.332's command_lifecycle frames once, however many arrive", () =>
    run(({ proc, owned, broker }) =>
      Effect.gen(function* () {
        const lines = readFileSync(new URL("../testdata/text_thinking/stdout.jsonl", import.meta.url), "utf8")
          .split("\n")
          .filter((line) => line.trim() !== "")
        const expected = lines.filter((line) => line.includes('"type":"command_lifecycle"')).length
        expect(expected).toBeGreaterThan(1)
        for (const line of lines) yield* proc.sendRaw(line)
        yield* proc.drained
        expect(owned.live.unknownFrames().get("command_lifecycle")).toBe(expected)
        expect([...owned.live.unknownFrames().keys()]).toEqual(["command_lifecycle"])
        expect(broker.logs.filter((l) => l.message.includes("does not read"))).toHaveLength(1)
      }),
    ))
})

describe("hooks handed the owner's record", () => {
  it("prepareLaunch, initialized, launched, sent and runEnded each get the record makeOwnedSession returned", () =>
    run(({ proc, owned }) =>
      Effect.gen(function* () {
        yield* owned.live.prompt({ sessionId: HOST_ID, text: "hello", itemId: "item-1" })
        const user = yield* proc.expect((f) => f.type === "user")
        yield* proc.send({
          type: "result",
          subtype: "success",
          is_error: false,
          user_message_uuids: [user.uuid],
        })
        yield* proc.drained
        // runEnded and launched run on their own fibers: let them take their turn.
        for (let turn = 0; turn < 100 && !owned.handed.some((h) => h.hook === "runEnded"); turn++)
          yield* Effect.yieldNow
        const hooks = owned.handed.map((h) => h.hook)
        expect(hooks).toEqual(
          expect.arrayContaining(["prepareLaunch", "initialized", "launched", "sent", "runEnded"]),
        )
        expect(owned.handed.every((h) => h.record === owned)).toBe(true)
      }),
    ))
})

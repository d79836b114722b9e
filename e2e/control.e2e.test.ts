/**
 * The control answers table (wire.ts `ControlAnswers`) against the REAL CLI:
 * a session made with makeSession over the host's own broker sends every
 * subtype the plugin uses, and each answer must decode with its schema (a
 * CLI that changed an answer's shape fails here, not silently in a catalog).
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { makeBroker } from "../host/broker/broker.ts"
import { loadManifest } from "../host/core/manifest.ts"
import { launchArgs } from "../session/launch.ts"
import { makeMapper } from "../map.ts"
import { brokerContext } from "../sdk/context.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import { makeSession } from "../session.ts"
import { cliEnv, makeSandbox } from "../testkit/cli.ts"
import { startModelServer, text } from "../testkit/model-server.ts"
import { CLI_CHANGES, cliUnderTest, repoRoot } from "./harness.ts"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

describe("control requests against the real CLI", () => {
  it("every subtype the plugin sends answers a shape its schema accepts", async () => {
    const sandbox = makeSandbox("cvg-e2e-control-")
    cleanups.push(async () => sandbox.cleanup())
    const server = await startModelServer({ main: [[text("Hi.")]] })
    cleanups.push(() => server.close())
    mkdirSync(join(sandbox.root, "data"), { recursive: true })
    const broker = await makeBroker(await loadManifest(repoRoot), {
      home: sandbox.home,
      hostDataDir: join(sandbox.root, "data"),
      env: cliEnv(sandbox, server),
      workspaces: [sandbox.ws],
      killGraceMs: 1_000,
    })
    cleanups.push(() => broker.close())
    const scope = Effect.runSync(Scope.make())
    cleanups.push(() => Effect.runPromise(Scope.close(scope, Exit.void)))
    const context = brokerContext(broker.api)
    const run = <A, E>(effect: Effect.Effect<A, E, never>) => Effect.runPromise(effect)

    const session = await run(
      makeSession({
        hostId: "control-e2e",
        cwd: sandbox.ws,
        tools: [],
        start: { kind: "new", cliId: crypto.randomUUID() },
        prepareLaunch: (start) =>
          Effect.succeed({
            args: launchArgs({ start, workspace: sandbox.ws, optionFlags: ["--permission-mode", "default"] }),
            env: { CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" },
          }),
        makeMapper: () => makeMapper({ sessionId: "control-e2e" }),
        emit: () => Effect.void,
      }).pipe(Scope.provide(scope), Effect.provideContext(context)),
    )
    const ask = <A, E>(effect: Effect.Effect<A, E, Broker>) =>
      run(effect.pipe(Effect.provideContext(context)))
    await ask(session.ensureProcess)
    expect(broker.processes.live()).toHaveLength(1)

    const usage = await ask(session.request("get_usage"))
    expect(usage?.rate_limits ?? null).toBeNull() // an API key has no meters
    const settings = await ask(session.request("get_settings"))
    expect(settings?.effective).toBeDefined()
    const switched = await ask(session.request("set_model", { model: "sonnet" }))
    if (cliUnderTest.atLeast(CLI_CHANGES.setModelNamesModel))
      expect(switched?.model).toBe("claude-sonnet-5-5")
    else expect(switched?.model).toBeUndefined()
    expect((await ask(session.request("set_permission_mode", { mode: "acceptEdits" })))?.mode).toBe(
      "acceptEdits",
    )
    expect(await ask(session.request("apply_flag_settings", { settings: { effortLevel: "high" } }))).toEqual(
      {},
    )
    expect(await ask(session.request("interrupt"))).toMatchObject({ still_queued: expect.anything() })
    // No such task: a refusal is an answer too; only a shape the schema rejects fails here.
    const stop = await ask(Effect.exit(session.request("stop_task", { task_id: "no-such-task" })))
    if (Exit.isFailure(stop)) expect(String(stop.cause)).toContain("ControlRefused")
    expect(session.unknownFrames().size).toBe(0)
    await ask(session.close)
    // Closing the session ends its process: nothing outlives it.
    expect(broker.processes.live()).toEqual([])
  })
})

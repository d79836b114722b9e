/**
 * What the host needs to recover safely, end to end: the plugin inside
 * host/, the real CLI 2.1.332, the scripted model. Pickup evidence for
 * steers (mid-turn, at the turn's end, into a CLI that is then killed), and
 * a usage-limit rejection a few seconds before its reset followed by the
 * front ends' one automatic continue (host/core/auto-continue.ts).
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { makeAutoContinue } from "../host/core/auto-continue.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { rateLimited, text, toolUse } from "../testkit/model-server.ts"
import { GATEWAY_AUTH_TOKEN } from "../testkit/scenarios.ts"
import { rejectedBeforeTheReset } from "./scripts.ts"
import {
  closeWorldsAfterEach,
  createSession,
  eventually,
  ofType,
  promptAndWait,
  startWorld,
  type World,
  CLI_CHANGES,
  cliUnderTest,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const deliveries = (w: World, sessionId: string, uuid: string | undefined) =>
  ofType(w.events(sessionId), "input_delivery").filter((e) => e.input_uuid === uuid)

/**
 * A session whose second turn waits in Bash for an approval nobody gives
 * (it cannot end, nor take the steer, before the kill the test makes),
 * with a steer (delivery d2) written into it; `resumed` is the messages the
 * model got in the request after, as JSON.
 */
const steerWaitingBehindBash = async () => {
  let resumed = ""
  world = await startWorld({
    main: [
      [text("First.")],
      [toolUse("Bash", { command: "tail -f /dev/null", description: "Wait" })],
      (req) => {
        resumed = JSON.stringify(req.messages)
        return [text("back")]
      },
    ],
  })
  const w = world
  const { session_id } = await createSession(w)
  // A first turn, so the conversation has a file to resume (a kill before it exists is issue 13's).
  await promptAndWait(w, session_id, "hello")
  const run = await w.host.call(w.agentId, "prompt", {
    sessionId: session_id,
    text: "sleep now",
    deliveryId: "d1",
  })
  await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
  const steer = await w.host.call(w.agentId, "prompt", {
    sessionId: session_id,
    text: "QUEUED-STEER",
    deliveryId: "d2",
  })
  expect(steer.steered).toBe(true)
  return { w, session_id, run, steer, resumed: () => resumed }
}

/** An offline claude.ai login: the credentials file and profile the CLI keeps (seen on 2.1.332). */
const writeClaudeAiLogin = (home: string) => {
  mkdirSync(join(home, ".claude"), { recursive: true })
  writeFileSync(
    join(home, ".claude", ".credentials.json"),
    JSON.stringify({
      claudeAiOauth: {
        accessToken: "sk-ant-oat01-testkit",
        refreshToken: "sk-ant-ort01-testkit",
        expiresAt: Date.now() + 86_400_000,
        scopes: ["user:inference", "user:profile", "user:sessions:claude_code"],
        subscriptionType: "max",
        rateLimitTier: "default_claude_max_20x",
      },
    }),
  )
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      hasCompletedOnboarding: true,
      oauthAccount: {
        accountUuid: "11111111-1111-4111-8111-111111111111",
        emailAddress: "dev@example.com",
        organizationUuid: "22222222-2222-4222-8222-222222222222",
        organizationName: "Example Org",
      },
    }),
  )
}

describe("recovery facts against the real CLI", () => {
  it("a steer picked up mid-turn: the host sees the pickup, then the result attributed to both inputs", async () => {
    world = await startWorld({
      main: [[toolUse("Bash", { command: "sleep 2", description: "Wait" })], [text("STEERED")]],
    })
    const w = world
    const { session_id } = await createSession(w)
    const first = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "wait",
      deliveryId: "d1",
    })
    await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    const steer = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "Also say STEERED",
      deliveryId: "d2",
    })
    expect(steer.steered).toBe(true)
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id)
    expect(ended.delivery_ids).toEqual(["d1", "d2"])
    const events = w.events(session_id)
    const picked = deliveries(w, session_id, steer.input_uuid)
    expect(picked).toEqual([
      expect.objectContaining({
        state: "picked_up",
        delivery_id: "d2",
        run_id: first.run_id,
        // 2.1.332 names the steer in the reply's request (`status requesting`); 2.1.282 only in the result.
        evidence: cliUnderTest.atLeast(CLI_CHANGES.steerNamedInRequest) ? "reply" : "result",
      }),
    ])
    expect(events.indexOf(picked[0] as AgentEvent)).toBeLessThan(events.indexOf(ended))
    expect(deliveries(w, session_id, first.input_uuid)).toMatchObject([{ state: "picked_up" }])
  })

  it("a steer sent as the turn ends is consumed in one continuation or reported not picked up, never both", async () => {
    world = await startWorld({
      main: [[text("First answer, a little long so the steer lands while it streams.")], [text("Second.")]],
    })
    const w = world
    const { session_id } = await createSession(w)
    const first = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "one",
      deliveryId: "d1",
    })
    await w.waitFor(session_id, "TextDelta")
    const steer = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "two",
      deliveryId: "d2",
    })
    expect(await eventually(() => deliveries(w, session_id, steer.input_uuid).length > 0, 30_000)).toBe(true)
    const [report] = deliveries(w, session_id, steer.input_uuid)
    if (report?.state === "picked_up") {
      const runId = report.run_id
      const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === runId)
      expect(ended.delivery_ids).toContain("d2")
      expect(ofType(w.events(session_id), "RunStarted").filter((e) => e.run_id === runId)).toHaveLength(1)
    } else expect(report?.state).toBe("not_picked_up")
    await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id)
    await new Promise((r) => setTimeout(r, 1_000))
    expect(deliveries(w, session_id, steer.input_uuid)).toHaveLength(1)
    const runEnds = ofType(w.events(session_id), "RunEnded")
    expect(new Set(runEnds.map((e) => e.run_id)).size).toBe(runEnds.length)
  })

  it("a CLI killed with an input written but not picked up reports it unknown and never replays it", async () => {
    const { w, session_id, run, steer, resumed } = await steerWaitingBehindBash()
    const [claude] = w.host.processes().filter((p) => p.command === "claude")
    process.kill(claude!.pid, "SIGKILL")
    await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    const next = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "are you back?" })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === next.run_id)
    expect(ended.outcome).toBe("Completed")
    expect(deliveries(w, session_id, steer.input_uuid)).toEqual([
      expect.objectContaining({ state: "unknown", delivery_id: "d2" }),
    ])
    expect(ended.delivery_ids ?? []).not.toContain("d2")
    // Written once, to the killed process: a stored record may carry it, the plugin never sends it again.
    expect(resumed()).toContain("are you back?")
    expect(resumed().split("QUEUED-STEER").length - 1).toBeLessThanOrEqual(1)
  })

  it("the plugin process killed with a steer written but not picked up: after the restart and resume, unknown for it and nothing else", async () => {
    const { w, session_id, run, steer, resumed } = await steerWaitingBehindBash()
    // Kept where the plugin's successor finds it (plugin storage, not a cache).
    expect(w.host.storage.snapshot()[`undelivered:${session_id}`]).toEqual([
      { uuid: steer.input_uuid, delivery_id: "d2", run_id: run.run_id },
    ])
    const before = ofType(w.events(session_id), "input_delivery").length
    const plugin = w.host.pluginProcess()!
    process.kill(plugin.pid, "SIGKILL")
    await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    await plugin.exited
    await w.host.call(w.agentId, "resumeSession", { sessionId: session_id, cwd: w.sandbox.ws })
    expect(w.host.pluginProcess()?.pid).not.toBe(plugin.pid)
    const next = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "are you back?" })
    expect((await w.waitFor(session_id, "RunEnded", (e) => e.run_id === next.run_id)).outcome).toBe(
      "Completed",
    )
    const after = ofType(w.events(session_id), "input_delivery").slice(before)
    expect(after).toEqual([
      expect.objectContaining({
        input_uuid: steer.input_uuid,
        delivery_id: "d2",
        run_id: run.run_id,
        state: "unknown",
        reason: expect.stringContaining("restarted"),
      }),
      expect.objectContaining({ input_uuid: next.input_uuid, state: "picked_up" }),
    ])
    // Forgetting is a background write (the event stream never waits for storage).
    await vi.waitFor(() => expect(w.host.storage.snapshot()[`undelivered:${session_id}`]).toBeUndefined(), {
      timeout: 10_000,
    })
    // Reported, never replayed: the killed process may have stored it once, the plugin never sends it again.
    expect(resumed().split("QUEUED-STEER").length - 1).toBeLessThanOrEqual(1)
  })

  it("a claude.ai account's rejection a few seconds before its reset: one automatic continue, and the chat goes on", async () => {
    world = await startWorld(rejectedBeforeTheReset(), {
      env: { CLAUDE_CODE_MAX_RETRIES: "0" },
    })
    const w = world
    writeClaudeAiLogin(w.sandbox.home)
    w.env.ANTHROPIC_API_KEY = undefined
    const sent: string[] = []
    const auto = makeAutoContinue({
      mode: "identified",
      send: async (sessionId, text) => {
        sent.push(text)
        await w.host.call(w.agentId, "prompt", { sessionId, text })
      },
    })
    const unsubscribe = w.host.events.subscribe((e) => {
      if (e.kind === "agent_event") auto.onEvent(e.event as AgentEvent)
    })
    try {
      const { session_id } = await createSession(w)
      const first = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "hello" })
      const blocked = await w.waitFor(session_id, "usage_blocked", (e) => e.run_id === first.run_id)
      expect(blocked).toMatchObject({
        window: "five_hour",
        reason: "window",
        window_usage: { id: "five_hour", used: 1 },
      })
      expect(Date.parse(blocked.resets_at ?? "") - Date.now()).toBeLessThan(6_000)
      await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id)
      const identity = await w.waitFor(
        session_id,
        "recovery_identity",
        (e) => e.run_id === first.run_id,
        60_000,
      )
      expect(identity.identity).toMatchObject({
        identified: true,
        email: "dev@example.com",
        organization_id: "22222222-2222-4222-8222-222222222222",
      })
      expect(auto.status(session_id)?.state).toBe("scheduled")
      const continued = await w.waitFor(
        session_id,
        "RunEnded",
        (e) => e.run_id !== first.run_id && e.outcome === "Completed",
        60_000,
      )
      expect(sent).toEqual(["continue"])
      const said = ofType(w.events(session_id), "TextDelta").filter((e) => e.run_id === continued.run_id)
      expect(said.map((e) => e.text).join("")).toBe("Continued after the reset.")
      const next = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "more" })
      expect((await w.waitFor(session_id, "RunEnded", (e) => e.run_id === next.run_id)).outcome).toBe(
        "Completed",
      )
      expect(sent).toEqual(["continue"])
    } finally {
      unsubscribe()
      auto.dispose()
    }
  })

  it("a gateway credential's rejection is held: its account is not identified", async () => {
    world = await startWorld(
      { main: [() => rateLimited({ retryAfter: 1, resetInSeconds: 2 }), [text("never sent")]] },
      { env: { CLAUDE_CODE_MAX_RETRIES: "0", ANTHROPIC_AUTH_TOKEN: GATEWAY_AUTH_TOKEN } },
    )
    const w = world
    w.env.ANTHROPIC_API_KEY = undefined
    const sent: string[] = []
    const auto = makeAutoContinue({ mode: "identified", send: (_s, text) => void sent.push(text) })
    const unsubscribe = w.host.events.subscribe((e) => {
      if (e.kind === "agent_event") auto.onEvent(e.event as AgentEvent)
    })
    try {
      const { session_id } = await createSession(w)
      const first = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "hello" })
      const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id, 60_000)
      if (!cliUnderTest.atLeast(CLI_CHANGES.rateLimitEventForApiKey)) {
        // An older CLI writes no rate_limit_event: the run fails with the API's error, nothing is blocked or continued.
        expect(ended.outcome).toBe("Failed")
        expect(ofType(w.events(session_id), "usage_blocked")).toEqual([])
        await new Promise((r) => setTimeout(r, 3_500))
        expect(sent).toEqual([])
        return
      }
      expect(ofType(w.events(session_id), "usage_blocked")).toMatchObject([{ run_id: first.run_id }])
      const identity = await w.waitFor(
        session_id,
        "recovery_identity",
        (e) => e.run_id === first.run_id,
        60_000,
      )
      expect(identity.identity).toMatchObject({
        identified: false,
        reason: expect.stringContaining("external token"),
      })
      expect(deliveries(w, session_id, first.input_uuid)).toMatchObject([{ state: "not_picked_up" }])
      await new Promise((r) => setTimeout(r, 3_500))
      expect(sent).toEqual([])
      expect(auto.status(session_id)).toMatchObject({ state: "held" })
    } finally {
      unsubscribe()
      auto.dispose()
    }
  })
})

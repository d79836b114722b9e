/**
 * Continue at the reset through the ACP server (host/acp/auto-continue.ts),
 * end to end: the SDK's client side, the agent over the plugin in host/, the
 * real CLI and the scripted model answering a gateway credential with a
 * usage-limit rejection a few seconds before its reset (the terminal side's
 * shapes, e2e/recovery.e2e.test.ts). With `--auto-continue any` the agent
 * shows the time left, sends one "continue" itself at the reset, and the
 * client sees that turn as any other; the recovery facts ride in
 * `_meta.claudeCode`.
 */
import { describe, expect, it } from "vitest"
import { makeAcpAgent } from "../host/acp/agent.ts"
import { mcpEnvSetter } from "../host/acp/mcp.ts"
import { initialize, type TestClient } from "../host/acp/testing.ts"
import { GATEWAY_AUTH_TOKEN } from "../testkit/scenarios.ts"
import {
  CLI_CHANGES,
  cliUnderTest,
  closeWorldsAfterEach,
  eventually,
  startWorld,
  type World,
} from "./harness.ts"
import { closeClientsAfterEach, connectClient } from "./acp-clients.ts"
import { rejectedBeforeTheReset } from "./scripts.ts"

let world: World | undefined
closeWorldsAfterEach()
closeClientsAfterEach()

const metaOf = (u: { _meta?: unknown }) =>
  (u._meta as { claudeCode?: Record<string, unknown> } | undefined)?.claudeCode ?? {}

const lines = (c: TestClient, sessionId: string, kind: "agent_message_chunk" | "user_message_chunk") =>
  c.of(sessionId, kind).map((u) => (u.content.type === "text" ? u.content.text.trim() : ""))

describe("continue at the reset, through the ACP server", () => {
  it("a gateway credential's rejection a few seconds ahead: the time left, one continue at the reset, the chat goes on", async () => {
    world = await startWorld(rejectedBeforeTheReset(), {
      env: { CLAUDE_CODE_MAX_RETRIES: "0", ANTHROPIC_AUTH_TOKEN: GATEWAY_AUTH_TOKEN },
    })
    const w = world
    w.env.ANTHROPIC_API_KEY = undefined
    const agent = makeAcpAgent({
      host: w.host,
      agentId: w.agentId,
      setMcpConfig: mcpEnvSetter(w.env),
      autoContinue: "any",
    })
    const c = connectClient(agent.app)
    await initialize(c)
    const { sessionId } = await c.agent.request("session/new", { cwd: w.sandbox.ws, mcpServers: [] })
    const first = await c.agent
      .request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] })
      .catch((error: unknown) => error)
    if (!cliUnderTest.atLeast(CLI_CHANGES.rateLimitEventForApiKey)) {
      // An older CLI writes no rate_limit_event: the run fails with the API's error; nothing is continued.
      expect(first).toBeInstanceOf(Error)
      await new Promise((r) => setTimeout(r, 5_000))
      expect(lines(c, sessionId, "user_message_chunk")).toEqual([])
      return
    }
    const scheduled = await c.waitFor(
      (r) =>
        r.update.sessionUpdate === "agent_message_chunk" &&
        r.update.content.type === "text" &&
        r.update.content.text.includes("Continuing automatically at"),
      60_000,
    )
    expect(scheduled.update).toMatchObject({ content: { text: expect.stringMatching(/> ⏲ .*\(in \d s\)/) } })
    expect(await eventually(() => c.text(sessionId).includes("Continued after the reset."), 60_000)).toBe(
      true,
    )
    expect(lines(c, sessionId, "user_message_chunk")).toEqual(["continue"])
    const infos = c.of(sessionId, "session_info_update").map(metaOf)
    expect(infos).toEqual(
      expect.arrayContaining([
        { inputDelivery: expect.objectContaining({ state: "not_picked_up" }) },
        {
          recoveryIdentity: expect.objectContaining({
            identified: false,
            reason: expect.stringContaining("external token"),
          }),
        },
        { inputDelivery: expect.objectContaining({ state: "picked_up" }) },
      ]),
    )
    const next = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "more" }],
    })
    expect(next.stopReason).toBe("end_turn")
    // The prompt's answer names what its delivery report names.
    const named = metaOf(next)
    expect(named).toEqual({ deliveryId: expect.any(String), inputUuid: expect.any(String) })
    expect(c.of(sessionId, "session_info_update").map(metaOf)).toContainEqual({
      inputDelivery: expect.objectContaining({
        inputUuid: named.inputUuid,
        deliveryId: named.deliveryId,
        state: "picked_up",
      }),
    })
    expect(lines(c, sessionId, "agent_message_chunk").at(-1)).toBe("And on.")
    expect(lines(c, sessionId, "user_message_chunk")).toEqual(["continue"])
    expect(w.server.requests.filter((r) => r.conversation === "main")).toHaveLength(3)
  }, 120_000)
})

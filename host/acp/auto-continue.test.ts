/**
 * Continue at the reset in the ACP server (host/acp/auto-continue.ts): the
 * notices the client reads, the one "continue" the agent sends itself, and
 * what holds or cancels it. Events are shaped as the plugin emits them at a
 * usage-limit rejection (e2e/recovery.e2e.test.ts has the real CLI's).
 */
import { afterEach, describe, expect, it } from "vitest"
import type { AgentEvent, RecoveryIdentity } from "../../sdk/protocol.ts"
import { type AcpAutoContinue, makeAcpAutoContinue } from "./auto-continue.ts"
import { AcpSession } from "./session.ts"
import type { Update } from "./updates.ts"

const SID = "s1"
const IDENTIFIED: RecoveryIdentity = {
  identified: true,
  key: "k",
  email: "dev@example.com",
  organization_id: "org",
  config_dir: "/home/u/.claude",
}

let auto: AcpAutoContinue | undefined
afterEach(() => auto?.dispose())

const world = (mode: "identified" | "any") => {
  const updates: Update[] = []
  const calls: Array<{ method: string; params: Record<string, unknown> }> = []
  const session = new AcpSession(
    SID,
    "/ws",
    {},
    async (u) => void updates.push(u),
    () => {},
  )
  auto = makeAcpAutoContinue({
    mode,
    host: {
      call: (async (_agent: string, method: string, params: Record<string, unknown>) => {
        calls.push({ method, params })
        return { run_id: "run-2", steered: false }
      }) as never,
    },
    agentId: "claude",
    session: (id) => (id === SID ? session : undefined),
    log: () => {},
    marginMs: 0,
  })
  const texts = () =>
    updates.flatMap((u) =>
      (u.sessionUpdate === "agent_message_chunk" || u.sessionUpdate === "user_message_chunk") &&
      u.content.type === "text"
        ? [`${u.sessionUpdate === "user_message_chunk" ? "user: " : ""}${u.content.text.trim()}`]
        : [],
    )
  return { updates, calls, session, texts, auto }
}

const blockedRun = (a: AcpAutoContinue, identity: RecoveryIdentity, inMs: number) => {
  const events: AgentEvent[] = [
    {
      type: "usage_blocked",
      session_id: SID,
      run_id: "run-1",
      window: "five_hour",
      resets_at: new Date(Date.now() + inMs).toISOString(),
      reason: "window",
      message: "You've hit your limit",
    },
    { type: "RunEnded", session_id: SID, run_id: "run-1", outcome: "Completed" },
    { type: "recovery_identity", session_id: SID, run_id: "run-1", identity },
  ]
  for (const e of events) a.onEvent(e)
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

describe("continue at the reset, in the ACP server", () => {
  it("shows the time left as a quoted line, then sends one continue as the agent, shown as the user's line", async () => {
    const w = world("identified")
    blockedRun(w.auto, IDENTIFIED, 80)
    await w.session.flushed()
    expect(w.texts()).toEqual([expect.stringMatching(/^> ⏲ Continuing automatically at .* \(in 1 s\)\.$/)])
    expect(w.calls).toEqual([])
    await sleep(200)
    await w.session.flushed()
    expect(w.calls).toEqual([
      { method: "prompt", params: { sessionId: SID, text: "continue", deliveryId: expect.any(String) } },
    ])
    expect(w.texts().slice(1)).toEqual(["> ⏲ The usage window reopened: continuing.", "user: continue"])
    await sleep(100)
    expect(w.calls).toHaveLength(1)
  })

  it("a prompt the client sends meanwhile cancels it, said in the chat", async () => {
    const w = world("identified")
    blockedRun(w.auto, IDENTIFIED, 80)
    w.auto.sent(SID)
    await sleep(200)
    await w.session.flushed()
    expect(w.calls).toEqual([])
    expect(w.texts().at(-1)).toBe("> ⏲ Automatic continue cancelled: something else was sent.")
  })

  it("an unidentified account is held unless the person chose any", async () => {
    const held = world("identified")
    blockedRun(held.auto, { identified: false, reason: "an external token (ANTHROPIC_AUTH_TOKEN)" }, 50)
    await sleep(150)
    await held.session.flushed()
    expect(held.calls).toEqual([])
    expect(held.texts()).toEqual([
      "> ⏲ Not continuing automatically: the account is not identified (an external token (ANTHROPIC_AUTH_TOKEN)).",
    ])
    held.auto.dispose()
    const any = world("any")
    blockedRun(any.auto, { identified: false, reason: "an external token (ANTHROPIC_AUTH_TOKEN)" }, 50)
    await sleep(150)
    expect(any.calls.map((c) => c.params.text)).toEqual(["continue"])
  })

  it("a closed session gets nothing", async () => {
    const w = world("any")
    const other = makeAcpAutoContinue({
      mode: "any",
      host: { call: (async () => w.calls.push({ method: "prompt", params: {} })) as never },
      agentId: "claude",
      session: () => undefined,
      log: () => {},
      marginMs: 0,
    })
    blockedRun(other, IDENTIFIED, 30)
    await sleep(120)
    other.dispose()
    expect(w.calls).toEqual([])
  })
})

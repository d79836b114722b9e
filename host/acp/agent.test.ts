/**
 * The ACP agent over a scripted host (a real event hub, `call` answered by the
 * test): what the end-to-end tests cannot time exactly — a request the CLI
 * withdraws, a cancel the run never answers, a start that fails.
 */
import { describe, expect, it } from "vitest"
import type { AgentEvent, AgentInfo } from "../../sdk/protocol.ts"
import { makeEventHub } from "../events.ts"
import type { Host } from "../host.ts"
import { makeAcpAgent } from "./agent.ts"
import { initialize, makeTestClient } from "./testing.ts"

const INFO: AgentInfo = {
  id: "claude",
  name: "Claude",
  status: "Ready",
  models: [],
  options: [
    {
      id: "approval_mode",
      label: "Approvals",
      kind: "select",
      choices: [{ value: "supervised", label: "Supervised" }],
      default: "supervised",
    },
  ],
  capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
}

const scripted = (answers: Record<string, (params: Record<string, unknown>) => unknown>) => {
  const events = makeEventHub()
  const calls: Array<{ method: string; params: Record<string, unknown> }> = []
  const host = {
    events,
    call: async (_agent: string, method: string, params: Record<string, unknown> = {}) => {
      calls.push({ method, params })
      const answer = answers[method]
      if (!answer) throw new Error(`unexpected ${method}`)
      return answer(params)
    },
  } as unknown as Host
  const emit = (event: AgentEvent) => events.publish({ kind: "agent_event", agentId: "claude", event })
  return { host, calls, emit }
}

const base = {
  initialize: () => INFO,
  createSession: (p: Record<string, unknown>) => ({ session_id: p.sessionId, info: { options: {} } }),
  closeSession: () => undefined,
}

describe("the ACP agent over a scripted host", () => {
  it("withdraws a permission request the CLI withdrew, and answers nothing for it", async () => {
    const h = scripted({
      ...base,
      prompt: () => ({ run_id: "r1", steered: false }),
      answerApproval: () => undefined,
    })
    const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude" }).app)
    let aborted = false
    client.onPermission = (_request, signal) =>
      new Promise((resolve) =>
        signal.addEventListener("abort", () => {
          aborted = true
          resolve({ outcome: { outcome: "cancelled" } })
        }),
      )
    await initialize(client)
    const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
    await new Promise((r) => setTimeout(r, 10))
    h.emit({
      type: "ApprovalRequested",
      session_id: sessionId,
      run_id: "r1",
      approval_id: "a1",
      tool_name: "Bash",
      title: "ls",
      input: { command: "ls" },
    })
    await new Promise((r) => setTimeout(r, 50))
    expect(client.permissions).toHaveLength(1)
    h.emit({
      type: "approval_resolved",
      session_id: sessionId,
      run_id: "r1",
      approval_id: "a1",
      reason: "cancelled",
    })
    await new Promise((r) => setTimeout(r, 50))
    expect(aborted).toBe(true)
    expect(h.calls.map((c) => c.method)).not.toContain("answerApproval")
    client.close()
  })

  it("a cancel the run never answers still ends the prompt cancelled, and its later end changes nothing", async () => {
    const h = scripted({ ...base, prompt: () => ({ run_id: "r1", steered: false }), cancel: () => undefined })
    const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", cancelGraceMs: 100 }).app)
    await initialize(client)
    const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
    const answer = client.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "go" }],
    })
    await new Promise((r) => setTimeout(r, 20))
    await client.agent.notify("session/cancel", { sessionId })
    expect((await answer).stopReason).toBe("cancelled")
    expect(h.calls.map((c) => c.method)).toContain("cancel")
    h.emit({ type: "RunEnded", session_id: sessionId, run_id: "r1", outcome: "Completed" })
    client.close()
  })

  it("a session whose start fails fails its prompt with the start's message", async () => {
    const h = scripted({
      ...base,
      createSession: () => {
        throw new Error("claude: command not found")
      },
    })
    const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude" }).app)
    await initialize(client)
    const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
    await expect(
      client.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] }),
    ).rejects.toThrow(/command not found/)
    client.close()
  })

  it("refuses session/new while the account is signed out, naming the auth methods", async () => {
    const h = scripted({
      ...base,
      initialize: () => ({ ...INFO, status: "AuthRequired", statusMessage: "Log in" }),
    })
    const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude" }).app)
    await initialize(client)
    await expect(client.agent.request("session/new", { cwd: "/", mcpServers: [] })).rejects.toMatchObject({
      code: -32000,
    })
    expect(h.calls.map((c) => c.method)).toContain("closeSession")
    client.close()
  })
})

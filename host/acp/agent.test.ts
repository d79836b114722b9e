/**
 * The ACP agent over a scripted host (a real event hub, `call` answered by the
 * test): what the end-to-end tests cannot time exactly — a request the CLI
 * withdraws, a cancel the run never answers, a start that fails, and the
 * order of answers while the host starts and the catalog probe runs.
 */
import { describe, expect, it } from "vitest"
import type { AgentEvent, AgentInfo } from "../../sdk/protocol.ts"
import { makeEventHub } from "../core/events.ts"
import type { Host } from "../core/host.ts"
import { makeAcpAgent } from "./agent.ts"
import { builtInInfo } from "./built-in-info.ts"
import { SIGN_IN_ADVICE } from "./sign-in.ts"
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

  it("$/cancel_request on a running session/prompt cancels the turn", async () => {
    const h = scripted({ ...base, prompt: () => ({ run_id: "r1", steered: false }), cancel: () => undefined })
    const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", cancelGraceMs: 100 }).app)
    await initialize(client)
    const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
    const stop = new AbortController()
    const answer = client.agent
      .request(
        "session/prompt",
        { sessionId, prompt: [{ type: "text", text: "go" }] },
        { cancellationSignal: stop.signal },
      )
      .catch((error: unknown) => error)
    await new Promise((r) => setTimeout(r, 20))
    expect(h.calls.map((c) => c.method)).toContain("prompt")
    // The SDK sends $/cancel_request for the prompt's id.
    stop.abort()
    await answer
    await new Promise((r) => setTimeout(r, 50))
    expect(h.calls.map((c) => c.method)).toContain("cancel")
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
      // The one sign-in advice (sign-in.ts); the account's own words in the data.
      message: expect.stringContaining(SIGN_IN_ADVICE),
      data: { detail: "Log in" },
    })
    expect(h.calls.map((c) => c.method)).toContain("closeSession")
    client.close()
  })

  describe("while the host starts and the catalog probe runs", () => {
    /** The catalog a probe answers: model choices as given, the approval mode as above. */
    const catalog = (models: string[]): AgentInfo => ({
      ...INFO,
      options: [
        ...INFO.options,
        {
          id: "model",
          label: "Model",
          kind: "select",
          choices: models.map((value) => ({ value, label: value })),
          default: models[0]!,
        },
      ],
    })
    /** A probe the test ends: `initialize` waits until `answer` is called. */
    const slowProbe = () => {
      let answer!: (info: AgentInfo) => void
      const probed = new Promise<AgentInfo>((r) => (answer = r))
      return { probed, answer }
    }
    const modelOf = (options: ReadonlyArray<{ id: string; options?: unknown }> | null | undefined) =>
      (options ?? [])
        .filter((o) => o.id === "model")
        .flatMap((o) => (o.options as Array<{ value: string }>).map((c) => c.value))
    /** The probe answers with these models; the models of the `config_option_update` that follows. */
    const modelsOnceProbed = async (
      client: ReturnType<typeof makeTestClient>,
      probe: ReturnType<typeof slowProbe>,
      models: string[],
    ) => {
      const seen = client.updates.length
      probe.answer(catalog(models))
      const update = await client.waitFor(
        (r) => r.update.sessionUpdate === "config_option_update" && client.updates.indexOf(r) >= seen,
        5_000,
      )
      return modelOf(
        (update.update as { configOptions: Array<{ id: string; options?: unknown }> }).configOptions,
      )
    }

    it("answers initialize before the host has started, and calls it once it has", async () => {
      const h = scripted(base)
      let started!: (host: Host) => void
      const host = new Promise<Host>((r) => (started = r))
      const client = makeTestClient(makeAcpAgent({ host, agentId: "claude" }).app)
      const init = await initialize(client)
      expect(init.protocolVersion).toBe(1)
      expect(h.calls).toHaveLength(0)
      started(h.host)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      expect(sessionId).toBeTruthy()
      expect(h.calls.map((c) => c.method)).toEqual(expect.arrayContaining(["initialize", "createSession"]))
      client.close()
    })

    it("answers session/new from the catalog last seen, then sends the probe's when it differs", async () => {
      const probe = slowProbe()
      const h = scripted({ ...base, initialize: () => probe.probed })
      const remembered: AgentInfo[] = []
      const client = makeTestClient(
        makeAcpAgent({
          host: h.host,
          agentId: "claude",
          knownInfo: catalog(["opus"]),
          rememberInfo: (info) => remembered.push(info),
        }).app,
      )
      await initialize(client)
      const answer = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      expect(modelOf(answer.configOptions)).toEqual(["opus"])
      expect(await modelsOnceProbed(client, probe, ["opus", "sonnet"])).toEqual(["opus", "sonnet"])
      expect(remembered.map((i) => i.options.find((o) => o.id === "model")?.choices?.length)).toEqual([2])
      client.close()
    })

    it("sends no config_option_update when the probe's catalog is the one answered", async () => {
      const probe = slowProbe()
      const h = scripted({ ...base, initialize: () => probe.probed })
      const client = makeTestClient(
        makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: catalog(["opus"]) }).app,
      )
      await initialize(client)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      probe.answer(catalog(["opus"]))
      await new Promise((r) => setTimeout(r, 50))
      expect(client.of(sessionId, "config_option_update")).toHaveLength(0)
      client.close()
    })

    it("a value chosen before the probe ends is checked against the probe's catalog, then applied", async () => {
      const probe = slowProbe()
      const h = scripted({ ...base, initialize: () => probe.probed, setOption: () => undefined })
      const client = makeTestClient(
        makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: catalog(["opus", "haiku"]) }).app,
      )
      await initialize(client)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      // sonnet is only in the live catalog, haiku only in the one last seen.
      const sonnet = client.agent.request("session/set_config_option", {
        sessionId,
        configId: "model",
        value: "sonnet",
      })
      const haiku = client.agent.request("session/set_config_option", {
        sessionId,
        configId: "model",
        value: "haiku",
      })
      await new Promise((r) => setTimeout(r, 30))
      expect(h.calls.map((c) => c.method)).not.toContain("setOption")
      probe.answer(catalog(["opus", "sonnet"]))
      const applied = await sonnet
      expect(applied.configOptions.find((o) => o.id === "model")?.currentValue).toBe("sonnet")
      await expect(haiku).rejects.toMatchObject({ code: -32602 })
      expect(h.calls.filter((c) => c.method === "setOption").map((c) => c.params.value)).toEqual(["sonnet"])
      client.close()
    })

    it("a value the agent's info refuses is checked again against a fresh info (the session's start filled the catalog)", async () => {
      // The plugin's first answer carries its built-in models; after the session's CLI started, the CLI's own.
      const answers = [catalog(["opus"]), catalog(["opus", "sonnet"])]
      const h = scripted({
        ...base,
        initialize: () => answers.shift() ?? catalog(["opus", "sonnet"]),
        setOption: () => undefined,
      })
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude" }).app)
      await initialize(client)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      const applied = await client.agent.request("session/set_config_option", {
        sessionId,
        configId: "model",
        value: "sonnet",
      })
      expect(applied.configOptions.find((o) => o.id === "model")?.currentValue).toBe("sonnet")
      await expect(
        client.agent.request("session/set_config_option", { sessionId, configId: "model", value: "haiku" }),
      ).rejects.toMatchObject({ code: -32602 })
      expect(h.calls.filter((c) => c.method === "setOption").map((c) => c.params.value)).toEqual(["sonnet"])
      client.close()
    })

    it("a session answered from the catalog last seen fails its prompt when the probe finds the account signed out", async () => {
      const probe = slowProbe()
      const h = scripted({
        ...base,
        initialize: () => probe.probed,
        prompt: () => ({ run_id: "r1", steered: false }),
      })
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: INFO }).app)
      await initialize(client)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      probe.answer({ ...INFO, status: "AuthRequired", statusMessage: "Log in" })
      await expect(
        client.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "go" }] }),
      ).rejects.toMatchObject({ code: -32000 })
      expect(h.calls.map((c) => c.method)).not.toContain("prompt")
      // The chat says the same as the error.
      await client.waitFor(
        (r) =>
          r.update.sessionUpdate === "agent_message_chunk" &&
          r.update.content.type === "text" &&
          r.update.content.text.includes(SIGN_IN_ADVICE),
        5_000,
      )
      client.close()
    })

    it("after logout, session/new waits for the probe instead of the catalog last seen", async () => {
      let signedIn = true
      const h = scripted({
        ...base,
        initialize: () => (signedIn ? INFO : { ...INFO, status: "AuthRequired", statusMessage: "Log in" }),
        signOut: () => {
          signedIn = false
        },
      })
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: INFO }).app)
      await initialize(client)
      await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      await client.agent.request("logout", {})
      await expect(client.agent.request("session/new", { cwd: "/", mcpServers: [] })).rejects.toMatchObject({
        code: -32000,
      })
      client.close()
    })

    it("closing a session answered from the catalog last seen does not wait for the probe", async () => {
      const probe = slowProbe()
      const h = scripted({ ...base, initialize: () => probe.probed })
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: INFO }).app)
      await initialize(client)
      const { sessionId } = await client.agent.request("session/new", { cwd: "/", mcpServers: [] })
      await client.agent.request("session/close", { sessionId })
      expect(h.calls.map((c) => c.method)).toContain("closeSession")
      client.close()
    })

    it("with a catalog last seen, session/load reads and replays its chat before the probe starts", async () => {
      const h = scripted({
        ...base,
        readSession: () => ({
          items: [{ type: "user", id: "m1", text: "hi" }],
        }),
        resumeSession: (p: Record<string, unknown>) => ({ session_id: p.sessionId, info: { options: {} } }),
      })
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: INFO }).app)
      await initialize(client)
      await new Promise((r) => setTimeout(r, 20))
      // Nothing needed the catalog yet: no probe (its CLIs would compete with the read).
      expect(h.calls.map((c) => c.method)).toEqual([])
      await client.agent.request("session/load", { sessionId: "s1", cwd: "/", mcpServers: [] })
      const methods = h.calls.map((c) => c.method)
      expect(methods.indexOf("readSession")).toBeGreaterThanOrEqual(0)
      expect(methods.indexOf("initialize")).toBeGreaterThan(methods.indexOf("readSession"))
      expect(client.of("s1", "user_message_chunk")).toHaveLength(1)
      client.close()
    })

    it("a first start answers session/load from the built-in catalog before the probe ends, then sends the probe's", async () => {
      const probe = slowProbe()
      const h = scripted({
        ...base,
        initialize: () => probe.probed,
        readSession: () => ({ items: [{ type: "user", id: "m1", text: "hi" }] }),
        resumeSession: (p: Record<string, unknown>) => ({ session_id: p.sessionId, info: { options: {} } }),
        prompt: () => ({ run_id: "r1", steered: false }),
      })
      const builtIn = builtInInfo("claude")
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude", knownInfo: builtIn }).app)
      await initialize(client)
      const answer = await client.agent.request("session/load", { sessionId: "s1", cwd: "/", mcpServers: [] })
      // Answered while the probe has not: its modes and models are the plugin's built-in ones.
      expect(answer.modes?.availableModes.map((m) => m.id)).toEqual([
        "supervised",
        "accept_edits",
        "auto",
        "full",
      ])
      expect(modelOf(answer.configOptions)).toEqual(builtIn.models.map((m) => m.value))
      expect(client.of("s1", "user_message_chunk")).toHaveLength(1)
      const methods = h.calls.map((c) => c.method)
      expect(methods.indexOf("initialize")).toBeGreaterThan(methods.indexOf("readSession"))
      // A prompt sent now waits for the probe.
      const prompted = client.agent.request("session/prompt", {
        sessionId: "s1",
        prompt: [{ type: "text", text: "go" }],
      })
      await new Promise((r) => setTimeout(r, 30))
      expect(h.calls.map((c) => c.method)).not.toContain("prompt")
      expect(await modelsOnceProbed(client, probe, ["opus", "sonnet"])).toEqual(["opus", "sonnet"])
      for (let i = 0; i < 100 && !h.calls.some((c) => c.method === "prompt"); i++)
        await new Promise((r) => setTimeout(r, 10))
      expect(h.calls.map((c) => c.method)).toContain("prompt")
      void prompted.catch(() => {})
      client.close()
    })

    it("with no catalog last seen, the probe starts at once", async () => {
      const h = scripted(base)
      const client = makeTestClient(makeAcpAgent({ host: h.host, agentId: "claude" }).app)
      await initialize(client)
      await new Promise((r) => setTimeout(r, 20))
      expect(h.calls.map((c) => c.method)).toEqual(["initialize"])
      client.close()
    })
  })
})

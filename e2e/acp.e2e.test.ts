/**
 * The ACP front end end to end: the agent (host/acp/) over the plugin in
 * host/, driving the real CLI against the scripted model, driven by the
 * SDK's own client-side connection (in process: the same AgentApp main.ts
 * serves on stdio; acp-stdio.e2e.test.ts covers the process itself).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { describe, expect, it } from "vitest"
import { makeAcpAgent } from "../host/acp/agent.ts"
import { mcpEnvSetter } from "../host/acp/mcp.ts"
import { choose, initialize, type TestClient } from "../host/acp/testing.ts"
import {
  gate,
  hang,
  message,
  type Scenario,
  stall,
  text,
  thinking,
  toolUse,
} from "../testkit/model-server.ts"
import { closeWorldsAfterEach, startWorld, toolResultText, type World } from "./harness.ts"
import { closeClientsAfterEach, connectClient } from "./acp-clients.ts"

let world: World | undefined
closeWorldsAfterEach()
closeClientsAfterEach()

const start = async (
  scenario: Scenario,
  options: { env?: Record<string, string>; elicitation?: boolean; cancelGraceMs?: number } = {},
) => {
  world = await startWorld(scenario, options.env ? { env: options.env } : {})
  const agent = makeAcpAgent({
    host: world.host,
    agentId: world.agentId,
    setMcpConfig: mcpEnvSetter(world.env),
    ...(options.cancelGraceMs !== undefined && { cancelGraceMs: options.cancelGraceMs }),
  })
  const client = connectClient(agent.app)
  const init = await initialize(client, { elicitation: options.elicitation === true })
  const session = await client.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
  return { w: world, c: client, init, session, sessionId: session.sessionId }
}

const prompt = (c: TestClient, sessionId: string, words: string) =>
  c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: words }] })

const metaOf = (u: { _meta?: unknown }) =>
  (u._meta as { claudeCode?: Record<string, unknown> } | undefined)?.claudeCode

describe("the ACP agent against the real CLI", () => {
  it("initializes with its capabilities, streams thinking and text, and ends the turn end_turn with usage", async () => {
    const { c, init, session, sessionId } = await start({
      main: [[thinking("Weighing a greeting."), text("Hello from the scripted model.")]],
    })
    expect(init.protocolVersion).toBe(1)
    expect(init.agentCapabilities).toMatchObject({
      loadSession: true,
      promptCapabilities: { image: true, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {} },
    })
    expect(init.authMethods?.map((m) => m.id)).toEqual(["claude-login", "anthropic-api-key", "gateway"])
    expect(session.modes?.availableModes.map((m) => m.id)).toEqual([
      "supervised",
      "accept_edits",
      "auto",
      "full",
    ])
    expect(session.modes?.currentModeId).toBe("supervised")
    expect(session.configOptions?.map((o) => o.id)).toEqual(
      expect.arrayContaining(["model", "effort", "thinking"]),
    )

    const answer = await prompt(c, sessionId, "Say hello")
    expect(answer.stopReason).toBe("end_turn")
    expect(answer.usage?.outputTokens).toBeGreaterThan(0)
    expect(c.text(sessionId)).toBe("Hello from the scripted model.")
    expect(c.text(sessionId, "agent_thought_chunk")).toContain("Weighing a greeting.")
    const usage = c.of(sessionId, "usage_update").at(-1)
    expect(usage?.size).toBeGreaterThan(0)
    expect(usage?.used).toBeGreaterThan(0)
  })

  it("asks before Bash: allowed runs with exit code 0, rejected does not run", async () => {
    const { w, c, sessionId } = await start({
      main: [
        [toolUse("Bash", { command: "touch approved.txt && echo made", description: "Create approved.txt" })],
        (req) => [text(`after allow: ${toolResultText(req).includes("made") ? "ok" : "?"}`)],
        [toolUse("Bash", { command: "touch denied.txt", description: "Create denied.txt" })],
        (req) => [text(`after deny: ${toolResultText(req)}`)],
      ],
    })
    c.onPermission = choose("allow_once")
    expect((await prompt(c, sessionId, "make a file")).stopReason).toBe("end_turn")
    expect(existsSync(join(w.sandbox.ws, "approved.txt"))).toBe(true)
    const asked = c.permissions[0]!
    expect(asked.options.map((o) => o.kind)).toEqual(expect.arrayContaining(["allow_once", "reject_once"]))
    const always = asked.options.find((o) => o.kind === "allow_always")
    if (always) expect(always.name).toMatch(/rule/)
    const call = c.of(sessionId, "tool_call").find((t) => t.kind === "execute")!
    expect(asked.toolCall.toolCallId).toBe(call.toolCallId)
    expect(call.rawInput).toMatchObject({ command: "touch approved.txt && echo made" })
    const done = c
      .of(sessionId, "tool_call_update")
      .filter((u) => u.toolCallId === call.toolCallId)
      .at(-1)!
    expect(done.status).toBe("completed")
    expect(metaOf(done)?.exitCode).toBe(0)
    expect(JSON.stringify(done.content)).toContain("made")

    c.onPermission = choose("reject_once")
    expect((await prompt(c, sessionId, "make another")).stopReason).toBe("end_turn")
    expect(existsSync(join(w.sandbox.ws, "denied.txt"))).toBe(false)
    const denied = c.of(sessionId, "tool_call").filter((t) => t.kind === "execute")[1]!
    const last = c
      .of(sessionId, "tool_call_update")
      .filter((u) => u.toolCallId === denied.toolCallId)
      .at(-1)!
    expect(last.status).toBe("failed")
    expect(c.text(sessionId)).toContain("after deny:")
  })

  it("shows Write and then Edit as diffs with the path and the old and new text", async () => {
    let file = ""
    const { w, c, sessionId } = await start({
      main: [
        () => [toolUse("Write", { file_path: file, content: "alpha\nbeta\n" })],
        () => [toolUse("Edit", { file_path: file, old_string: "beta", new_string: "BETA" })],
        [text("edited")],
      ],
    })
    file = join(w.sandbox.ws, "notes.txt")
    c.onPermission = choose("allow_once")
    expect((await prompt(c, sessionId, "write then edit")).stopReason).toBe("end_turn")
    expect(readFileSync(file, "utf8")).toBe("alpha\nBETA\n")
    const calls = c.of(sessionId, "tool_call").filter((t) => t.kind === "edit")
    expect(calls.map((t) => t.content?.[0])).toEqual([
      { type: "diff", path: file, oldText: null, newText: "alpha\nbeta\n" },
      { type: "diff", path: file, oldText: "beta", newText: "BETA" },
    ])
    expect(calls.map((t) => t.locations)).toEqual([[{ path: file }], [{ path: file }]])
  })

  it("sends TodoWrite as a plan", async () => {
    const { c, sessionId } = await start(
      {
        main: [
          [
            toolUse("TodoWrite", {
              todos: [
                { content: "Look", activeForm: "Looking", status: "completed" },
                { content: "Fix", activeForm: "Fixing", status: "in_progress" },
              ],
            }),
          ],
          [text("planned")],
        ],
      },
      { env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1", CLAUDE_CODE_ENABLE_TASKS: "0" } },
    )
    expect((await prompt(c, sessionId, "plan it")).stopReason).toBe("end_turn")
    expect(c.of(sessionId, "plan").at(-1)?.entries).toEqual([
      { content: "Look", status: "completed", priority: "medium" },
      { content: "Fix", status: "in_progress", priority: "medium" },
    ])
    // Only as the plan: no "Update plan" call whose text is the CLI's note to the model.
    expect(c.of(sessionId, "tool_call")).toEqual([])
  })

  const QUESTION = {
    questions: [
      {
        question: "Which greeting?",
        header: "Greeting",
        multiSelect: false,
        options: [
          { label: "Hello", description: "plain" },
          { label: "Bonjour", description: "French" },
        ],
      },
    ],
  }

  it("asks AskUserQuestion through elicitation when the client has it, answers keyed by question", async () => {
    const { c, sessionId } = await start(
      { main: [[toolUse("AskUserQuestion", QUESTION)], (req) => [text(`got: ${toolResultText(req)}`)]] },
      { elicitation: true },
    )
    c.onElicitation = async () => ({ action: "accept", content: { q1: "Bonjour" } })
    expect((await prompt(c, sessionId, "ask me")).stopReason).toBe("end_turn")
    const form = c.elicitations[0] as { requestedSchema?: acp.ElicitationSchema }
    expect(form.requestedSchema?.properties?.q1).toMatchObject({
      type: "string",
      oneOf: [
        { const: "Hello", title: "Hello" },
        { const: "Bonjour", title: "Bonjour" },
      ],
    })
    expect(c.text(sessionId)).toContain("Bonjour")
  })

  it("asks AskUserQuestion as permission options when the client has no elicitation", async () => {
    const { c, sessionId } = await start({
      main: [[toolUse("AskUserQuestion", QUESTION)], (req) => [text(`got: ${toolResultText(req)}`)]],
    })
    c.onPermission = async (r) => ({
      outcome: {
        outcome: "selected",
        optionId: r.options.find((o) => o.name.startsWith("Bonjour"))!.optionId,
      },
    })
    expect((await prompt(c, sessionId, "ask me")).stopReason).toBe("end_turn")
    expect(c.permissions[0]?.toolCall.title).toBe("Greeting: Which greeting?")
    expect(c.text(sessionId)).toContain("Bonjour")
  })

  it("nests a subagent: its call is a think tool call, its own calls carry the parent id", async () => {
    const { c, sessionId } = await start({
      main: [
        [
          toolUse(
            "Agent",
            {
              description: "Count files",
              prompt: "SUB-1: count the files",
              subagent_type: "general-purpose",
              run_in_background: false,
            },
            "toolu_agent_1",
          ),
        ],
        [text("The subagent is done.")],
      ],
      subagents: [
        {
          match: "SUB-1",
          name: "sub",
          turns: [[toolUse("Bash", { command: "ls | wc -l" })], [text("3 files.")]],
        },
      ],
    })
    c.onPermission = choose("allow_once")
    expect((await prompt(c, sessionId, "delegate")).stopReason).toBe("end_turn")
    const agentCall = c.of(sessionId, "tool_call").find((t) => t.toolCallId === "toolu_agent_1")
    expect(agentCall?.kind).toBe("think")
    const child = c.of(sessionId, "tool_call").find((t) => t.kind === "execute")
    expect(metaOf(child!)?.parentToolUseId).toBe("toolu_agent_1")
    const last = c
      .of(sessionId, "tool_call_update")
      .filter((u) => u.toolCallId === "toolu_agent_1")
      .at(-1)
    expect(last?.status).toBe("completed")
    // The subagent's own words show in its call (its text and summary), not in the main stream.
    const shown = c
      .of(sessionId, "tool_call_update")
      .filter((u) => u.toolCallId === "toolu_agent_1" && u.content)
      .at(-1)
    expect(JSON.stringify(shown?.content)).toContain("3 files.")
    expect(c.text(sessionId)).not.toContain("3 files.")
  })

  it("a turn the model ends max_tokens ends max_tokens, a refused one refusal, the next end_turn", async () => {
    // Each prompt picks the reason; the CLI's retries (its own user message) keep the prompt's.
    let reason: string | undefined
    const { c, sessionId } = await start({
      main: [],
      exhausted: (_conversation, req) => {
        const said = req.lastUserText()
        if (said.includes("Write a lot")) reason = "max_tokens"
        else if (said.includes("Cross a line")) reason = "refusal"
        else if (said.includes("Say fine")) reason = undefined
        return reason === undefined ? [text("Fine.")] : message([text("Cut short")], { stopReason: reason })
      },
    })
    expect((await prompt(c, sessionId, "Write a lot")).stopReason).toBe("max_tokens")
    expect((await prompt(c, sessionId, "Cross a line")).stopReason).toBe("refusal")
    expect((await prompt(c, sessionId, "Say fine")).stopReason).toBe("end_turn")
  })

  it("cancel during a long Bash answers cancelled within 10 s, and the next prompt works", async () => {
    const { c, sessionId } = await start({
      main: [
        [toolUse("Bash", { command: "echo started && sleep 30", description: "Wait" })],
        // An interrupted tool call makes no further request: the next prompt takes this turn.
        [text("after the cancel")],
      ],
    })
    c.onPermission = choose("allow_once")
    const running = prompt(c, sessionId, "wait a while")
    await c.waitFor((r) => r.update.sessionUpdate === "tool_call" && r.update.kind === "execute")
    await new Promise((r) => setTimeout(r, 1_500))
    const cancelled = Date.now()
    await c.agent.notify("session/cancel", { sessionId })
    expect((await running).stopReason).toBe("cancelled")
    expect(Date.now() - cancelled).toBeLessThan(10_000)
    const next = await prompt(c, sessionId, "again")
    expect(next.stopReason).toBe("end_turn")
    expect(c.text(sessionId)).toContain("after the cancel")
  })

  it("a cancel the CLI does not answer still ends the prompt cancelled, once", async () => {
    const { c, sessionId } = await start({ main: [hang()] }, { cancelGraceMs: 500 })
    const running = prompt(c, sessionId, "hang")
    await new Promise((r) => setTimeout(r, 1_500))
    await c.agent.notify("session/cancel", { sessionId })
    expect((await running).stopReason).toBe("cancelled")
  })

  it("a CLI killed mid-turn fails the prompt with its message, and the next prompt resumes", async () => {
    const open = gate()
    const { w, c, sessionId } = await start({
      main: [
        async () => {
          await open.wait
          return [text("never")]
        },
        (req) => [text(`resumed with ${req.messages.length} messages`)],
      ],
    })
    const running = prompt(c, sessionId, "remember this")
    await new Promise((r) => setTimeout(r, 1_500))
    const claude = w.host.processes().find((p) => p.command === "claude")!
    process.kill(claude.pid, "SIGKILL")
    // The error carries the CLI's own end (its stderr tail when it wrote one).
    await expect(running).rejects.toThrow(/The run failed: Claude Code (was stopped by SIGKILL|exited)/)
    open.open()
    const next = await prompt(c, sessionId, "still there?")
    expect(next.stopReason).toBe("end_turn")
    expect(c.text(sessionId)).toMatch(/resumed with \d+ messages/)
  })

  it("loads a stored chat as updates, lists it by cwd, forks it, and changes mode and model", async () => {
    const { w, c, sessionId } = await start({
      main: [
        [thinking("first thought"), text("first answer")],
        [text("after the change")],
        [text("in the fork")],
      ],
    })
    expect((await prompt(c, sessionId, "first question")).stopReason).toBe("end_turn")

    await c.agent.request("session/set_mode", { sessionId, modeId: "accept_edits" })
    const model = await c.agent.request("session/set_config_option", {
      sessionId,
      configId: "model",
      value: "sonnet",
    })
    // The alias resolves to the CLI's own Sonnet (2.1.332: claude-sonnet-5-5; 2.1.282: claude-sonnet-5).
    expect(model.configOptions.find((o) => o.id === "model")?.currentValue).toMatch(/^claude-sonnet-5/)
    await expect(
      c.agent.request("session/set_config_option", { sessionId, configId: "model", value: "no-such-model" }),
    ).rejects.toThrow(/model takes one of/)
    expect((await prompt(c, sessionId, "second")).stopReason).toBe("end_turn")
    expect(w.server.requests.filter((r) => r.conversation === "main").at(-1)?.model).toMatch(/sonnet/)
    expect(c.of(sessionId, "current_mode_update").at(-1)?.currentModeId).toBe("accept_edits")

    const listed = await c.agent.request("session/list", { cwd: w.sandbox.ws })
    expect(listed.sessions.map((s) => s.sessionId)).toContain(sessionId)
    expect(listed.sessions.find((s) => s.sessionId === sessionId)?.cwd).toBe(w.sandbox.ws)

    await c.agent.request("session/close", { sessionId })
    const before = c.updates.length
    await c.agent.request("session/load", { sessionId, cwd: w.sandbox.ws, mcpServers: [] })
    const replayed = c.updates.slice(before).map((r) => r.update)
    const said = (kind: string) =>
      replayed
        .filter((u) => u.sessionUpdate === kind)
        .map((u) => ((u as { content: { text?: string } }).content.text ?? "") as string)
    // The model change is the CLI's own record, not a message: it is not replayed.
    expect(said("user_message_chunk")).toEqual(["first question", "second"])
    expect(said("agent_message_chunk")).toEqual(["first answer", "after the change"])
    expect(said("agent_thought_chunk").join("")).toContain("first thought")

    const fork = await c.agent.request("session/fork", { sessionId, cwd: w.sandbox.ws })
    expect(fork.sessionId).not.toBe(sessionId)
    expect((await prompt(c, fork.sessionId, "forked")).stopReason).toBe("end_turn")
    expect(c.text(fork.sessionId)).toBe("in the fork")
  })

  it("steers: a prompt sent while one runs joins the turn and both get its answer", async () => {
    const { c, sessionId } = await start({
      main: [[stall(2_000), text("first part")], (req) => [text(`saw: ${req.lastUserText()}`)]],
    })
    const first = prompt(c, sessionId, "start")
    await new Promise((r) => setTimeout(r, 800))
    const second = prompt(c, sessionId, "and also this")
    const [a, b] = await Promise.all([first, second])
    expect(a.stopReason).toBe("end_turn")
    expect(b.stopReason).toBe("end_turn")
    // The steered prompt reached the model inside the same turn.
    expect(c.text(sessionId)).toContain("saw: and also this")
  })

  it("refuses bad input with a clear error and goes on", async () => {
    const { w, c, sessionId } = await start({ main: [[text("fine")]] })
    await expect(c.agent.request("session/new", { cwd: "relative/path", mcpServers: [] })).rejects.toThrow(
      /absolute/,
    )
    writeFileSync(join(w.sandbox.root, "a-file"), "x")
    await expect(
      c.agent.request("session/new", { cwd: join(w.sandbox.root, "a-file"), mcpServers: [] }),
    ).rejects.toThrow(/not a directory/)
    await expect(c.agent.request("session/prompt", { sessionId: "nope", prompt: [] })).rejects.toThrow()
    await expect(
      c.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "audio", data: "AAAA", mimeType: "audio/wav" }],
      }),
    ).rejects.toThrow(/audio/)
    await expect(c.agent.request("session/set_mode", { sessionId, modeId: "plan" })).rejects.toThrow(
      /approval_mode takes one of/,
    )
    expect((await prompt(c, sessionId, "still fine?")).stopReason).toBe("end_turn")
  })
})

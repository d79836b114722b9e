/**
 * What an editor user of claude-agent-acp relies on, against the real CLI
 * and the scripted model, through the SDK's client: a session's options
 * (`_meta.claudeCode.options`, `_meta.systemPrompt`, `additionalDirectories`)
 * and a stdio MCP server, each checked at the model (what it is sent); bad
 * input that keeps the session; the capabilities a client declares or not;
 * delete; plan mode with ExitPlanMode's approval.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { describe, expect, it } from "vitest"
import { makeAcpAgent } from "../host/acp/agent.ts"
import { mcpEnvSetter } from "../host/acp/mcp.ts"
import { choose } from "../host/acp/testing.ts"
import {
  message,
  type RequestView,
  rateLimitHeaders,
  type Scenario,
  text,
  toolUse,
} from "../testkit/model-server.ts"
import { GATEWAY_AUTH_TOKEN } from "../testkit/scenarios/limits.ts"
import { closeClientsAfterEach, connectClient } from "./acp-clients.ts"
import { CLI_CHANGES, cliUnderTest, closeWorldsAfterEach, repoRoot, startWorld } from "./harness.ts"

closeWorldsAfterEach()
closeClientsAfterEach()

/** Every optional thing a client may declare (Zed's terminal cards among them). */
const EVERYTHING: acp.ClientCapabilities = {
  fs: { readTextFile: false, writeTextFile: false },
  terminal: false,
  session: { configOptions: { boolean: {} }, notices: {}, compaction: {} },
  _meta: { terminal_output: true },
}
const NOTHING: acp.ClientCapabilities = { fs: { readTextFile: false, writeTextFile: false }, terminal: false }

const start = async (scenario: Scenario, env?: Record<string, string>) => {
  const world = await startWorld(scenario, env ? { env } : {})
  const client = (caps: acp.ClientCapabilities) => {
    const agent = makeAcpAgent({
      host: world.host,
      agentId: world.agentId,
      setMcpConfig: mcpEnvSetter(world.env),
    })
    const c = connectClient(agent.app)
    const init = c.agent.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: caps,
      clientInfo: { name: "options-test", version: "0" },
    })
    return { c, init }
  }
  return { world, client }
}

const ECHO = join(repoRoot, "e2e/mcp-echo-server.mjs")

describe("session options, MCP servers and capabilities", () => {
  it("passes the client's model, appended prompt, allowed tools, directories and stdio MCP server to the model; names a failed server once", async () => {
    const seen: { model?: string; body?: string } = {}
    const { world, client } = await start({
      main: [
        (req: RequestView) => {
          seen.model = req.model
          seen.body = JSON.stringify(req.body)
          return [toolUse("mcp__echo__echo", { text: "hi" })]
        },
        (req: RequestView) => [text(`The tool said: ${req.toolResults().at(-1)?.content}`)],
      ],
    })
    const extra = join(world.sandbox.root, "extra-dir")
    mkdirSync(extra, { recursive: true })
    const { c, init } = client(EVERYTHING)
    const answer = await init
    expect(answer.agentCapabilities).toMatchObject({
      auth: { logout: {} },
      sessionCapabilities: { delete: {}, additionalDirectories: {}, list: {} },
    })
    const session = await c.agent.request("session/new", {
      cwd: world.sandbox.ws,
      additionalDirectories: [extra],
      mcpServers: [
        {
          name: "echo",
          command: process.execPath,
          args: [ECHO],
          env: [{ name: "MCP_ECHO_TAG", value: "T1" }],
        },
        { name: "nope", command: "/no/such/command", args: [], env: [] },
      ],
      _meta: {
        claudeCode: { options: { model: "haiku", allowedTools: ["mcp__echo__echo"], settingSources: [] } },
        systemPrompt: { append: "APPENDED-BY-THE-CLIENT" },
        somethingElse: { ignored: true },
      },
    })
    // A client that declared boolean options gets them.
    expect(session.configOptions?.find((o) => o.id === "thinking")?.type).toBe("boolean")
    const end = await c.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Call the echo tool" }],
    })
    expect(end.stopReason).toBe("end_turn")
    expect(seen.model).toMatch(/haiku/)
    expect(seen.body).toContain("APPENDED-BY-THE-CLIENT")
    expect(seen.body).toContain(extra)
    // The stdio server's tool answered through the model, without a permission request (allowedTools).
    expect(c.text(session.sessionId)).toContain("The tool said: echo: hi [T1]")
    expect(c.permissions).toEqual([])
    // The failed server is named in one notice (the client declared notices), not a chat line.
    const notices = c.of(session.sessionId, "notice")
    expect(notices.filter((n) => n.title.includes("nope"))).toHaveLength(1)
    expect(c.text(session.sessionId)).not.toContain("nope")
  })

  it("refuses bad input with errors that name it and keeps the session; a client that declares nothing gets no boolean options", async () => {
    const { world, client } = await start({ main: [[text("still here")]] })
    const { c, init } = client(NOTHING)
    await init
    const bad = (params: Partial<acp.NewSessionRequest>) =>
      c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [], ...params }).then(
        () => "accepted",
        (error: { message?: string; data?: unknown }) => `${error.message} ${JSON.stringify(error.data)}`,
      )
    expect(await bad({ additionalDirectories: ["relative/dir"] })).toMatch(/absolute.*relative\/dir/)
    expect(await bad({ _meta: { claudeCode: { options: { model: "gpt-9" } } } })).toMatch(
      /unknown model gpt-9/,
    )
    expect(await bad({ _meta: { claudeCode: { options: { maxTurns: -1 } } } })).toMatch(/maxTurns/)
    const deleted = await c.agent.request("session/delete", { sessionId: "no-such-chat" }).then(
      () => "deleted",
      (error: { message?: string; data?: unknown }) => `${error.message} ${JSON.stringify(error.data)}`,
    )
    expect(deleted).toMatch(/no chat no-such-chat to delete/)
    const session = await c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
    expect(session.configOptions?.some((o) => o.type === "boolean")).toBe(false)
    expect(session.configOptions?.find((o) => o.id === "thinking")).toMatchObject({ type: "select" })
    // acpx sends a toggle's word.
    const set = await c.agent.request("session/set_config_option", {
      sessionId: session.sessionId,
      configId: "thinking",
      value: "false",
    } as acp.SetSessionConfigOptionRequest)
    expect(set.configOptions.find((o) => o.id === "thinking")?.currentValue).toBe("false")
    const end = await c.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "Are you there?" }],
    })
    expect(end.stopReason).toBe("end_turn")
    expect(c.text(session.sessionId)).toContain("still here")
  })

  it("deletes a stored chat: gone from the list, refused on load", async () => {
    const { world, client } = await start({ main: [[text("a chat to delete")]] })
    const { c, init } = client(NOTHING)
    await init
    const session = await c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
    await c.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "hi" }],
    })
    const ids = async () =>
      (await c.agent.request("session/list", { cwd: world.sandbox.ws })).sessions.map((s) => s.sessionId)
    expect(await ids()).toContain(session.sessionId)
    await c.agent.request("session/delete", { sessionId: session.sessionId })
    expect(await ids()).not.toContain(session.sessionId)
    await expect(
      c.agent.request("session/load", {
        sessionId: session.sessionId,
        cwd: world.sandbox.ws,
        mcpServers: [],
      }),
    ).rejects.toThrow()
  })
})

describe("a stored chat's mode", () => {
  it("a mode set in one agent comes back with the chat loaded in the next: shown, and in force", async () => {
    const { world, client } = await start({
      main: [
        [text("first turn")],
        () => [toolUse("Write", { file_path: join(world.sandbox.ws, "loaded.txt"), content: "x\n" })],
        [text("written")],
      ],
    })
    const first = client(NOTHING)
    await first.init
    const { sessionId } = await first.c.agent.request("session/new", {
      cwd: world.sandbox.ws,
      mcpServers: [],
    })
    await first.c.agent.request("session/set_mode", { sessionId, modeId: "accept_edits" })
    await first.c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hi" }] })
    await first.c.agent.request("session/close", { sessionId })
    const next = client(NOTHING)
    await next.init
    await next.c.agent.request("session/load", { sessionId, cwd: world.sandbox.ws, mcpServers: [] })
    const end = await next.c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "write it" }],
    })
    expect(end.stopReason).toBe("end_turn")
    // In force: the Write went through unasked; shown: the client was told the mode.
    expect(next.c.permissions).toEqual([])
    expect(readFileSync(join(world.sandbox.ws, "loaded.txt"), "utf8")).toBe("x\n")
    const modes = next.c.of(sessionId, "current_mode_update").map((u) => u.currentModeId)
    expect(modes.at(-1)).toBe("accept_edits")
  })
})

describe("plan mode", () => {
  it("plans, shows the plan for approval; rejecting keeps planning, accepting returns to the approval mode the user had", async () => {
    let planFile = ""
    let told = false
    /** As the real model does: write the plan to the file the CLI names, then hand it in. */
    const writePlan = (words: string) => (req: RequestView) => {
      const body = JSON.stringify(req.body)
      told ||= /plan mode/i.test(body)
      planFile = /create your plan at (\S+\.md)/.exec(body)?.[1] ?? planFile
      return [toolUse("Write", { file_path: planFile, content: words })]
    }
    const { world, client } = await start({
      main: [
        writePlan("# Plan\n1. Write planned.txt\n"),
        [toolUse("ExitPlanMode", {})],
        writePlan("# Plan\n1. Write planned.txt, with a heading\n"),
        [toolUse("ExitPlanMode", {})],
        () => [
          toolUse("Write", { file_path: join(world.sandbox.ws, "planned.txt"), content: "# Planned\n" }),
        ],
        [text("Done as planned.")],
      ],
    })
    const { c, init } = client(EVERYTHING)
    await init
    const session = await c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
    const sessionId = session.sessionId
    await c.agent.request("session/set_mode", { sessionId, modeId: "accept_edits" })
    await c.agent.request("session/set_config_option", {
      sessionId,
      configId: "plan_mode",
      type: "boolean",
      value: true,
    } as acp.SetSessionConfigOptionRequest)
    let asked = 0
    c.onPermission = async (request) => {
      const exit = (request.toolCall._meta as { claudeCode?: { toolName?: string } })?.claudeCode?.toolName
      if (exit !== "ExitPlanMode") return choose("allow_once")(request)
      asked++
      return asked === 1 ? choose("reject_once")(request) : choose("allow_once")(request)
    }
    const end = await c.agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Plan a file, then write it" }],
    })
    expect(end.stopReason).toBe("end_turn")
    expect(told).toBe(true)
    // Each plan was shown for approval as the CLI hands it in (the plan file's text).
    const shown = c.permissions
      .filter(
        (p) =>
          (p.toolCall._meta as { claudeCode?: { toolName?: string } })?.claudeCode?.toolName ===
          "ExitPlanMode",
      )
      .map((p) => (p.toolCall.rawInput as { plan?: string }).plan)
    expect(shown).toEqual([
      "# Plan\n1. Write planned.txt\n",
      "# Plan\n1. Write planned.txt, with a heading\n",
    ])
    // Accepted: plan mode off, the approval mode the user had (accept_edits) in force: the Write asked nothing.
    const planOption = c
      .of(sessionId, "config_option_update")
      .at(-1)
      ?.configOptions.find((o) => o.id === "plan_mode")?.currentValue
    expect(planOption).toBe(false)
    expect(c.permissions.filter((p) => p.toolCall.title?.includes("planned.txt"))).toEqual([])
    expect(c.text(sessionId)).toContain("Done as planned.")
    expect(existsSync(join(world.sandbox.ws, "planned.txt"))).toBe(true)
  })
})

describe("the CLI's own commands over ACP", () => {
  it("/cost, /context, /mcp and /usage print their output into the chat", async () => {
    const { world, client } = await start({ main: [[text("A first answer.")]] })
    const { c, init } = client(NOTHING)
    await init
    const session = await c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
    const sessionId = session.sessionId
    await c.agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "hello" }] })
    const said: Record<string, string> = {}
    for (const command of ["/cost", "/context", "/mcp", "/usage"]) {
      const before = c.text(sessionId).length
      const end = await c.agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: command }],
      })
      expect(end.stopReason).toBe("end_turn")
      said[command] = c.text(sessionId).slice(before)
    }
    // With an API key there are no plan limits: /usage prints the session's cost, as /cost does
    // (2.1.332 titles it "Estimated cost", 2.1.282 "Total cost").
    expect(said["/cost"]).toMatch(/(Estimated|Total) cost:/)
    expect(said["/context"]).toContain("Context Usage")
    expect(said["/mcp"]).toContain("No MCP servers are configured")
    expect(said["/usage"]).toMatch(/(Estimated|Total) cost:/)
  })
})

describe("usage limits over ACP", () => {
  it("a window near its limit is a warning with a meter: a notice when declared, once", async () => {
    const near = () =>
      message([text("Answered near the limit.")], {
        headers: rateLimitHeaders({ status: "allowed_warning", utilization: 0.92 }),
      })
    // A gateway credential: with it the CLI reads the unified rate-limit headers.
    const { world, client } = await start(
      { main: [near(), near()] },
      { ANTHROPIC_AUTH_TOKEN: GATEWAY_AUTH_TOKEN },
    )
    world.env.ANTHROPIC_API_KEY = undefined
    const { c, init } = client(EVERYTHING)
    await init
    const session = await c.agent.request("session/new", { cwd: world.sandbox.ws, mcpServers: [] })
    for (const words of ["hello", "again"])
      await c.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: words }],
      })
    const warnings = c.of(session.sessionId, "notice").filter((n) => n.title.startsWith("5-hour limit"))
    if (!cliUnderTest.atLeast(CLI_CHANGES.rateLimitEventForApiKey)) {
      // An older CLI writes no rate_limit_event for this credential: nothing to warn from.
      expect(warnings).toEqual([])
      return
    }
    expect(warnings).toEqual([
      expect.objectContaining({
        severity: "warning",
        title: expect.stringMatching(/^5-hour limit: 92% used · resets \d{4}-\d\d-\d\d \d\d:\d\d UTC$/),
        description: "`██████████████████░░`",
      }),
    ])
    // The figures ride on usage_update too.
    const usage = c.of(session.sessionId, "usage_update").at(-1)
    expect(JSON.stringify(usage?._meta)).toContain("five_hour")
  })
})

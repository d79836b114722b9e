import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliEnv, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import {
  hang,
  type ModelServer,
  type ReplyLike,
  type RequestView,
  startModelServer,
  text,
  toolUse,
} from "../testkit/model-server.ts"
import {
  type AcpxSetup,
  acpxNode,
  agentText,
  buildBundledAgent,
  bundledAgent,
  removeAcpxSandbox,
  runAcpx,
  runningWithHome,
  stopReasonOf,
  waitFor,
} from "./acp-clients.ts"
import { repoRoot } from "./harness.ts"

let node24 = ""
let sandbox: Sandbox
let server: ModelServer
/** What the model was sent, by prompt keyword. */
const seen: { model?: string; body?: string; hung?: boolean } = {}

/** The prompt a request answers (its last typed user text) and how many model turns of it came before. */
const promptOf = (req: RequestView): { prompt: string; step: number } => {
  let step = 0
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!
    if (m.role === "assistant") step++
    const blocks = Array.isArray(m.content) ? (m.content as Array<{ type?: string; text?: string }>) : []
    const typed =
      typeof m.content === "string"
        ? m.content
        : blocks.some((b) => b.type === "tool_result")
          ? undefined
          : blocks.map((b) => b.text ?? "").join("\n")
    if (m.role === "user" && typed !== undefined) return { prompt: typed, step }
  }
  return { prompt: "", step }
}

/** The scripted model: each prompt of the test by its keyword. */
const answer = (req: RequestView): ReplyLike => {
  const { prompt, step } = promptOf(req)
  if (prompt.includes("CALL-ECHO")) {
    if (step === 0) {
      seen.model = req.model
      seen.body = JSON.stringify(req.body)
      return [toolUse("mcp__echo__echo", { text: "hi" })]
    }
    // Past --max-turns 2 the CLI stops: the third answer is never asked for.
    if (step === 1)
      return [
        text(`The tool said: ${req.toolResults().at(-1)?.content}. `),
        toolUse("mcp__echo__echo", { text: "again" }),
      ]
    return [text("PAST-THE-LIMIT")]
  }
  if (prompt.includes("WRITE-FILE")) {
    if (step === 0) return [toolUse("Write", { file_path: join(sandbox.ws, "written.txt"), content: "x\n" })]
    return [text(`Wrote it: ${req.toolResults().at(-1)?.isError ? "no" : "yes"}.`)]
  }
  if (prompt.includes("WAIT-HERE")) {
    seen.hung = true
    return hang()
  }
  return [text("(unexpected prompt)")]
}

beforeAll(async () => {
  node24 = acpxNode()
  buildBundledAgent()
  sandbox = makeSandbox("cvg-acpx-options-")
  server = await startModelServer({ main: [], exhausted: (_conversation, req) => answer(req) })
  writeFileSync(
    join(sandbox.root, "mcp.json"),
    JSON.stringify({
      mcpServers: [
        {
          name: "echo",
          command: process.execPath,
          args: [join(repoRoot, "e2e/mcp-echo-server.mjs")],
          env: [{ name: "MCP_ECHO_TAG", value: "FROM-ACPX" }],
        },
      ],
    }),
  )
}, 120_000)

afterAll(async () => {
  await server?.close()
  await removeAcpxSandbox(sandbox)
})

const setup = (ttl?: number): AcpxSetup => ({
  node: node24,
  agent: bundledAgent(join(sandbox.root, "data")),
  cwd: sandbox.ws,
  env: cliEnv(sandbox, server),
  ...(ttl !== undefined && { ttl }),
})
const permissionAsks = (lines: { method?: string }[]) =>
  lines.filter((l) => l.method === "session/request_permission")

describe("acpx's session options reach the model", () => {
  it("--model, --append-system-prompt, --allowed-tools, --mcp-config (stdio) and --max-turns", async () => {
    const run = await runAcpx(
      setup(),
      // acpx takes only a model id the agent advertised (no family word such as `haiku`).
      "--model",
      "claude-haiku-4-5",
      "--append-system-prompt",
      "APPENDED-BY-ACPX",
      "--allowed-tools",
      "mcp__echo__echo",
      "--max-turns",
      "2",
      "--mcp-config",
      join(sandbox.root, "mcp.json"),
      "exec",
      "CALL-ECHO please",
    )
    expect(run.status, `${run.stderr}\n${run.stdout.slice(-3000)}`).toBe(0)
    expect(seen.model).toBe("claude-haiku-4-5")
    expect(seen.body).toContain("APPENDED-BY-ACPX")
    // The stdio server's tool answered through the model, with no permission asked (--allowed-tools).
    expect(agentText(run.lines)).toContain("The tool said: echo: hi [FROM-ACPX]")
    expect(permissionAsks(run.lines)).toEqual([])
    // --max-turns 2: the turn stops after the second answer, and acpx is told why.
    expect(agentText(run.lines)).not.toContain("PAST-THE-LIMIT")
    expect(stopReasonOf(run.lines)).toBe("max_turn_requests")
  }, 120_000)

  it("set-mode, cancel, sessions list and close on one session", async () => {
    const acpx = (...args: string[]) => runAcpx(setup(30), ...args)
    const created = await acpx("sessions", "new")
    expect(created.status, created.stderr).toBe(0)

    // A prompt the model holds; acpx cancel ends it, and the prompt is answered `cancelled`.
    const held = acpx("prompt", "WAIT-HERE for a while")
    await waitFor(() => seen.hung === true, 60_000)
    expect(seen.hung).toBe(true)
    const cancelled = await acpx("cancel")
    expect(cancelled.status, cancelled.stderr).toBe(0)
    const end = await held
    expect(stopReasonOf(end.lines)).toBe("cancelled")

    // set-mode reaches the live session (acpx's queue owner): the Write goes through unasked (acpx would deny it).
    const mode = await acpx("set-mode", "accept_edits")
    expect(mode.status, mode.stderr).toBe(0)
    const wrote = await acpx("prompt", "WRITE-FILE now")
    expect(wrote.status, `${wrote.stderr}\n${wrote.stdout.slice(-3000)}`).toBe(0)
    expect(permissionAsks(wrote.lines)).toEqual([])
    expect(agentText(wrote.lines)).toBe("Wrote it: yes.")
    expect(existsSync(join(sandbox.ws, "written.txt"))).toBe(true)

    const listed = await acpx("sessions", "list")
    expect(listed.status, listed.stderr).toBe(0)
    // The session acpx made is listed by the agent, under the title of its first prompt.
    const listedSessions = (
      JSON.parse(listed.stdout.trim().split("\n").at(-1)!) as { sessions: Array<{ title?: string }> }
    ).sessions
    expect(listedSessions.map((s) => s.title)).toContain("WAIT-HERE for a while")

    const closed = await acpx("sessions", "close")
    expect(closed.status, closed.stderr).toBe(0)
    await waitFor(() => runningWithHome(/claude/, sandbox.home).length === 0)
    expect(runningWithHome(/claude/, sandbox.home)).toEqual([])
  }, 180_000)
})

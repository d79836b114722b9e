/**
 * The ACP agent as an editor runs it: `npm run acp`'s entry (host/acp/main.ts)
 * in its own process, spoken to as raw JSON-RPC lines on its stdio. It must
 * answer a malformed line and an unknown method with the protocol's errors and
 * go on, serve a session against the real CLI, and, when the client closes
 * the connection, end every `claude` it started and exit.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterEach, describe, expect, it } from "vitest"
import { cliEnv, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import { type ModelServer, startModelServer, text, toolUse } from "../testkit/model-server.ts"
import { repoRoot } from "./harness.ts"

type Message = {
  id?: number | string | null
  method?: string
  result?: unknown
  error?: { code: number; message: string }
  params?: unknown
}

let cleanup: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const step of cleanup.reverse()) await step()
  cleanup = []
})

/** `claude` processes whose HOME is this sandbox's. */
const claudesOf = (sandbox: Sandbox): number[] =>
  readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8")
        const env = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0")
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
        const running = stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
        return running && /claude/.test(cmd) && env.includes(`HOME=${sandbox.home}`)
      } catch {
        return false
      }
    })
    .map(Number)

const startAgent = async (
  server: ModelServer,
  sandbox: Sandbox,
  options: { data?: string; env?: Record<string, string> } = {},
) => {
  const data = join(sandbox.root, options.data ?? "data")
  mkdirSync(data, { recursive: true })
  const child: ChildProcess = spawn(
    process.execPath,
    [join(repoRoot, "node_modules/tsx/dist/cli.mjs"), join(repoRoot, "host/acp/main.ts"), "--data", data],
    { env: { ...cliEnv(sandbox, server), ...options.env }, stdio: ["pipe", "pipe", "pipe"] },
  )
  let stderr = ""
  child.stderr!.on("data", (d) => (stderr += String(d)))
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)))
  const inbox: Message[] = []
  const waiting = new Set<{ match: (m: Message) => boolean; resolve: (m: Message) => void }>()
  createInterface({ input: child.stdout! }).on("line", (line) => {
    const message = JSON.parse(line) as Message
    inbox.push(message)
    for (const w of [...waiting])
      if (w.match(message)) {
        waiting.delete(w)
        w.resolve(message)
      }
  })
  const next = (match: (m: Message) => boolean, ms = 30_000) =>
    new Promise<Message>((resolve, reject) => {
      const found = inbox.find(match)
      if (found) return resolve(found)
      const timer = setTimeout(
        () => reject(new Error(`no such message within ${ms} ms; stderr: ${stderr}`)),
        ms,
      )
      waiting.add({
        match,
        resolve: (m) => {
          clearTimeout(timer)
          resolve(m)
        },
      })
    })
  let id = 0
  const write = (line: string) => child.stdin!.write(`${line}\n`)
  const request = async (method: string, params: unknown) => {
    const n = ++id
    write(JSON.stringify({ jsonrpc: "2.0", id: n, method, params }))
    return next((m) => m.id === n && m.method === undefined)
  }
  cleanup.push(async () => {
    if (child.exitCode === null) child.kill("SIGKILL")
    await exited
  })
  return { child, exited, inbox, next, write, request, stderr: () => stderr }
}

describe("the ACP agent process on stdio", () => {
  it("answers bad input with the protocol's errors, serves a prompt, and ends every claude when the client leaves", async () => {
    const sandbox = makeSandbox("cvg-acp-")
    const server = await startModelServer({
      main: [[toolUse("Bash", { command: "touch made.txt", description: "Make a file" })], [text("made it")]],
    })
    cleanup.push(
      () => sandbox.cleanup(),
      () => server.close(),
    )
    const agent = await startAgent(server, sandbox)

    const init = await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} })
    expect(init.result).toMatchObject({ protocolVersion: 1, agentCapabilities: { loadSession: true } })

    agent.write("this is not json")
    const parseError = await agent.next((m) => m.error?.code === -32700)
    expect(parseError.id).toBeNull()
    expect((await agent.request("no/such_method", {})).error?.code).toBe(-32601)
    expect((await agent.request("session/new", { cwd: 42 })).error?.code).toBe(-32602)

    const created = (await agent.request("session/new", { cwd: sandbox.ws, mcpServers: [] })).result as {
      sessionId: string
    }
    const prompt = agent.request("session/prompt", {
      sessionId: created.sessionId,
      prompt: [{ type: "text", text: "make a file" }],
    })
    const asked = await agent.next((m) => m.method === "session/request_permission")
    const options = (asked.params as { options: Array<{ optionId: string; kind: string }> }).options
    agent.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: asked.id,
        result: {
          outcome: { outcome: "selected", optionId: options.find((o) => o.kind === "allow_once")!.optionId },
        },
      }),
    )
    expect(((await prompt).result as { stopReason: string }).stopReason).toBe("end_turn")
    const said = agent.inbox
      .filter((m) => m.method === "session/update")
      .map((m) => (m.params as { update: { sessionUpdate: string; content?: { text?: string } } }).update)
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content?.text)
      .join("")
    expect(said).toBe("made it")

    expect(claudesOf(sandbox).length).toBeGreaterThan(0)
    agent.child.stdin!.end()
    expect(await agent.exited).toBe(0)
    expect(claudesOf(sandbox)).toEqual([])
  })

  it("a first start in a fresh data folder answers session/load before the catalog probe ends, and the next prompt runs", async () => {
    const sandbox = makeSandbox("cvg-acp-")
    const server = await startModelServer({ main: [[text("first answer")], [text("after the load")]] })
    cleanup.push(
      () => sandbox.cleanup(),
      () => server.close(),
    )
    // A stored chat: one prompt through the agent, which then leaves.
    const first = await startAgent(server, sandbox)
    await first.request("initialize", { protocolVersion: 1, clientCapabilities: {} })
    const { sessionId } = (await first.request("session/new", { cwd: sandbox.ws, mcpServers: [] }))
      .result as {
      sessionId: string
    }
    await first.request("session/prompt", { sessionId, prompt: [{ type: "text", text: "remember me" }] })
    first.child.stdin!.end()
    expect(await first.exited).toBe(0)

    // Another data folder: no agent info kept, so this is a first start.
    const agent = await startAgent(server, sandbox, { data: "fresh", env: { CVG_ACP_DEBUG: "1" } })
    await agent.request("initialize", { protocolVersion: 1, clientCapabilities: {} })
    const loaded = await agent.request("session/load", { sessionId, cwd: sandbox.ws, mcpServers: [] })
    // The probe (two CLI starts and a catalog CLI) had not answered when the load did.
    expect(agent.stderr()).not.toContain("catalog probed")
    expect(loaded.error).toBeUndefined()
    const result = loaded.result as { modes?: { availableModes: Array<{ id: string }> } }
    expect(result.modes?.availableModes.map((m) => m.id)).toEqual([
      "supervised",
      "accept_edits",
      "auto",
      "full",
    ])
    const replayed = agent.inbox
      .filter((m) => m.method === "session/update")
      .map((m) => (m.params as { update: { sessionUpdate: string; content?: { text?: string } } }).update)
    expect(
      replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content?.text),
    ).toEqual(["remember me"])
    const answered = await agent.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "again" }],
    })
    expect((answered.result as { stopReason: string }).stopReason).toBe("end_turn")
    expect(agent.stderr()).toContain("catalog probed")
    agent.child.stdin!.end()
    expect(await agent.exited).toBe(0)
    expect(claudesOf(sandbox)).toEqual([])
  })
})

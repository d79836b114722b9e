import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cliEnv, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import { type ModelServer, startModelServer, text, toolUse } from "../testkit/model-server.ts"
import {
  type AcpxSetup,
  acpxNode,
  agentText,
  buildBundledAgent,
  bundledAgent,
  removeAcpxSandbox,
  runAcpx,
  runningWithHome,
} from "./acp-clients.ts"

let node24 = ""
let sandbox: Sandbox
let server: ModelServer

beforeAll(async () => {
  node24 = acpxNode()
  buildBundledAgent()
  sandbox = makeSandbox("cvg-acpx-")
  server = await startModelServer({
    main: [
      [toolUse("Bash", { command: "touch from-acpx.txt && echo done", description: "Make a file" })],
      (req) => [text(`The command said ${req.toolResults().at(-1)?.isError ? "no" : "yes"}.`)],
      (req) => [text(`Follow-up heard: ${req.lastUserText()}`)],
    ],
  })
}, 120_000)

afterAll(async () => {
  await server?.close()
  await removeAcpxSandbox(sandbox)
})

const setup = (): AcpxSetup => ({
  node: node24,
  agent: bundledAgent(join(sandbox.root, "data")),
  cwd: sandbox.ws,
  env: cliEnv(sandbox, server),
})
const acpx = (...args: string[]) => runAcpx(setup(), ...args)
const running = (command: RegExp) => runningWithHome(command, sandbox.home)
const claudes = () => running(/claude/)

describe("acpx drives the bundled agent", () => {
  it("runs a turn with an approval, then a follow-up prompt in the same session, and leaves no claude", async () => {
    const created = await acpx("sessions", "new")
    expect(created.status, created.stderr).toBe(0)

    const first = await acpx("--approve-all", "prompt", "make the file")
    expect(first.status, first.stderr).toBe(0)
    const asked = first.lines.filter((l) => l.method === "session/request_permission")
    expect(asked).toHaveLength(1)
    expect(JSON.stringify(asked[0]?.params)).toContain("touch from-acpx.txt")
    const bash = first.lines
      .filter((l) => l.method === "session/update")
      .map(
        (l) =>
          l.params?.update as { sessionUpdate: string; kind?: string; status?: string; toolCallId?: string },
      )
    const call = bash.find((u) => u.sessionUpdate === "tool_call" && u.kind === "execute")
    expect(bash.filter((u) => u.toolCallId === call?.toolCallId).at(-1)?.status).toBe("completed")
    expect(existsSync(join(sandbox.ws, "from-acpx.txt"))).toBe(true)
    expect(agentText(first.lines)).toBe("The command said yes.")
    expect(first.lines.find((l) => l.result?.stopReason)?.result?.stopReason).toBe("end_turn")

    // The first prompt's queue owner ends after its TTL (1 s); a prompt that reaches it while it is
    // shutting down gets acpx's retryable QUEUE_OWNER_CLOSED (seen at load average ~20), so wait for it.
    const ownerGone = Date.now() + 20_000
    while (running(/acpx/).length > 0 && Date.now() < ownerGone) await new Promise((r) => setTimeout(r, 100))
    const second = await acpx("--approve-all", "prompt", "and one more thing")
    expect(second.status, second.stderr).toBe(0)
    expect(agentText(second.lines)).toBe("Follow-up heard: and one more thing")
    expect(second.lines.find((l) => l.result?.stopReason)?.result?.stopReason).toBe("end_turn")

    // acpx's queue owner closes the agent after its TTL; the agent then ends its claude.
    const deadline = Date.now() + 20_000
    while (claudes().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250))
    expect(claudes()).toEqual([])
  }, 300_000)
})

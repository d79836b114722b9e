/**
 * The plan-mode scenario of `npm run bench -- acp`, the same work for both
 * adapters: a session with a stdio MCP server (e2e/mcp-echo-server.mjs) is
 * put in plan mode (ours: the `plan_mode` option; claude-agent-acp: its
 * `plan` mode), then one prompt in which the model calls the server's tool,
 * writes its plan, hands it in with ExitPlanMode (approved: the client
 * allows the first option) and answers. Measured: initialize → the prompt's
 * answer, wall time, and the adapter's peak RSS (acp-memory.ts); what each
 * did is counted beside them.
 */
import { join } from "node:path"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { initialize } from "../host/acp/testing.ts"
import { type RequestView, text, toolUse } from "../testkit/model-server.ts"
import type { TreePeak } from "./acp-memory.ts"
import { type Adapter, startAdapter, withWorld } from "./acp-scenarios.ts"

const ECHO = join(import.meta.dirname, "..", "e2e", "mcp-echo-server.mjs")

export interface PlanRun {
  readonly ms: number
  readonly memory: TreePeak
  readonly stop: string
  /** The echo tool's answer reached the model. */
  readonly echoed: boolean
  /** The model was told it is in plan mode. */
  readonly planned: boolean
  readonly permissions: number
}

/** How each adapter enters plan mode. */
const enterPlanMode = (
  adapter: Adapter,
  client: ReturnType<typeof startAdapter>["client"],
  sessionId: string,
) =>
  adapter.name.startsWith("ours")
    ? client.agent.request("session/set_config_option", {
        sessionId,
        configId: "plan_mode",
        value: "true",
      } as acp.SetSessionConfigOptionRequest)
    : client.agent.request("session/set_mode", { sessionId, modeId: "plan" })

export const planWithMcp = (adapter: Adapter): Promise<PlanRun> => {
  const seen = { echoed: false, planned: false, planFile: "" }
  return withWorld(
    (ws) => ({
      main: [
        (req: RequestView) => {
          const body = JSON.stringify(req.body)
          seen.planned = /plan mode/i.test(body)
          seen.planFile = /create your plan at (\S+\.md)/.exec(body)?.[1] ?? join(ws, "plan.md")
          return [toolUse("mcp__echo__echo", { text: "plan input" })]
        },
        (req: RequestView) => {
          seen.echoed = (req.toolResults().at(-1)?.content ?? "").includes("echo: plan input")
          return [toolUse("Write", { file_path: seen.planFile, content: "# Plan\n1. Say done\n" })]
        },
        [toolUse("ExitPlanMode", {})],
        [text("Done as planned.")],
      ],
    }),
    async (sandbox, server) => {
      const a = startAdapter(adapter, sandbox, server)
      try {
        const t0 = performance.now()
        await initialize(a.client, { elicitation: true })
        const session = await a.client.agent.request("session/new", {
          cwd: sandbox.ws,
          mcpServers: [{ name: "echo", command: process.execPath, args: [ECHO], env: [] }],
        })
        await enterPlanMode(adapter, a.client, session.sessionId)
        const answer = await a.client.agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "Plan it, using the echo tool" }],
        })
        const ms = performance.now() - t0
        return {
          ms,
          memory: await a.memory(),
          stop: answer.stopReason,
          echoed: seen.echoed,
          planned: seen.planned,
          permissions: a.client.permissions.length,
        }
      } finally {
        await a.stop()
      }
    },
  )
}

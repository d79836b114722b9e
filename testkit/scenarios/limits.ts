// Scenarios of the API's edges and workflows: rate limits (through a gateway
// token), a retried API error, a dynamic workflow.

import { initialize, isResult, isType, nextResult } from "../cli.ts"
import { message, rateLimitHeaders, rateLimited, overloaded, text, toolUse } from "../model-server.ts"
import { type ScenarioDef, turn } from "../scenario-run.ts"

/**
 * An ANTHROPIC_AUTH_TOKEN the CLI takes for a "claude-gateway" credential (an unsigned JWT whose
 * payload has aud "claude-gateway"). With it, and no ANTHROPIC_API_KEY, the CLI reads the
 * anthropic-ratelimit-unified-* headers and emits `rate_limit_event`; with a plain API key it does not.
 */
export const GATEWAY_AUTH_TOKEN = `e30.${Buffer.from(JSON.stringify({ aud: "claude-gateway", sub: "testkit" })).toString("base64url")}.mock`

/** Env for rate-limit scenarios: gateway token instead of the API key. */
export const RATE_LIMIT_ENV: Readonly<Record<string, string | undefined>> = {
  ANTHROPIC_API_KEY: undefined,
  ANTHROPIC_AUTH_TOKEN: GATEWAY_AUTH_TOKEN,
}

export const rateLimit: ScenarioDef = {
  name: "rate_limit",
  description:
    "Gateway credential, CLAUDE_CODE_MAX_RETRIES=0: the first request gets 429 with anthropic-ratelimit-unified-* headers (rate_limit_event rejected, error result); the next user message succeeds with allowed_warning headers.",
  env: { ...RATE_LIMIT_ENV, CLAUDE_CODE_MAX_RETRIES: "0" },
  setup: () => {
    const now = Math.floor(Date.now() / 1000)
    return {
      model: {
        main: [
          rateLimited({ retryAfter: 1, resetInSeconds: 3600, now }),
          message([text("Recovered after the rate limit.")], {
            headers: rateLimitHeaders({ status: "allowed_warning", utilization: 0.92, now }),
          }),
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        const r = await turn(p, "Hello despite limits", 45_000)
        ctx.note("first_result", {
          subtype: r.subtype,
          is_error: r.is_error,
          terminal_reason: r.terminal_reason,
        })
        const r2 = await turn(p, "Try again", 45_000)
        ctx.note("second_result", { subtype: r2.subtype, is_error: r2.is_error })
      },
    }
  },
}

export const apiRetry: ScenarioDef = {
  name: "api_retry",
  description:
    "API key credential: 429 (with rate-limit headers) then 529 overloaded, each retried by the CLI (system/api_retry), then success.",
  setup: () => ({
    model: {
      main: [rateLimited({ retryAfter: 0 }), overloaded(), [text("Finally through.")]],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Hello through the storm", 45_000)
    },
  }),
}

const WORKFLOW_SCRIPT = `export const meta = {
  name: 'mock-flow',
  description: 'Two scripted agents in two phases',
  phases: [{ title: 'Gather' }, { title: 'Report' }],
}
const a = await agent('WF-AGENT-A: say alpha', { label: 'alpha', phase: 'Gather' })
const b = await agent('WF-AGENT-B: say beta after ' + a, { label: 'beta', phase: 'Report' })
return { a, b }
`

export const workflow: ScenarioDef = {
  name: "dynamic_workflow",
  description:
    "A dynamic workflow via the Workflow tool: two agents in two phases; its end starts a new turn.",
  timeoutMs: 90_000,
  setup: () => ({
    model: {
      main: [
        [toolUse("Workflow", { script: WORKFLOW_SCRIPT })],
        [text("The workflow is running.")],
        [text("The workflow finished.")],
      ],
      subagents: [
        { match: "WF-AGENT-A", name: "wf_a", turns: [[text("alpha")]] },
        { match: "WF-AGENT-B", name: "wf_b", turns: [[text("beta")]] },
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      const r1 = await turn(p, "Run the mock workflow", 45_000)
      ctx.note("first_result_subtype", r1.subtype)
      const started = p.frames.some(
        (f) => f.type === "system" && f.subtype === "task_started" && f.task_type === "local_workflow",
      )
      ctx.note("workflow_started", started)
      if (!started) return
      // 2.1.282 can finish the workflow (and start the turn its end begins) before the first result.
      if (!p.frames.some(isType("system", "task_notification")))
        await p.next(isType("system", "task_notification"), 60_000)
      if (p.frames.filter(isResult).length < 2) await nextResult(p, 30_000)
    },
  }),
}

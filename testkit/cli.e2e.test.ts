// End-to-end: the REAL Claude Code CLI (pinned devDependency) against the
// scripted model on 127.0.0.1. Each test has its own sandbox.

import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import {
  type Frame,
  initialize,
  isType,
  killAll,
  liveProcesses,
  makeSandbox,
  spawnClaude,
  standardArgs,
  toolResultTexts,
} from "./cli.ts"
import { CLI_CHANGES, cliUnderTest } from "../e2e/harness.ts"
import { hang, startModelServer } from "./model-server.ts"
import { bashAllow, rateLimit, runScenario, type ScenarioRun, textThinking } from "./scenarios.ts"

const runs: ScenarioRun[] = []
afterAll(async () => {
  await killAll()
  expect(liveProcesses()).toEqual([])
  await Promise.all(runs.map((r) => r.cleanup()))
})

const results = (fs: readonly Frame[]) => fs.filter((f) => f.type === "result")

describe("real CLI against the scripted model", () => {
  it("initialize answers with the model list; a thinking+text turn ends in a success result with usage", async () => {
    const run = await runScenario(textThinking)
    runs.push(run)
    const [p] = run.processes
    const init = p!.frames.find((f) => f.type === "control_response") as Frame
    const response = (init.response as { response: { models: Array<{ value: string }> } }).response
    expect(response.models.length).toBeGreaterThan(0)
    expect(response.models.map((m) => m.value)).toContain("default")
    const [r1, r2] = results(p!.frames)
    expect(r1).toMatchObject({
      subtype: "success",
      is_error: false,
      result: "Hello! I am the scripted model.",
    })
    expect(
      (r1!.usage as { output_tokens_details: { thinking_tokens: number } }).output_tokens_details
        .thinking_tokens,
    ).toBeGreaterThan(0)
    expect(r1!.usage).toHaveProperty("input_tokens")
    expect(r2).toMatchObject({ subtype: "success", result: "Second answer, no thinking this time." })
    const thinkingFrame = p!.frames.find(
      (f) => f.type === "assistant" && JSON.stringify(f.message).includes('"type":"thinking"'),
    )
    expect(thinkingFrame).toBeDefined()
    const [first, second] = run.server.requests.filter((r) => r.conversation === "main").map((r) => r.roles)
    expect(first).toEqual(["user", "system"])
    // 2.1.282 adds a closing system reminder to the second request; 2.1.332 does not.
    expect(second?.slice(0, 4)).toEqual(["user", "system", "assistant", "user"])
    expect(second?.slice(4).every((role) => role === "system")).toBe(true)
    expect(p!.exitCode).toBe(0)
  })

  it("can_use_tool round trip: Bash allowed, the tool_result carries the command output", async () => {
    const run = await runScenario(bashAllow)
    runs.push(run)
    const [p] = run.processes
    const ask = p!.frames.find(
      (f) => f.type === "control_request" && (f.request as { subtype: string }).subtype === "can_use_tool",
    )
    expect(ask?.request).toMatchObject({
      tool_name: "Bash",
      input: { command: expect.stringContaining("touch") },
    })
    const reply = p!.sent.find((f) => f.type === "control_response") as Frame
    expect(reply.response).toMatchObject({ request_id: ask!.request_id, response: { behavior: "allow" } })
    const out = p!.frames.flatMap(toolResultTexts)
    expect(out).toContain("bash-output-ok")
    expect(existsSync(join(run.sandbox.ws, "made-by-bash.txt"))).toBe(true)
    expect(results(p!.frames).at(-1)).toMatchObject({
      subtype: "success",
      result: "The command printed: bash-output-ok",
    })
  })

  it("429 with rate-limit headers: rate_limit_event rejected, error result, then a success", async () => {
    const run = await runScenario(rateLimit)
    runs.push(run)
    const [p] = run.processes
    const events = p!.frames.filter(isType("rate_limit_event"))
    if (!cliUnderTest.atLeast(CLI_CHANGES.rateLimitEventForApiKey)) {
      // Older releases write no rate_limit_event for an API key: only the error result says so.
      expect(events).toEqual([])
    } else {
      expect(events[0]?.rate_limit_info).toMatchObject({ status: "rejected", rateLimitType: "five_hour" })
      expect(events.some((e) => (e.rate_limit_info as { status: string }).status === "allowed_warning")).toBe(
        true,
      )
    }
    const [r1, r2] = results(p!.frames)
    expect(r1).toMatchObject({ is_error: true })
    expect(r2).toMatchObject({ subtype: "success", result: "Recovered after the rate limit." })
    // 2.1.282 also sends a HEAD /api/hello first (conversation "other").
    expect(run.server.requests.filter((r) => r.conversation === "main").map((r) => r.status)).toEqual([
      429, 200,
    ])
  })

  it("killAll ends a CLI stuck on a model stream that never answers", async () => {
    const server = await startModelServer({ main: [hang()] })
    const sandbox = makeSandbox("cvg-tk-hang-")
    try {
      const p = spawnClaude(standardArgs(), { sandbox, server })
      await initialize(p)
      p.sendUser("hello?")
      await p.next(isType("system", "status"), 15_000)
      expect(p.isAlive()).toBe(true)
      await killAll()
      expect(p.isAlive()).toBe(false)
      expect(liveProcesses()).toEqual([])
    } finally {
      await server.close()
      sandbox.cleanup()
    }
  })
})

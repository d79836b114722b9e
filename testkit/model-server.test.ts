import { afterEach, describe, expect, it } from "vitest"
import {
  classifySide,
  cut,
  delay,
  hang,
  type ModelServer,
  message,
  midBlock,
  rateLimited,
  stall,
  startModelServer,
  text,
  thinking,
  toolUse,
} from "./model-server.ts"

let server: ModelServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const post = (body: unknown, path = "/v1/messages", signal?: AbortSignal) =>
  fetch(`${server!.url}${path}`, {
    method: "POST",
    ...(signal ? { signal } : {}),
    headers: { "content-type": "application/json", "anthropic-beta": "a-1,b-2" },
    body: JSON.stringify(body),
  })

const TOOLS = [{ name: "Bash" }, { name: "Agent" }]
const req = (userText: string, extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  stream: true,
  max_tokens: 1000,
  system: "SECRET SYSTEM PROMPT",
  thinking: { type: "adaptive", display: "updates" },
  output_config: { effort: "medium" },
  tools: TOOLS,
  messages: [{ role: "user", content: [{ type: "text", text: userText }] }],
  ...extra,
})

function sse(raw: string): Array<Record<string, unknown>> {
  return raw
    .split("\n\n")
    .map((chunk) => chunk.split("\n").find((l) => l.startsWith("data: ")))
    .filter((l): l is string => l !== undefined)
    .map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>)
}

describe("model server", () => {
  it("streams thinking, text and tool_use as SSE with deterministic ids and usage", async () => {
    server = await startModelServer({
      main: [[thinking("hmm"), text("hello"), toolUse("Bash", { command: "echo hi" })]],
    })
    const res = await post(req("go"))
    expect(res.headers.get("content-type")).toContain("text/event-stream")
    const events = sse(await res.text())
    expect(events[0]).toMatchObject({ type: "message_start", message: { id: "msg_mock_0001" } })
    const deltas = events
      .filter((e) => e.type === "content_block_delta")
      .map((e) => (e.delta as { type: string }).type)
    expect(deltas).toContain("thinking_delta")
    expect(deltas).toContain("signature_delta")
    expect(deltas).toContain("text_delta")
    expect(deltas).toContain("input_json_delta")
    const start = events.find(
      (e) => e.type === "content_block_start" && (e.content_block as { type: string }).type === "tool_use",
    )
    expect(start?.content_block).toMatchObject({ id: "toolu_mock_0001", name: "Bash" })
    const json = events
      .filter((e) => (e.delta as { type?: string } | undefined)?.type === "input_json_delta")
      .map((e) => (e.delta as { partial_json: string }).partial_json)
      .join("")
    expect(JSON.parse(json)).toEqual({ command: "echo hi" })
    const md = events.find((e) => e.type === "message_delta") as Record<string, unknown>
    expect(md.delta).toMatchObject({ stop_reason: "tool_use" })
    expect(
      (md.usage as { output_tokens_details: { thinking_tokens: number } }).output_tokens_details
        .thinking_tokens,
    ).toBe(1)
    expect(events.at(-1)?.type).toBe("message_stop")
  })

  it("records metadata only, never bodies or system text", async () => {
    server = await startModelServer({ main: [[text("a")]] })
    await (await post(req("first prompt"))).text()
    const [m] = server.requests
    expect(m).toMatchObject({
      conversation: "main",
      turnIndex: 0,
      model: "claude-test",
      effort: "medium",
      thinking: { type: "adaptive", display: "updates" },
      max_tokens: 1000,
      messageCount: 1,
      roles: ["user"],
      tools: ["Bash", "Agent"],
      betas: ["a-1", "b-2"],
      status: 200,
    })
    const dump = JSON.stringify(server.requests)
    expect(dump).not.toContain("SECRET")
    expect(dump).not.toContain("first prompt")
  })

  it("routes subagents by prompt, side requests without consuming the script, function turns", async () => {
    server = await startModelServer({
      main: [[text("main 0")], (r) => [text(`saw ${r.toolResults()[0]?.content}`)]],
      subagents: [{ match: "SUB-X", name: "x", turns: [[text("sub 0")]] }],
    })
    const body = async (b: unknown) => JSON.stringify(sse(await (await post(b)).text()))
    expect(await body(req("SUB-X do it"))).toContain("sub 0")
    expect(await body(req("no tools here", { tools: [] }))).toContain("OK.")
    expect(
      await body(
        req("x", {
          messages: [
            { role: "user", content: "Your task is to create a detailed summary of the conversation so far" },
          ],
        }),
      ),
    ).toContain("<summary>")
    expect(await body(req("main"))).toContain("main 0")
    const withResult = req("x", {
      messages: [
        { role: "user", content: "x" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "OUT-42" }] },
      ],
    })
    expect(await body(withResult)).toContain("saw OUT-42")
    expect(await body(req("more"))).toContain("(script exhausted)")
    expect(server.requests.map((r) => r.conversation)).toEqual([
      "subagent:x",
      "side:no_tools",
      "side:compact",
      "main",
      "main",
      "main",
    ])
    expect(server.requests.at(-1)?.exhausted).toBe(true)
  })

  it("answers errors with rate-limit headers, non-streaming requests and count_tokens", async () => {
    server = await startModelServer({ main: [rateLimited({ retryAfter: 2 }), message([text("plain")])] })
    const r1 = await post(req("a"))
    expect(r1.status).toBe(429)
    expect(r1.headers.get("anthropic-ratelimit-unified-status")).toBe("rejected")
    expect(r1.headers.get("retry-after")).toBe("2")
    expect(await r1.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } })
    const r2 = await post(req("b", { stream: false }))
    expect(await r2.json()).toMatchObject({ type: "message", content: [{ type: "text", text: "plain" }] })
    const r3 = await post(req("c"), "/v1/messages/count_tokens")
    expect(await r3.json()).toHaveProperty("input_tokens")
  })

  it("classifies side requests", () => {
    expect(classifySide(req("hello"))).toBeUndefined()
    expect(classifySide(req("hello", { tools: [] }))).toBe("no_tools")
  })
})

describe("faults", () => {
  it("stall pauses mid-stream, cut drops the connection, delay holds the headers, hang never answers", async () => {
    server = await startModelServer({
      main: [
        [text("before"), stall(300), text("after")],
        [text("partial"), cut()],
        delay(200, [text("late")]),
        hang(),
      ],
    })
    let t = Date.now()
    const stalled = await (await post(req("a"))).text()
    expect(Date.now() - t).toBeGreaterThanOrEqual(290)
    expect(stalled).toContain("after")
    await expect((await post(req("b"))).text()).rejects.toThrow()
    t = Date.now()
    await (await post(req("c"))).text()
    expect(Date.now() - t).toBeGreaterThanOrEqual(190)
    const ac = new AbortController()
    const pending = post(req("d"), "/v1/messages", ac.signal)
    await new Promise((r) => setTimeout(r, 200))
    expect(server.requests.at(-1)?.status).toBe("hang")
    ac.abort()
    await expect(pending).rejects.toThrow()
  })

  it("midBlock stalls or cuts inside a text block and inside a tool input, after the chosen delta", async () => {
    const long = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen"
    server = await startModelServer(
      {
        main: [
          [midBlock(text(long), 1, stall(300))],
          [midBlock(text(long), 2, cut())],
          [midBlock(toolUse("Bash", { command: "echo hi", description: "Say hi" }), 1, cut())],
        ],
      },
      { chunkSize: 10 },
    )
    const t = Date.now()
    const stalled = await (await post(req("a"))).text()
    expect(Date.now() - t).toBeGreaterThanOrEqual(290)
    expect(stalled).toContain("fourteen")
    const cutText = await (await post(req("b"))).text().catch((e: unknown) => String(e))
    expect(cutText).not.toContain("fourteen")
    expect(server.requests.at(-1)?.status).toBe("cut")
    await (await post(req("c"))).text().catch(() => "")
    expect(server.requests.at(-1)?.status).toBe("cut")
  })
})

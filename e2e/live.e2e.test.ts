/**
 * Live sessions end to end: the plugin inside host/, the real CLI, the
 * scripted model. Each test has its own model script, sandbox and host.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { text, thinking, toolUse } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  ofType,
  toolResultText,
  promptAndWait,
  startWorld,
  strayClaudes,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

describe("live sessions against the real CLI", () => {
  it("streams reasoning and text and ends the run Completed with usage", async () => {
    world = await startWorld({
      main: [[thinking("Let me think about greetings."), text("Hello from the scripted model.")]],
    })
    const { session_id } = await createSession(world)
    // The stray-process check below can see a live session's CLI.
    expect(strayClaudes().length).toBeGreaterThan(0)
    const { ended } = await promptAndWait(world, session_id, "Say hello")
    expect(ended.outcome).toBe("Completed")
    const events = world.events(session_id)
    const reasoning = ofType(events, "ReasoningDelta")
      .map((e) => e.text)
      .join("")
    const said = ofType(events, "TextDelta")
      .map((e) => e.text)
      .join("")
    expect(reasoning).toContain("Let me think about greetings.")
    expect(said).toBe("Hello from the scripted model.")
    expect(ofType(events, "RunStarted")).toHaveLength(1)
    expect(ended.usage?.output_tokens).toBeGreaterThan(0)
  })

  it("initialize probes the catalog without a prompt, leaving no session behind", async () => {
    world = await startWorld({ main: [] })
    const w = world
    const first = await w.host.call(w.agentId, "initialize")
    expect(first.status).toBe("Ready")
    await w.host.events.waitFor((e) => e.kind === "info_changed" && e.agentId === w.agentId)
    const info = await w.host.call(w.agentId, "initialize")
    // The CLI's picker values became aliases of the versioned models.
    const aliases = info.models.flatMap((m) => m.aliases ?? [])
    expect(aliases).toEqual(expect.arrayContaining(["default", "sonnet"]))
    // 2.1.332 calls it `opus`, 2.1.282 `opus[1m]`.
    expect(aliases.some((a) => a === "opus" || a === "opus[1m]")).toBe(true)
    expect(w.server.requests.filter((r) => r.conversation === "main")).toEqual([])
    const listed = await w.host.call(w.agentId, "listSessions", {})
    expect(listed.sessions).toEqual([])
    expect(w.host.processes().filter((p) => p.command === "claude")).toEqual([])
  })

  it("asks before Bash: an approved command runs, a denied one does not", async () => {
    world = await startWorld({
      main: [
        [toolUse("Bash", { command: "touch approved.txt", description: "Create approved.txt" })],
        (req) => [text(`after allow: ${toolResultText(req).includes("Error") ? "error" : "ok"}`)],
        [toolUse("Bash", { command: "touch denied.txt", description: "Create denied.txt" })],
        (req) => [text(`after deny: ${toolResultText(req)}`)],
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const first = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "make a file" })
    const approval = await w.waitFor(session_id, "ApprovalRequested")
    expect(approval).toMatchObject({ tool_name: "Bash", run_id: first.run_id })
    expect(approval.input).toMatchObject({ command: "touch approved.txt" })
    await w.host.call(w.agentId, "answerApproval", {
      sessionId: session_id,
      approvalId: approval.approval_id,
      decision: "allow",
    })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id)
    expect(ended.outcome).toBe("Completed")
    expect(existsSync(join(w.sandbox.ws, "approved.txt"))).toBe(true)
    const finished = ofType(w.events(session_id), "ToolCallFinished").find((e) => e.call.name === "Bash")
    expect(finished?.call).toMatchObject({ status: "Completed", exit_code: 0 })

    const second = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "make another" })
    const denial = await w.waitFor(session_id, "ApprovalRequested", (e) => e.run_id === second.run_id)
    await w.host.call(w.agentId, "answerApproval", {
      sessionId: session_id,
      approvalId: denial.approval_id,
      decision: "deny",
      message: "Not this one.",
    })
    await w.waitFor(session_id, "RunEnded", (e) => e.run_id === second.run_id)
    expect(existsSync(join(w.sandbox.ws, "denied.txt"))).toBe(false)
    const failed = ofType(w.events(session_id), "ToolCallFinished").filter((e) => e.call.name === "Bash")[1]
    expect(failed?.call.status).toBe("Failed")
    const said = ofType(w.events(session_id), "TextDelta")
      .map((e) => e.text)
      .join("")
    expect(said).toContain("after allow: ok")
    expect(said).toContain("Not this one.")
  })

  it("shows Write with the new text and Edit with a unified diff", async () => {
    let file = ""
    world = await startWorld({
      main: [
        () => [toolUse("Write", { file_path: file, content: "alpha\nbeta\ngamma\n" })],
        () => [toolUse("Edit", { file_path: file, old_string: "beta", new_string: "BETA" })],
        [text("edited")],
      ],
    })
    const w = world
    file = join(w.sandbox.ws, "notes.txt")
    const { session_id } = await createSession(w, { options: { approval_mode: "accept_edits" } })
    const { ended } = await promptAndWait(w, session_id, "write and edit")
    expect(ended.outcome).toBe("Completed")
    const started = ofType(w.events(session_id), "ToolCallStarted")
    const write = started.find((e) => e.call.name === "Write")
    const edit = started.find((e) => e.call.name === "Edit")
    expect(write?.call).toMatchObject({ kind: "edit", new_text: "alpha\nbeta\ngamma\n" })
    expect(edit?.call.diff).toContain("-beta")
    expect(edit?.call.diff).toContain("+BETA")
    expect(readFileSync(file, "utf8")).toBe("alpha\nBETA\ngamma\n")
  })

  it("turns TodoWrite into a plan", async () => {
    world = await startWorld(
      {
        main: [
          [
            toolUse("TodoWrite", {
              todos: [
                { content: "Read the code", status: "completed", activeForm: "Reading the code" },
                { content: "Fix the bug", status: "in_progress", activeForm: "Fixing the bug" },
              ],
            }),
          ],
          [text("planned")],
        ],
      },
      { env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1", CLAUDE_CODE_ENABLE_TASKS: "0" } },
    )
    const { session_id } = await createSession(world)
    const { ended } = await promptAndWait(world, session_id, "plan it")
    expect(ended.outcome).toBe("Completed")
    const plan = ofType(world.events(session_id), "Plan")[0]
    expect(plan?.entries).toEqual([
      expect.objectContaining({ content: "Read the code", status: "completed" }),
      expect.objectContaining({ content: "Fix the bug", status: "in_progress" }),
    ])
  })

  it("asks AskUserQuestion and returns the answer to the model", async () => {
    const question = "Which color should the widget be?"
    let seen = ""
    world = await startWorld({
      main: [
        [
          toolUse("AskUserQuestion", {
            questions: [
              {
                question,
                header: "Color",
                multiSelect: false,
                options: [
                  { label: "Blue", description: "Cool" },
                  { label: "Red", description: "Warm" },
                ],
              },
            ],
          }),
        ],
        (req) => {
          seen = toolResultText(req)
          return [text("noted")]
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "ask me" })
    const asked = await w.waitFor(session_id, "QuestionAsked")
    expect(asked.questions[0]).toMatchObject({ question, header: "Color", multi_select: false })
    expect(ofType(w.events(session_id), "ApprovalRequested")).toHaveLength(0)
    await w.host.call(w.agentId, "answerQuestion", {
      sessionId: session_id,
      questionId: asked.question_id,
      answers: { [question]: "Blue" },
    })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended.outcome).toBe("Completed")
    expect(seen).toContain(`"${question}"="Blue"`)
  })

  it("calls a plugin tool through mcp_message", async () => {
    const calls: unknown[] = []
    world = await startWorld({
      main: [
        [toolUse("mcp__convergence__shout", { text: "hello" })],
        (req) => [text(`tool said ${toolResultText(req)}`)],
      ],
    })
    const w = world
    w.host.registerTool(
      "shout",
      {
        description: "Upper-case a text",
        inputSchema: { type: "object", properties: { text: { type: "string" } } },
      },
      (input) => {
        calls.push(input)
        return { content: [{ type: "text", text: String((input as { text: string }).text).toUpperCase() }] }
      },
    )
    const { session_id } = await createSession(w, { tools: w.host.tools(), instructions: "Use shout." })
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "shout hello" })
    const approval = await w.waitFor(session_id, "ApprovalRequested")
    await w.host.call(w.agentId, "answerApproval", {
      sessionId: session_id,
      approvalId: approval.approval_id,
      decision: "allow",
    })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended.outcome).toBe("Completed")
    expect(calls).toEqual([{ text: "hello" }])
    const said = ofType(w.events(session_id), "TextDelta")
      .map((e) => e.text)
      .join("")
    expect(said).toContain("tool said HELLO")
    // The chat read back from the CLI's stored transcript (the notes' claude_calls_a_plugin_tool).
    const stored = await w.host.call(w.agentId, "readSession", { sessionId: session_id, cwd: w.sandbox.ws })
    const call = stored.items.find((i) => i.type === "tool_call")
    expect(call?.type === "tool_call" && call.call).toMatchObject({
      name: "mcp__convergence__shout",
      title: "shout",
      kind: "mcp",
      input: { text: "hello" },
      status: "Completed",
    })
    expect(call?.type === "tool_call" && JSON.stringify(call.call.output)).toContain("HELLO")
    expect(stored.items.filter((i) => i.type === "user").map((i) => i.type === "user" && i.text)).toEqual([
      "shout hello",
    ])
    expect(stored.items.some((i) => i.type === "assistant" && i.text.includes("tool said HELLO"))).toBe(true)
  })

  it("cancels a long Bash: the run ends Cancelled within 10 s and the session goes on", async () => {
    world = await startWorld({
      main: [
        [toolUse("Bash", { command: "echo started && sleep 30", description: "Sleep" })],
        [text("after cancel")],
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "sleep" })
    await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    const at = Date.now()
    await w.host.call(w.agentId, "cancel", { sessionId: session_id })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id, 15_000)
    expect(ended.outcome).toBe("Cancelled")
    expect(Date.now() - at).toBeLessThan(10_000)
    const { ended: next } = await promptAndWait(w, session_id, "go on")
    expect(next.outcome).toBe("Completed")
  })

  it("steers a running turn with a second prompt", async () => {
    let steeredSeen = false
    world = await startWorld({
      main: [
        [toolUse("Bash", { command: "sleep 2", description: "Wait" })],
        (req) => {
          steeredSeen = JSON.stringify(req.messages).includes("Also say STEERED")
          return [text(steeredSeen ? "STEERED" : "not steered")]
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const first = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "wait",
      deliveryId: "d1",
    })
    await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    const second = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "Also say STEERED",
      deliveryId: "d2",
    })
    expect(second).toEqual({ run_id: first.run_id, steered: true, input_uuid: expect.any(String) })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id)
    expect(ended.outcome).toBe("Completed")
    expect(steeredSeen).toBe(true)
    expect(ended.delivery_ids).toEqual(["d1", "d2"])
    expect(ofType(w.events(session_id), "RunStarted")).toHaveLength(1)
  })

  it("a CLI killed mid-turn fails the run; the next prompt resumes the conversation", async () => {
    let resumedWith: string[] = []
    world = await startWorld({
      main: [
        [text("First answer.")],
        [toolUse("Bash", { command: "echo started && sleep 30", description: "Sleep" })],
        (req) => {
          resumedWith = req.messages.map((m) => JSON.stringify(m.content))
          return [text("resumed")]
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    await promptAndWait(w, session_id, "Remember the word PELICAN")
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "sleep now" })
    await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    const [claude] = w.host.processes().filter((p) => p.command === "claude")
    const killed = claude?.pid
    expect(claude).toBeDefined()
    process.kill(claude!.pid, "SIGKILL")
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended.outcome).toBe("Failed")
    expect(ofType(w.events(session_id), "Notice").some((n) => n.level === "error")).toBe(true)

    const { ended: next } = await promptAndWait(w, session_id, "are you back?")
    expect(next.outcome).toBe("Completed")
    const relaunched = w.host.processes().find((p) => p.command === "claude" && p.pid !== killed)
    expect(relaunched?.args).toContain("--resume")
    expect(relaunched?.args[relaunched.args.indexOf("--resume") + 1]).toBe(session_id)
    expect(resumedWith.join("\n")).toContain("PELICAN")
  })

  it("changes the model and the effort live", async () => {
    world = await startWorld({ main: [[text("one")], [text("two")]] })
    const w = world
    const { session_id } = await createSession(w, { options: { effort: "low" } })
    await promptAndWait(w, session_id, "first")
    await w.host.call(w.agentId, "setOption", {
      sessionId: session_id,
      optionId: "model",
      value: "claude-sonnet-5-5",
    })
    await w.host.call(w.agentId, "setOption", { sessionId: session_id, optionId: "effort", value: "high" })
    await promptAndWait(w, session_id, "second")
    const main = w.server.requests.filter((r) => r.conversation === "main")
    expect(main[0]?.effort).toBe("low")
    const last = main[main.length - 1]
    expect(last?.model).toBe("claude-sonnet-5-5")
    expect(last?.effort).toBe("high")
    // The CLI was not restarted for it.
    expect(ofType(w.events(session_id), "Notice").filter((n) => n.level === "error")).toEqual([])
  })
})

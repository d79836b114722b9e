/**
 * The session against a scripted `claude` (FakePeer): the control protocol,
 * one round trip at a time. The mapper here is a small stand-in so these
 * tests pin the session's own rules; agent.test.ts runs the real mapper.
 */
import { Deferred, Effect, Exit, Fiber, Scope } from "effect"
import * as TestClock from "effect/testing/TestClock"
import { describe, expect, it } from "vitest"
import { brokerContext } from "../sdk/context.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { makeFakePeer, type FakePeer, type FakeProcess, type Frame } from "../sdk/testing/fake-peer.ts"
import { makeMemoryBroker, type MemoryBroker } from "../sdk/testing/memory-broker.ts"
import type { Broker, ToolResult } from "../sdk/plugin-api.ts"
import { launchArgs } from "./launch.ts"
import {
  type Frame as SessionFrame,
  type LiveSession,
  makeSession,
  type SessionMapper,
  type SessionSetup,
} from "../session.ts"
import type { StartMode } from "../types.ts"

const HOST_ID = "host-session-1"
const CLI_ID = "11111111-1111-4111-8111-111111111111"

const decodeLine = (line: string) => {
  if (line.trim() === "") return { kind: "blank" as const }
  try {
    const value = JSON.parse(line)
    if (value && typeof value === "object" && typeof value.type === "string")
      return { kind: "frame" as const, frame: value as SessionFrame }
    return { kind: "error" as const, message: "not a frame" }
  } catch (error) {
    return { kind: "error" as const, message: String(error) }
  }
}

/** Maps results to signals and assistant text to one TextDelta; enough to drive runs. */
const testMapper = (): SessionMapper => ({
  map: (wireFrame, runId) => {
    const frame = wireFrame as unknown as Record<string, unknown>
    if (frame.type === "result")
      return {
        events: [],
        signals: [
          {
            type: "result",
            subtype: String(frame.subtype),
            isError: frame.is_error === true,
            errors: (frame.errors as string[] | undefined) ?? [],
            userMessageUuids: (frame.user_message_uuids as string[] | undefined) ?? [],
            usage: { input_tokens: 1, output_tokens: 2 },
          },
        ],
      }
    if (frame.type === "assistant")
      return {
        events: [
          {
            type: "TextDelta",
            session_id: HOST_ID,
            ...(runId ? { run_id: runId } : {}),
            item_id: "m:0",
            text: String(frame.text ?? ""),
          },
        ],
        signals: [],
      }
    return { events: [], signals: [] }
  },
  taskForAgent: (agentId) => (agentId === "agent-1" ? "toolu_agent" : undefined),
  agentForTask: (taskId) => (taskId === "toolu_agent" ? { agentId: "agent-1", kind: "agent" } : undefined),
  setModel: () => {},
  mapAgentRecords: () => [],
  finishWorkflow: () => [],
  setTaskWaiting: (taskId, waiting) => [
    {
      type: "Task",
      session_id: HOST_ID,
      task: { id: taskId, title: "agent", status: waiting ? "Waiting" : "Running" },
    },
  ],
})

interface Harness {
  readonly peer: FakePeer
  readonly broker: MemoryBroker
  readonly session: LiveSession
  readonly events: AgentEvent[]
  /** The first process, initialized. */
  readonly proc: FakeProcess
}

interface HarnessOptions {
  readonly start?: StartMode
  readonly tools?: SessionSetup["tools"]
  readonly instructions?: string
  readonly append?: string
  readonly timeouts?: SessionSetup["timeouts"]
  readonly callTool?: (name: string, input: unknown) => Effect.Effect<ToolResult>
  /** Do not answer initialize automatically. */
  readonly manualInit?: boolean
  readonly recover?: NonNullable<SessionSetup["hooks"]>["recover"]
  readonly stored?: NonNullable<SessionSetup["hooks"]>["stored"]
  /** Run under a test clock: time moves only by TestClock.adjust (no waitFor, no sleeps). */
  readonly testClock?: boolean
}

const run = <A>(
  body: (h: Harness) => Effect.Effect<A, unknown, Broker>,
  options: HarnessOptions = {},
): Promise<A> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const peer = yield* makeFakePeer
      const broker = makeMemoryBroker({
        spawn: { claude: peer.spawn },
        ...(options.callTool
          ? { callTool: (_sid: string, name: string, input: unknown) => options.callTool!(name, input) }
          : {}),
      })
      const events = broker.events
      const setup: SessionSetup = {
        hostId: HOST_ID,
        cwd: "/work/ws",
        tools: options.tools ?? [],
        instructions: options.instructions,
        start: options.start ?? { kind: "new", cliId: CLI_ID },
        prepareLaunch: (start) =>
          Effect.succeed({
            args: launchArgs({ start, workspace: "/work/ws", optionFlags: ["--permission-mode", "default"] }),
            env: { CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" },
            appendSystemPrompt:
              [options.append, options.instructions].filter(Boolean).join("\n\n") || undefined,
          }),
        makeMapper: testMapper,
        decodeLine,
        emit: (event) => Effect.sync(() => void events.push(event)),
        timeouts: options.timeouts,
        hooks: {
          ...(options.recover ? { recover: options.recover } : {}),
          ...(options.stored ? { stored: options.stored } : {}),
        },
      }
      const context = brokerContext(broker.api)
      const session = yield* makeSession(setup).pipe(Effect.provideContext(context))
      const boot = yield* session.ensureProcess.pipe(Effect.provideContext(context), Effect.forkChild)
      const proc = yield* peer.nextProcess
      if (!options.manualInit) {
        const init = yield* proc.expectControl("initialize")
        yield* proc.respond(init.request_id, { models: [], commands: [] })
        yield* Fiber.join(boot).pipe(Effect.orDie)
      }
      return yield* body({ peer, broker, session, events, proc }).pipe(Effect.provideContext(context))
    }).pipe(
      Effect.scoped,
      options.testClock ? Effect.provide(TestClock.layer()) : (effect) => effect,
    ) as Effect.Effect<A, unknown, never>,
  )

const ofType = <T extends AgentEvent["type"]>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type)

const waitFor = (check: () => boolean, what: string, timeoutMs = 2_000) =>
  Effect.gen(function* () {
    const until = Date.now() + timeoutMs
    while (!check()) {
      if (Date.now() > until) return yield* Effect.fail(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(5)
    }
  })

const result = (uuids: string[], extra: Frame = {}): Frame => ({
  type: "result",
  subtype: "success",
  is_error: false,
  user_message_uuids: uuids,
  ...extra,
})

describe("launch and initialize", () => {
  it("starts a new conversation with the notes' arguments and a bare initialize", () =>
    run(({ proc }) =>
      Effect.sync(() => {
        expect(proc.args.slice(0, 8)).toEqual([
          "--output-format",
          "stream-json",
          "--input-format",
          "stream-json",
          "--verbose",
          "--include-partial-messages",
          "--permission-prompt-tool",
          "stdio",
        ])
        expect(proc.flag("--session-id")).toBe(CLI_ID)
        expect(proc.args).toContain("--forward-subagent-text")
        expect(proc.flags("--add-dir")).toEqual(["/work/ws"])
        expect(proc.options.cwd).toBe("/work/ws")
        const init = proc.received.find((f) => f.request?.subtype === "initialize")!
        expect(init.request).toEqual({ subtype: "initialize" })
      }),
    ))

  it("declares plugin tools and the appended prompt, and answers the CLI's MCP initialize before its own answer", () =>
    run(
      ({ proc, session }) =>
        Effect.gen(function* () {
          const init = yield* proc.expectControl("initialize")
          expect(init.request.sdkMcpServers).toEqual(["convergence"])
          expect(init.request.sdkMcpServerConfigs).toEqual({ convergence: { timeout: 3_600_000 } })
          expect(init.request.appendSystemPrompt).toBe("USER TEXT\n\nHost rules")
          // The CLI asks its MCP server before it answers initialize.
          const mcpInit = yield* proc.request({
            subtype: "mcp_message",
            server_name: "convergence",
            message: {
              jsonrpc: "2.0",
              id: 0,
              method: "initialize",
              params: { protocolVersion: "2025-11-25" },
            },
          })
          expect(mcpInit.subtype).toBe("success")
          expect(mcpInit.response.mcp_response.result.serverInfo.name).toBe("convergence")
          const list = yield* proc.request({
            subtype: "mcp_message",
            server_name: "convergence",
            message: { jsonrpc: "2.0", id: 1, method: "tools/list" },
          })
          expect(list.response.mcp_response.result.tools.map((t: { name: string }) => t.name)).toEqual([
            "shout",
          ])
          yield* proc.respond(init.request_id, {})
          expect(session.isRunning()).toBe(true)
        }),
      {
        manualInit: true,
        tools: [{ name: "shout", description: "Shout", inputSchema: { type: "object" } }],
        instructions: "Host rules",
        append: "USER TEXT",
      },
    ))

  it.each<[string, StartMode, string[]]>([
    ["resume", { kind: "resume", cliId: CLI_ID }, ["--resume", CLI_ID]],
    [
      "resume at",
      { kind: "resumeAt", cliId: CLI_ID, at: "u-1" },
      ["--resume", CLI_ID, "--resume-session-at", "u-1"],
    ],
    [
      "fork",
      { kind: "fork", origin: "origin-id", cliId: CLI_ID },
      ["--resume", "origin-id", "--fork-session", "--session-id", CLI_ID],
    ],
  ])("start mode %s", (_name, start, expected) =>
    run(
      ({ proc }) =>
        Effect.sync(() => {
          const at = proc.args.indexOf(expected[0]!)
          expect(proc.args.slice(at, at + expected.length)).toEqual(expected)
          if (start.kind !== "fork") expect(proc.args).not.toContain("--session-id")
        }),
      { start },
    ),
  )
})

describe("prompts and runs", () => {
  it("sends the user frame, opens a run and ends it at the result with the delivery id", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const accepted = yield* session.prompt({ sessionId: HOST_ID, text: "hello", deliveryId: "d1" })
        expect(accepted.steered).toBe(false)
        const user = yield* proc.expect((f) => f.type === "user")
        expect(user).toMatchObject({
          type: "user",
          message: { role: "user", content: [{ type: "text", text: "hello" }] },
          parent_tool_use_id: null,
          session_id: "",
        })
        expect(user.priority).toBeUndefined()
        expect(user.uuid).toMatch(/^[0-9a-f-]{36}$/)
        yield* proc.send({ type: "assistant", text: "hi" })
        yield* proc.send(result([user.uuid]))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        const started = ofType(events, "RunStarted")
        expect(started).toEqual([
          { type: "RunStarted", session_id: HOST_ID, run_id: accepted.run_id, delivery_ids: ["d1"] },
        ])
        expect(ofType(events, "TextDelta")[0]?.run_id).toBe(accepted.run_id)
        expect(ofType(events, "RunEnded")[0]).toMatchObject({
          run_id: accepted.run_id,
          outcome: "Completed",
          delivery_ids: ["d1"],
          usage: { input_tokens: 1, output_tokens: 2 },
        })
      }),
    ))

  it("steers a run with priority next and attributes every reported UUID", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const first = yield* session.prompt({ sessionId: HOST_ID, text: "long task", deliveryId: "d1" })
        const u1 = yield* proc.expect((f) => f.type === "user")
        const second = yield* session.prompt({ sessionId: HOST_ID, text: "also this", deliveryId: "d2" })
        expect(second).toEqual({ run_id: first.run_id, steered: true, input_uuid: expect.any(String) })
        const u2 = yield* proc.expect((f) => f.type === "user")
        expect(u2.uuid).toBe(second.input_uuid)
        expect(u2.priority).toBe("next")
        expect(u2.uuid).not.toBe(u1.uuid)
        expect(proc.received.some((f) => f.request?.subtype === "interrupt")).toBe(false)
        yield* proc.send(result([u1.uuid, u2.uuid]))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "RunStarted")).toHaveLength(1)
        expect(ofType(events, "RunEnded")[0]!.delivery_ids).toEqual(["d1", "d2"])
      }),
    ))

  it("a steer the turn did not pick up is answered in a continuation that starts and ends once", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const first = yield* session.prompt({ sessionId: HOST_ID, text: "one", deliveryId: "d1" })
        const u1 = yield* proc.expect((f) => f.type === "user")
        yield* session.prompt({ sessionId: HOST_ID, text: "two", deliveryId: "d2" })
        const u2 = yield* proc.expect((f) => f.type === "user")
        yield* proc.send(result([u1.uuid]))
        yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
        yield* proc.send(result([u2.uuid]))
        yield* waitFor(() => ofType(events, "RunEnded").length === 2, "two RunEnded")
        const [a, b] = ofType(events, "RunEnded")
        expect(a).toMatchObject({ run_id: first.run_id, outcome: "Completed", delivery_ids: ["d1"] })
        expect(b!.run_id).not.toBe(first.run_id)
        expect(b).toMatchObject({ outcome: "Completed", delivery_ids: ["d2"] })
        expect(ofType(events, "RunStarted")).toHaveLength(2)
      }),
    ))

  it("opens a run for a turn the CLI begins by itself, at session_state_changed running", () =>
    run(({ proc, events }) =>
      Effect.gen(function* () {
        yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
        yield* proc.send({ type: "system", subtype: "init", session_id: CLI_ID })
        yield* proc.send(result([]))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "RunStarted")).toHaveLength(1)
        expect(ofType(events, "RunEnded")[0]!.run_id).toBe(ofType(events, "RunStarted")[0]!.run_id)
      }),
    ))

  it("an error result ends the run Failed with the CLI's errors", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const u = yield* proc.expect((f) => f.type === "user")
        yield* proc.send(
          result([u.uuid], { subtype: "error_during_execution", is_error: true, errors: ["API Error: 500"] }),
        )
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "RunEnded")[0]).toMatchObject({ outcome: "Failed", error: "API Error: 500" })
      }),
    ))

  it("a malformed line is one diagnostic and the session goes on", () =>
    run(({ proc, session, events, broker }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const u = yield* proc.expect((f) => f.type === "user")
        yield* proc.sendRaw("{not json")
        yield* proc.send({ type: "assistant", text: "still here" })
        yield* proc.send(result([u.uuid]))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        const diagnostics = broker.logs.filter((l) => l.message.includes("unreadable line"))
        expect(diagnostics).toHaveLength(1)
        expect(ofType(events, "TextDelta")[0]!.text).toBe("still here")
        expect(ofType(events, "RunEnded")[0]!.outcome).toBe("Completed")
      }),
    ))
})

describe("approvals and questions", () => {
  it("routes an approval by request id and answers allow with the input", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const { run_id } = yield* session.prompt({ sessionId: HOST_ID, text: "run ls" })
        const input = { command: "rm -rf build", description: "Remove build" }
        const answer = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input,
            tool_use_id: "toolu_1",
            description: "Remove build",
            permission_suggestions: [{ type: "addRules", rules: [{ toolName: "Bash" }] }],
          })
          .pipe(Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "ApprovalRequested")
        const approval = ofType(events, "ApprovalRequested")[0]!
        expect(approval).toMatchObject({
          run_id,
          tool_call_id: "toolu_1",
          tool_name: "Bash",
          input,
          can_always: true,
        })
        yield* session.answerApproval({
          sessionId: HOST_ID,
          approvalId: approval.approval_id,
          decision: "allow",
        })
        const response = yield* Fiber.join(answer)
        expect(response).toMatchObject({
          subtype: "success",
          response: { behavior: "allow", updatedInput: input },
        })
        expect(response.response.updatedPermissions).toBeUndefined()
      }),
    ))

  it("allow_always sends the suggestions back as updatedPermissions; deny sends the message", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const suggestions = [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "ls:*" }] }]
        const first = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "ls" },
            tool_use_id: "t1",
            permission_suggestions: suggestions,
          })
          .pipe(Effect.forkChild)
        const second = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "rm x" },
            tool_use_id: "t2",
          })
          .pipe(Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 2, "two approvals")
        const [a1, a2] = ofType(events, "ApprovalRequested")
        // Answered out of order: each answer goes to its own request id.
        yield* session.answerApproval({
          sessionId: HOST_ID,
          approvalId: a2!.approval_id,
          decision: "deny",
          message: "no",
        })
        yield* session.answerApproval({
          sessionId: HOST_ID,
          approvalId: a1!.approval_id,
          decision: "allow_always",
        })
        const r2 = yield* Fiber.join(second)
        const r1 = yield* Fiber.join(first)
        expect(r2.response).toEqual({ behavior: "deny", message: "no" })
        expect(r1.response).toEqual({
          behavior: "allow",
          updatedInput: { command: "ls" },
          updatedPermissions: suggestions,
        })
        const again = yield* Effect.flip(
          session.answerApproval({ sessionId: HOST_ID, approvalId: a1!.approval_id, decision: "allow" }),
        )
        expect(again._tag).toBe("ApprovalNotFound")
      }),
    ))

  it("routes a subagent's approval to its task by agent_id and marks the task waiting", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const answer = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "ls" },
            tool_use_id: "t9",
            agent_id: "agent-1",
          })
          .pipe(Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "ApprovalRequested")
        const approval = ofType(events, "ApprovalRequested")[0]!
        expect(approval.task_id).toBe("toolu_agent")
        expect(ofType(events, "Task").map((e) => e.task.status)).toEqual(["Waiting"])
        yield* session.answerApproval({
          sessionId: HOST_ID,
          approvalId: approval.approval_id,
          decision: "allow",
        })
        yield* Fiber.await(answer)
        expect(ofType(events, "Task").map((e) => e.task.status)).toEqual(["Waiting", "Running"])
      }),
    ))

  it("a withdrawn request emits approval_resolved; a withdrawn question question_resolved", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        yield* proc
          .request({ subtype: "can_use_tool", tool_name: "Bash", input: {}, tool_use_id: "t1" }, 200)
          .pipe(Effect.ignore, Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "ApprovalRequested")
        const approval = ofType(events, "ApprovalRequested")[0]!
        yield* proc.cancelRequest(approval.approval_id)
        yield* waitFor(() => ofType(events, "approval_resolved").length === 1, "approval_resolved")
        expect(ofType(events, "approval_resolved")[0]!.approval_id).toBe(approval.approval_id)
        yield* proc
          .request(
            {
              subtype: "can_use_tool",
              tool_name: "AskUserQuestion",
              input: { questions: [] },
              tool_use_id: "t2",
            },
            200,
          )
          .pipe(Effect.ignore, Effect.forkChild)
        yield* waitFor(() => ofType(events, "QuestionAsked").length === 1, "QuestionAsked")
        yield* proc.cancelRequest(ofType(events, "QuestionAsked")[0]!.question_id)
        yield* waitFor(() => ofType(events, "question_resolved").length === 1, "question_resolved")
        const stale = yield* Effect.flip(
          session.answerApproval({ sessionId: HOST_ID, approvalId: approval.approval_id, decision: "allow" }),
        )
        expect(stale._tag).toBe("ApprovalNotFound")
      }),
    ))

  it("answers AskUserQuestion with the questions untouched and answers keyed by question text", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const questions = [
          {
            question: "Which color should the widget be?",
            header: "Color",
            multiSelect: false,
            options: [{ label: "Blue", description: "cool" }, { label: "Red" }],
          },
          {
            question: "Which sizes?",
            header: "Sizes",
            multiSelect: true,
            options: [{ label: "S" }, { label: "M" }],
          },
        ]
        const answer = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "AskUserQuestion",
            input: { questions },
            tool_use_id: "t1",
            requires_user_interaction: true,
          })
          .pipe(Effect.forkChild)
        yield* waitFor(() => ofType(events, "QuestionAsked").length === 1, "QuestionAsked")
        const asked = ofType(events, "QuestionAsked")[0]!
        expect(ofType(events, "ApprovalRequested")).toHaveLength(0)
        expect(asked.questions[0]).toEqual({
          question: "Which color should the widget be?",
          header: "Color",
          multi_select: false,
          options: [{ label: "Blue", description: "cool" }, { label: "Red" }],
        })
        expect(asked.questions[1]!.multi_select).toBe(true)
        yield* session.answerQuestion({
          sessionId: HOST_ID,
          questionId: asked.question_id,
          answers: { "Which color should the widget be?": "Blue", "Which sizes?": ["S", "M"] },
          response: "and make it shiny",
        })
        const response = yield* Fiber.join(answer)
        expect(response.response).toEqual({
          behavior: "allow",
          updatedInput: {
            questions,
            answers: { "Which color should the widget be?": "Blue", "Which sizes?": ["S", "M"] },
            response: "and make it shiny",
          },
        })
      }),
    ))

  it("opens a run for a can_use_tool that arrives when none is open", () =>
    run(({ proc, events }) =>
      Effect.gen(function* () {
        yield* proc
          .request({ subtype: "can_use_tool", tool_name: "Bash", input: {}, tool_use_id: "t1" }, 200)
          .pipe(Effect.ignore, Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "ApprovalRequested")
        const started = ofType(events, "RunStarted")
        expect(started).toHaveLength(1)
        expect(ofType(events, "ApprovalRequested")[0]!.run_id).toBe(started[0]!.run_id)
      }),
    ))

  it("answers hook_callback with continue and refuses dialogs and elicitations", () =>
    run(({ proc }) =>
      Effect.gen(function* () {
        const hook = yield* proc.request({ subtype: "hook_callback", callback_id: "h1", input: {} })
        expect(hook).toMatchObject({ subtype: "success", response: { continue: true } })
        const dialog = yield* proc.request({
          subtype: "request_user_dialog",
          dialog_kind: "resume_return",
          payload: {},
        })
        expect(dialog.subtype).toBe("error")
        const elicitation = yield* proc.request({
          subtype: "elicitation",
          mcp_server_name: "x",
          message: "?",
        })
        expect(elicitation.subtype).toBe("error")
      }),
    ))
})

describe("control requests", () => {
  it("a refused request fails with ControlRefused and its message", () =>
    run(({ proc, session }) =>
      Effect.gen(function* () {
        const fiber = yield* session
          .request("set_permission_mode", { mode: "Default" })
          .pipe(Effect.flip, Effect.forkChild)
        const req = yield* proc.expectControl("set_permission_mode")
        expect(req.request.mode).toBe("Default")
        yield* proc.refuse(req.request_id, "Cannot set permission mode: must be one of acceptEdits, …")
        const error = yield* Fiber.join(fiber)
        expect(error._tag).toBe("ControlRefused")
        expect(error.message).toContain("Cannot set permission mode")
      }),
    ))

  it("a request with no answer times out with ControlTimeout", () =>
    run(
      ({ session }) =>
        Effect.gen(function* () {
          const error = yield* Effect.flip(session.request("get_settings"))
          expect(error._tag).toBe("ControlTimeout")
          expect(error.message).toContain("get_settings")
        }),
      { timeouts: { controlMs: 50 } },
    ))

  it("pending requests fail with ProcessExited when the process ends", () =>
    run(({ proc, session }) =>
      Effect.gen(function* () {
        const fiber = yield* session.request("get_settings").pipe(Effect.flip, Effect.forkChild)
        yield* proc.expectControl("get_settings")
        yield* proc.stderr("fatal: boom\n")
        yield* Effect.sleep(10)
        yield* proc.exit(1)
        const error = yield* Fiber.join(fiber)
        expect(error._tag).toBe("ProcessExited")
      }),
    ))
})

describe("plugin tools over mcp_message", () => {
  it("a slow tools/call runs on its own fiber while the reader goes on", () => {
    let release: Deferred.Deferred<void> | undefined
    return run(
      ({ proc, events }) =>
        Effect.gen(function* () {
          const call = yield* proc
            .request({
              subtype: "mcp_message",
              server_name: "convergence",
              message: {
                jsonrpc: "2.0",
                id: 7,
                method: "tools/call",
                params: { name: "shout", arguments: { text: "hi" } },
              },
            })
            .pipe(Effect.forkChild)
          yield* waitFor(() => release !== undefined, "the tool call to start")
          // The reader still answers while the tool runs.
          const hook = yield* proc.request({ subtype: "hook_callback", callback_id: "h", input: {} }, 1_000)
          expect(hook.subtype).toBe("success")
          yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
          yield* waitFor(() => ofType(events, "RunStarted").length === 1, "RunStarted while the tool runs")
          yield* Deferred.succeed(release!, undefined)
          const answer = yield* Fiber.join(call)
          expect(answer.response.mcp_response).toEqual({
            jsonrpc: "2.0",
            id: 7,
            result: { content: [{ type: "text", text: "HI" }], isError: false },
          })
        }),
      {
        tools: [{ name: "shout", description: "Shout", inputSchema: { type: "object" } }],
        callTool: (_name, input) =>
          Effect.gen(function* () {
            const gate = yield* Deferred.make<void>()
            release = gate
            yield* Deferred.await(gate)
            return {
              content: [
                { type: "text" as const, text: String((input as { text: string }).text).toUpperCase() },
              ],
            }
          }),
      },
    )
  })
})

describe("cancel", () => {
  it("interrupts, rejects open approvals and ends Cancelled at the result", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const { run_id } = yield* session.prompt({ sessionId: HOST_ID, text: "sleep" })
        const u = yield* proc.expect((f) => f.type === "user")
        const approval = yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "sleep 60" },
            tool_use_id: "t1",
          })
          .pipe(Effect.forkChild)
        yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "ApprovalRequested")
        yield* session.cancel
        const interrupt = yield* proc.expectControl("interrupt")
        yield* proc.respond(interrupt.request_id, { still_queued: [] })
        const answered = yield* Fiber.join(approval)
        expect(answered.response.behavior).toBe("deny")
        expect(ofType(events, "approval_resolved")[0]).toMatchObject({ reason: "cancelled" })
        expect(ofType(events, "RunEnded")).toHaveLength(0)
        yield* proc.send(result([u.uuid], { subtype: "error_during_execution", is_error: true }))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "RunEnded")[0]).toMatchObject({ run_id, outcome: "Cancelled" })
      }),
    ))

  it("the watchdog ends the run Cancelled when the CLI stays silent, and the late result stays fenced", () =>
    run(
      ({ proc, session, events }) =>
        Effect.gen(function* () {
          yield* session.prompt({ sessionId: HOST_ID, text: "sleep" })
          const u = yield* proc.expect((f) => f.type === "user")
          yield* session.cancel
          yield* proc.expectControl("interrupt")
          yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded by the watchdog")
          expect(ofType(events, "RunEnded")[0]!.outcome).toBe("Cancelled")
          // A new run; the old run's late result must not end it.
          const next = yield* session.prompt({ sessionId: HOST_ID, text: "again" })
          const u2 = yield* proc.expect((f) => f.type === "user")
          expect(u2.priority).toBeUndefined()
          yield* proc.send(result([u.uuid]))
          yield* Effect.sleep(30)
          expect(ofType(events, "RunEnded")).toHaveLength(1)
          yield* proc.send(result([u2.uuid]))
          yield* waitFor(() => ofType(events, "RunEnded").length === 2, "second RunEnded")
          expect(ofType(events, "RunEnded")[1]).toMatchObject({ run_id: next.run_id, outcome: "Completed" })
        }),
      { timeouts: { cancelMs: 100 } },
    ))
})

describe("process exit", () => {
  it("a run in flight ends Failed with the stderr lines, and the next prompt resumes the conversation", () =>
    run(({ peer, proc, session, events }) =>
      Effect.gen(function* () {
        const { run_id } = yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        yield* proc.expect((f) => f.type === "user")
        yield* proc.stderr("Error: something broke\n")
        yield* Effect.sleep(10)
        yield* proc.exit(1)
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "RunEnded")[0]).toMatchObject({ run_id, outcome: "Failed" })
        expect(ofType(events, "RunEnded")[0]!.error).toContain("something broke")
        expect(
          ofType(events, "Notice").some((n) => n.level === "error" && n.text.includes("something broke")),
        ).toBe(true)
        expect(session.isRunning()).toBe(false)

        const prompt = yield* session.prompt({ sessionId: HOST_ID, text: "again" }).pipe(Effect.forkChild)
        const second = yield* peer.nextProcess
        expect(second.flag("--resume")).toBe(CLI_ID)
        expect(second.args).not.toContain("--session-id")
        const init = yield* second.expectControl("initialize")
        yield* second.respond(init.request_id, {})
        yield* Fiber.await(prompt)
        const u = yield* second.expect((f) => f.type === "user")
        expect(u.message.content[0].text).toBe("again")
      }),
    ))

  it("a process that dies before any prompt starts the same new conversation again", () =>
    run(({ peer, proc, session }) =>
      Effect.gen(function* () {
        yield* proc.exit(1)
        yield* waitFor(() => !session.isRunning(), "exit")
        const fiber = yield* session.ensureProcess.pipe(Effect.forkChild)
        const second = yield* peer.nextProcess
        expect(second.flag("--session-id")).toBe(CLI_ID)
        expect(second.args).not.toContain("--resume")
        const init = yield* second.expectControl("initialize")
        yield* second.respond(init.request_id, {})
        yield* Fiber.await(fiber)
      }),
    ))
})

describe("scope", () => {
  it("closing the session lets the reader finish the output still queued", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        const u = yield* proc.expect((f) => f.type === "user")
        yield* proc.send({ type: "assistant", text: "last words" })
        yield* proc.send(result([u.uuid]))
        yield* session.close
        expect(ofType(events, "TextDelta").map((e) => e.text)).toEqual(["last words"])
        expect(ofType(events, "RunEnded")).toHaveLength(1)
        expect(ofType(events, "RunEnded")[0]!.outcome).toBe("Completed")
        expect(yield* proc.exited).toBe(true)
      }),
    ))

  it("closing the outer scope ends the process", async () => {
    const peer = await Effect.runPromise(makeFakePeer)
    const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
    const scope = await Effect.runPromise(Scope.make())
    const context = brokerContext(broker.api)
    const session = await Effect.runPromise(
      makeSession({
        hostId: HOST_ID,
        cwd: "/w",
        tools: [],
        start: { kind: "new", cliId: CLI_ID },
        prepareLaunch: (start) =>
          Effect.succeed({ args: launchArgs({ start, workspace: "/w", optionFlags: [] }), env: {} }),
        makeMapper: testMapper,
        decodeLine,
        emit: () => Effect.void,
      }).pipe(Scope.provide(scope), Effect.provideContext(context)),
    )
    const boot = Effect.runPromise(session.ensureProcess.pipe(Effect.provideContext(context)))
    const proc = await Effect.runPromise(peer.nextProcess)
    const init = await Effect.runPromise(proc.expectControl("initialize"))
    await Effect.runPromise(proc.respond(init.request_id, {}))
    await boot
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(await Effect.runPromise(proc.exited)).toBe(true)
  })
})

/** The first process is initialized; answer the next one's initialize too. */
const initNext = (peer: FakePeer) =>
  Effect.gen(function* () {
    const next = yield* peer.nextProcess
    const init = yield* next.expectControl("initialize")
    yield* next.respond(init.request_id, {})
    return next
  })

/**
 * A prompt (delivery d1) written to the CLI, which is then killed before
 * it shows it read it: the prompt, what the first process got, and the next
 * process (initialized) with the prompt as written again there.
 */
const promptWrittenThenKilled = ({ peer, proc, session }: Harness) =>
  Effect.gen(function* () {
    const accepted = yield* session.prompt({ sessionId: HOST_ID, text: "hello", deliveryId: "d1" })
    const first = yield* proc.expect((f) => f.type === "user")
    yield* proc.exit(null, "SIGKILL")
    const second = yield* initNext(peer)
    const again = yield* second.expect((f) => f.type === "user")
    return { a: accepted, first, second, again }
  })

describe("faults: cancel then prompt (issue 13)", () => {
  it("the interrupted turn's error result ends the cancelled run; the new prompt's run gets its own answer", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const a = yield* session.prompt({ sessionId: HOST_ID, text: "long", deliveryId: "dA" })
        const uA = yield* proc.expect((f) => f.type === "user")
        yield* session.cancel
        const interrupt = yield* proc.expectControl("interrupt")
        yield* proc.respond(interrupt.request_id, { still_queued: [] })
        const b = yield* session.prompt({ sessionId: HOST_ID, text: "next", deliveryId: "dB" })
        expect(b.run_id).not.toBe(a.run_id)
        const uB = yield* proc.expect((f) => f.type === "user")
        // 2.1.332: the interrupt's result, then the next prompt's turn, no state change between.
        yield* proc.send(
          result([uA.uuid], {
            subtype: "error_during_execution",
            is_error: true,
            errors: ["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=null"],
          }),
        )
        yield* proc.send({ type: "system", subtype: "init" })
        yield* proc.send({ type: "assistant", text: "ANSWER-B" })
        yield* proc.send(result([uB.uuid]))
        yield* proc.drained
        const ended = ofType(events, "RunEnded")
        expect(ended.map((e) => [e.run_id, e.outcome, e.error])).toEqual([
          [a.run_id, "Cancelled", undefined],
          [b.run_id, "Completed", undefined],
        ])
        expect(ofType(events, "RunStarted").map((e) => e.run_id)).toEqual([a.run_id, b.run_id])
        expect(ofType(events, "TextDelta").map((e) => [e.run_id, e.text])).toEqual([[b.run_id, "ANSWER-B"]])
      }),
    ))

  it("after a steer and a cancel, the turn the CLI begins for the steer opens and ends like any other", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        const a = yield* session.prompt({ sessionId: HOST_ID, text: "long", deliveryId: "dA" })
        const uA = yield* proc.expect((f) => f.type === "user")
        yield* session.prompt({ sessionId: HOST_ID, text: "steer", deliveryId: "dS" })
        const uS = yield* proc.expect((f) => f.type === "user")
        yield* session.cancel
        const interrupt = yield* proc.expectControl("interrupt")
        yield* proc.respond(interrupt.request_id, { still_queued: [] })
        yield* proc.send(result([uA.uuid], { subtype: "error_during_execution", is_error: true }))
        yield* proc.send({ type: "system", subtype: "init" })
        yield* proc.send(result([uS.uuid]))
        yield* proc.drained
        const ended = ofType(events, "RunEnded")
        expect(ended).toHaveLength(2)
        expect(ended[0]).toMatchObject({ run_id: a.run_id, outcome: "Cancelled" })
        expect(ended[1]).toMatchObject({ outcome: "Completed", delivery_ids: ["dS"] })
        expect(ofType(events, "RunStarted")[1]!.run_id).toBe(ended[1]!.run_id)
        expect(session.runId()).toBeUndefined()
      }),
    ))
})

describe("faults: close (issue 13)", () => {
  it("close settles an open approval and an open question with their _resolved events", () =>
    run(({ proc, session, events }) =>
      Effect.gen(function* () {
        yield* session.prompt({ sessionId: HOST_ID, text: "x" })
        yield* proc.expect((f) => f.type === "user")
        yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "Bash",
            input: { command: "ls" },
            tool_use_id: "t1",
          })
          .pipe(Effect.forkChild)
        yield* proc
          .request({
            subtype: "can_use_tool",
            tool_name: "AskUserQuestion",
            input: { questions: [] },
            tool_use_id: "t2",
          })
          .pipe(Effect.forkChild)
        yield* waitFor(
          () =>
            ofType(events, "ApprovalRequested").length === 1 && ofType(events, "QuestionAsked").length === 1,
          "both requests",
        )
        yield* session.close
        expect(ofType(events, "approval_resolved")).toHaveLength(1)
        expect(ofType(events, "question_resolved")).toHaveLength(1)
        expect(ofType(events, "RunEnded").map((e) => e.outcome)).toEqual(["Cancelled"])
      }),
    ))

  it("close during initialize fails the launch at once instead of waiting out its timeout", () =>
    run(
      ({ session }) =>
        Effect.gen(function* () {
          const launching = yield* session.ensureProcess.pipe(Effect.exit, Effect.forkChild)
          yield* Effect.sleep(20)
          const started = Date.now()
          yield* session.close
          const exit = yield* Fiber.join(launching)
          expect(Exit.isFailure(exit)).toBe(true)
          expect(Date.now() - started).toBeLessThan(1_000)
        }),
      { manualInit: true, timeouts: { initializeMs: 30_000 } },
    ))
})

describe("faults: a silent or frozen process (issue 13)", () => {
  it("a turn with no frame past the bound ends Failed with a notice; the process is replaced on its conversation", () =>
    run(
      ({ peer, proc, session, events }) =>
        Effect.gen(function* () {
          const a = yield* session.prompt({ sessionId: HOST_ID, text: "x" })
          yield* proc.expect((f) => f.type === "user")
          yield* proc.send({ type: "stream_event", event: { type: "message_start" } })
          const second = yield* initNext(peer)
          expect(second.flag("--resume")).toBe(CLI_ID)
          expect(yield* proc.exited).toBe(true)
          const ended = ofType(events, "RunEnded")
          expect(ended).toEqual([expect.objectContaining({ run_id: a.run_id, outcome: "Failed" })])
          expect(ended[0]!.error).toMatch(/sent nothing for .* s during a turn/)
          expect(
            ofType(events, "Notice").some((n) => n.level === "error" && n.text.includes("restarted")),
          ).toBe(true)
          const b = yield* session.prompt({ sessionId: HOST_ID, text: "again" })
          const u = yield* second.expect((f) => f.type === "user")
          yield* second.send(result([u.uuid]))
          yield* second.drained
          expect(ofType(events, "RunEnded").at(-1)).toMatchObject({ run_id: b.run_id, outcome: "Completed" })
        }),
      { timeouts: { silenceMs: 150 } },
    ))

  it("a running tool call, a pending approval or an idle session is not silence", () =>
    run(
      ({ peer, proc, session, events }) =>
        Effect.gen(function* () {
          yield* Effect.sleep(400)
          const a = yield* session.prompt({ sessionId: HOST_ID, text: "x" })
          const u = yield* proc.expect((f) => f.type === "user")
          yield* proc.send({
            type: "assistant",
            message: { content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: {} }] },
          })
          yield* Effect.sleep(400)
          yield* proc.send({
            type: "user",
            message: { content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "ok" }] },
          })
          const approval = yield* proc
            .request({ subtype: "can_use_tool", tool_name: "Write", input: {}, tool_use_id: "t2" }, 5_000)
            .pipe(Effect.forkChild)
          yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "approval")
          yield* Effect.sleep(400)
          expect(ofType(events, "RunEnded")).toEqual([])
          const requested = ofType(events, "ApprovalRequested")[0]!
          yield* session.answerApproval({
            sessionId: HOST_ID,
            approvalId: requested.approval_id,
            decision: "allow",
          })
          yield* Fiber.join(approval)
          yield* proc.send(result([u.uuid]))
          yield* proc.drained
          expect(ofType(events, "RunEnded")).toEqual([
            expect.objectContaining({ run_id: a.run_id, outcome: "Completed" }),
          ])
          expect(peer.processes).toHaveLength(1)
        }),
      { timeouts: { silenceMs: 150 } },
    ))

  it("a retry the CLI announces extends the bound by its delay", () =>
    run(
      ({ proc, session, events }) =>
        Effect.gen(function* () {
          yield* session.prompt({ sessionId: HOST_ID, text: "x" })
          const u = yield* proc.expect((f) => f.type === "user")
          yield* proc.send({
            type: "system",
            subtype: "api_retry",
            attempt: 1,
            max_retries: 3,
            retry_delay_ms: 600,
          })
          yield* Effect.sleep(450)
          expect(ofType(events, "RunEnded")).toEqual([])
          yield* proc.send(result([u.uuid]))
          yield* proc.drained
          expect(ofType(events, "RunEnded").map((e) => e.outcome)).toEqual(["Completed"])
        }),
      { timeouts: { silenceMs: 150 } },
    ))

  it("an interrupt left unanswered kills the process: the run ends Cancelled at once and the next prompt works", () =>
    run(
      ({ peer, proc, session, events }) =>
        Effect.gen(function* () {
          const a = yield* session.prompt({ sessionId: HOST_ID, text: "x" })
          yield* proc.expect((f) => f.type === "user")
          const started = Date.now()
          yield* session.cancel
          yield* proc.expectControl("interrupt")
          const second = yield* initNext(peer)
          expect(Date.now() - started).toBeLessThan(2_000)
          expect(yield* proc.exited).toBe(true)
          expect(ofType(events, "RunEnded")).toEqual([
            expect.objectContaining({ run_id: a.run_id, outcome: "Cancelled" }),
          ])
          const b = yield* session.prompt({ sessionId: HOST_ID, text: "again" })
          const u = yield* second.expect((f) => f.type === "user")
          expect(u.priority).toBeUndefined()
          yield* second.send(result([u.uuid]))
          yield* second.drained
          expect(ofType(events, "RunEnded").at(-1)).toMatchObject({ run_id: b.run_id, outcome: "Completed" })
        }),
      { timeouts: { interruptMs: 200, cancelMs: 5_000 } },
    ))
})

describe("faults: recovery never guesses (issue 13)", () => {
  it("a conversation the CLI never stored starts anew under the same id, and the host is told", () => {
    const guesses: StartMode[] = []
    return run(
      ({ peer, proc, session, events }) =>
        Effect.gen(function* () {
          yield* session.prompt({ sessionId: HOST_ID, text: "first" })
          yield* proc.expect((f) => f.type === "user")
          yield* proc.exit(null, "SIGKILL")
          yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
          const prompt = yield* session.prompt({ sessionId: HOST_ID, text: "second" }).pipe(Effect.forkChild)
          const second = yield* initNext(peer)
          yield* Fiber.join(prompt)
          expect(guesses).toEqual([{ kind: "resume", cliId: CLI_ID }])
          expect(second.flag("--session-id")).toBe(CLI_ID)
          expect(second.args).not.toContain("--resume")
          expect(ofType(events, "Notice").some((n) => n.text.includes("never stored"))).toBe(true)
        }),
      {
        recover: (guess) =>
          Effect.sync(() => {
            guesses.push(guess)
            return { start: { kind: "new", cliId: guess.cliId }, notice: "never stored" }
          }),
      },
    )
  })

  it("a prompt whose write finds the process dead is written once to a new process, same uuid and delivery id", () =>
    run(({ peer, proc, session, events }) =>
      Effect.gen(function* () {
        yield* proc.exit(null, "SIGKILL")
        // The exit is not seen yet: the write itself fails.
        const prompt = yield* session
          .prompt({ sessionId: HOST_ID, text: "hello", deliveryId: "d1" })
          .pipe(Effect.forkChild)
        const second = yield* initNext(peer)
        const accepted = yield* Fiber.join(prompt)
        const u = yield* second.expect((f) => f.type === "user")
        expect(u.message.content[0].text).toBe("hello")
        yield* second.send(result([u.uuid]))
        yield* second.drained
        expect(second.received.filter((f) => f.type === "user")).toHaveLength(1)
        expect(ofType(events, "RunEnded")).toEqual([
          expect.objectContaining({ run_id: accepted.run_id, outcome: "Completed", delivery_ids: ["d1"] }),
        ])
        expect(peer.processes).toHaveLength(2)
      }),
    ))
})

describe("faults: silence on a test clock (issue 13)", () => {
  it("well inside the bound the run stays open; past it the run fails and a new process starts on the conversation", () =>
    run(
      ({ peer, proc, session, events }) =>
        Effect.gen(function* () {
          yield* session.prompt({ sessionId: HOST_ID, text: "x" })
          yield* proc.expect((f) => f.type === "user")
          yield* proc.send({ type: "stream_event", event: { type: "message_start" } })
          yield* proc.drained
          yield* TestClock.adjust(10_000)
          expect(ofType(events, "RunEnded")).toEqual([])
          yield* TestClock.adjust(60_000)
          const second = yield* initNext(peer)
          expect(second.flag("--resume")).toBe(CLI_ID)
          const ended = ofType(events, "RunEnded")
          expect(ended.map((e) => e.outcome)).toEqual(["Failed"])
          expect(ended[0]!.error).toContain("sent nothing for")
        }),
      { testClock: true, timeouts: { silenceMs: 60_000 } },
    ))
})

describe("faults: a prompt the dying process never read (issue 13)", () => {
  it("is written once to the next process, same uuid, delivery id and run, when the transcript lacks it", () =>
    run(
      (h) =>
        Effect.gen(function* () {
          const { events } = h
          const { a, first, second, again } = yield* promptWrittenThenKilled(h)
          expect(again.uuid).toBe(first.uuid)
          yield* second.send(result([again.uuid]))
          yield* second.drained
          expect(ofType(events, "RunEnded")).toEqual([
            expect.objectContaining({ run_id: a.run_id, outcome: "Completed", delivery_ids: ["d1"] }),
          ])
          expect(second.received.filter((f) => f.type === "user")).toHaveLength(1)
        }),
      { stored: () => Effect.succeed(false) },
    ))

  it("is tracked in the next process: one input_delivery, picked up there, none at the first exit", () =>
    run(
      (h) =>
        Effect.gen(function* () {
          const { events } = h
          const { a, second, again } = yield* promptWrittenThenKilled(h)
          expect(ofType(events, "input_delivery")).toEqual([])
          yield* second.send(result([again.uuid], { begun_message_ids: ["msg_1"] }))
          yield* second.drained
          yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
          expect(ofType(events, "input_delivery")).toEqual([
            expect.objectContaining({
              run_id: a.run_id,
              input_uuid: a.input_uuid,
              delivery_id: "d1",
              state: "picked_up",
              evidence: "result",
            }),
          ])
        }),
      { stored: () => Effect.succeed(false) },
    ))

  it("is unknown once when the next process dies too before it shows the model took it", () =>
    run(
      (h) =>
        Effect.gen(function* () {
          const { events } = h
          const { a, second } = yield* promptWrittenThenKilled(h)
          yield* second.exit(null, "SIGKILL")
          yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
          yield* Effect.sleep(20)
          expect(ofType(events, "input_delivery")).toEqual([
            expect.objectContaining({ input_uuid: a.input_uuid, state: "unknown", delivery_id: "d1" }),
          ])
        }),
      { stored: () => Effect.succeed(false) },
    ))

  it("is on disk from its write until its report (undelivered:<session>), for a restarted plugin to report", () =>
    run(({ broker, proc, session, events }) =>
      Effect.gen(function* () {
        const a = yield* session.prompt({ sessionId: HOST_ID, text: "hello", deliveryId: "d1" })
        const user = yield* proc.expect((f) => f.type === "user")
        expect(broker.storage.get(`undelivered:${HOST_ID}`)).toEqual([
          { uuid: user.uuid, delivery_id: "d1", run_id: a.run_id },
        ])
        yield* proc.send(result([String(user.uuid)], { begun_message_ids: ["msg_1"] }))
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "input_delivery")).toMatchObject([{ state: "picked_up" }])
        // Forgetting is a background write (the event stream never waits for storage).
        yield* waitFor(() => !broker.storage.has(`undelivered:${HOST_ID}`), "the record forgotten")
      }),
    ))

  it("an input still waiting when the session closes is reported unknown once, and forgotten on disk", () =>
    run(({ broker, proc, session, events }) =>
      Effect.gen(function* () {
        const a = yield* session.prompt({ sessionId: HOST_ID, text: "hello", deliveryId: "d1" })
        yield* proc.expect((f) => f.type === "user")
        yield* session.close
        expect(ofType(events, "input_delivery")).toEqual([
          expect.objectContaining({ input_uuid: a.input_uuid, state: "unknown", delivery_id: "d1" }),
        ])
        expect(broker.storage.has(`undelivered:${HOST_ID}`)).toBe(false)
      }),
    ))

  it("is not written again when the transcript holds it", () =>
    run(
      ({ proc, session, events, peer }) =>
        Effect.gen(function* () {
          yield* session.prompt({ sessionId: HOST_ID, text: "hello" })
          yield* proc.expect((f) => f.type === "user")
          yield* proc.exit(null, "SIGKILL")
          yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
          expect(ofType(events, "RunEnded")[0]!.outcome).toBe("Failed")
          expect(peer.processes).toHaveLength(1)
        }),
      { stored: () => Effect.succeed(true) },
    ))
})

/**
 * How a conversation starts again (agent/restart.ts) against a scripted
 * `claude` (FakePeer): an account whose directory lies outside the grants
 * (its transcripts unreadable, not missing), a stored chat without a
 * prompt, and an open chat resumed with other tools and instructions. The
 * real CLI's side of the first two is in e2e/accounts.e2e.test.ts and
 * e2e/notes-edges.e2e.test.ts.
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { activate } from "../main.ts"
import type { AgentEvent, AgentProvider } from "../sdk/protocol.ts"
import { type FakePeer, type FakeProcess, makeFakePeer } from "../sdk/testing/fake-peer.ts"
import {
  type MemoryBroker,
  makeMemoryBroker,
  type MemoryBrokerOptions,
} from "../sdk/testing/memory-broker.ts"

const HOME = "/home/user"
const WS = "/work/ws"
const ELSEWHERE = { id: "elsewhere", name: "Elsewhere", configDir: "~/.claude-elsewhere" }

const run = <A>(
  body: (w: { peer: FakePeer; broker: MemoryBroker; agent: AgentProvider }) => Effect.Effect<A, unknown>,
  options: MemoryBrokerOptions = {},
  agentId = "claude:elsewhere",
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const peer = yield* makeFakePeer
      const broker = makeMemoryBroker({
        home: HOME,
        files: { [`${WS}/README.md`]: "ws" },
        storage: { instances: [ELSEWHERE] },
        ...options,
        spawn: { claude: peer.spawn },
        run: { claude: () => Effect.succeed({ code: 0, stdout: "2.1.332 (Claude Code)", stderr: "" }) },
      })
      yield* activate(broker.api, { timeouts: { controlMs: 2_000, cancelMs: 200 } })
      const agent = broker.agent(agentId)
      try {
        return yield* body({ peer, broker, agent })
      } finally {
        yield* agent.dispose()
      }
    }) as Effect.Effect<A, unknown>,
  )

const ofType = <T extends AgentEvent["type"]>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type)

const waitFor = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    const until = Date.now() + 2_000
    while (!check()) {
      if (Date.now() > until) return yield* Effect.fail(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(5)
    }
  })

/** The next process, its initialize answered. */
const boot = (peer: FakePeer) =>
  Effect.gen(function* () {
    const proc = yield* peer.nextProcess
    const init = yield* proc.expectControl("initialize")
    yield* proc.respond(init.request_id, {})
    return proc
  })

describe("an account whose directory is outside the grants", () => {
  it("a prompt its dead process never showed reading is reported unknown, never written again", () =>
    run(({ peer, broker, agent }) =>
      Effect.gen(function* () {
        const creating = yield* Effect.forkChild(agent.createSession({ sessionId: "s1", cwd: WS }))
        const proc = yield* boot(peer)
        yield* Fiber.join(creating)
        const accepted = yield* agent.prompt({ sessionId: "s1", text: "hello", deliveryId: "d1" })
        yield* proc.expect((f) => f.type === "user")
        // Dies without a frame: it may still have stored the prompt, where the plugin cannot look.
        yield* proc.exit(1)
        yield* waitFor(() => ofType(broker.events, "RunEnded").length === 1, "the run's end")
        expect(ofType(broker.events, "RunEnded")[0]).toMatchObject({
          run_id: accepted.run_id,
          outcome: "Failed",
        })
        expect(ofType(broker.events, "input_delivery")).toMatchObject([
          { state: "unknown", delivery_id: "d1" },
        ])
        yield* Effect.sleep(50)
        expect(peer.processes).toHaveLength(1)
      }),
    ))

  it("resumes with --resume; refused (nothing stored), the same id anew, then a fresh id, each said", () =>
    run(({ peer, broker, agent }) =>
      Effect.gen(function* () {
        const resuming = yield* Effect.forkChild(agent.resumeSession({ sessionId: "s2", cwd: WS }))
        const first = yield* peer.nextProcess
        expect(first.flag("--resume")).toBe("s2")
        yield* first.stderr("No conversation found with session ID: s2\n")
        yield* first.exit(1)
        const second = yield* peer.nextProcess
        expect(second.flag("--session-id")).toBe("s2")
        yield* second.stderr("Error: Session ID s2 is already in use.\n")
        yield* second.exit(1)
        const third = yield* boot(peer)
        const fresh = third.flag("--session-id") as string
        expect(fresh).not.toBe("s2")
        yield* Fiber.join(resuming)
        expect(broker.storage.get("session:s2")).toMatchObject({ cli: fresh })
        const notices = ofType(broker.events, "Notice").map((n) => n.text)
        expect(notices.filter((t) => t.includes("starts anew as"))).toHaveLength(1)
        // The refused launches were tries, not news.
        expect(notices.filter((t) => t.includes("exited"))).toEqual([])
      }),
    ))

  it("after an exit, the next prompt resumes; refused, it goes on under the same id anew, said once", () =>
    run(({ peer, broker, agent }) =>
      Effect.gen(function* () {
        const creating = yield* Effect.forkChild(agent.createSession({ sessionId: "s4", cwd: WS }))
        const proc = yield* boot(peer)
        yield* Fiber.join(creating)
        const first = yield* agent.prompt({ sessionId: "s4", text: "one" })
        yield* proc.expect((f) => f.type === "user")
        yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
        // The CLI dies in the turn, before it stored the conversation.
        yield* proc.exit(null, "SIGKILL")
        yield* waitFor(
          () => ofType(broker.events, "RunEnded").some((e) => e.run_id === first.run_id),
          "the run's end",
        )
        const before = ofType(broker.events, "Notice").length
        const again = yield* Effect.forkChild(agent.prompt({ sessionId: "s4", text: "two" }))
        const refused = yield* peer.nextProcess
        expect(refused.flag("--resume")).toBe("s4")
        yield* refused.stderr("No conversation found with session ID: s4\n")
        yield* refused.exit(1)
        const anew = yield* boot(peer)
        expect(anew.flag("--session-id")).toBe("s4")
        yield* Fiber.join(again)
        const user = yield* anew.expect((f) => f.type === "user")
        expect(user.message.content).toEqual([{ type: "text", text: "two" }])
        const said = ofType(broker.events, "Notice")
          .slice(before)
          .map((n) => n.text)
        expect(said).toEqual([expect.stringContaining("starts anew under the same id")])
      }),
    ))

  it("a rewind says it needs the transcripts the plugin may not read", () =>
    run(({ peer, agent }) =>
      Effect.gen(function* () {
        const creating = yield* Effect.forkChild(agent.createSession({ sessionId: "s3", cwd: WS }))
        yield* boot(peer)
        yield* Fiber.join(creating)
        const refused = yield* Effect.flip(agent.rollback({ sessionId: "s3", itemId: "i1" }))
        expect(refused.message).toContain(`${HOME}/.claude-elsewhere`)
      }),
    ))
})

describe("a stored chat without a prompt", () => {
  it("resumes under a fresh id at once: the CLI would refuse both --session-id and --resume", () =>
    run(
      ({ peer, broker, agent }) =>
        Effect.gen(function* () {
          const resuming = yield* Effect.forkChild(agent.resumeSession({ sessionId: "e1", cwd: WS }))
          const proc = yield* boot(peer)
          yield* Fiber.join(resuming)
          const fresh = proc.flag("--session-id")
          expect(fresh).not.toBe("e1")
          expect(proc.args).not.toContain("--resume")
          expect(broker.storage.get("session:e1")).toMatchObject({ cli: fresh })
          expect(
            ofType(broker.events, "Notice").some((n) => n.text.includes(`starts anew as ${fresh}`)),
          ).toBe(true)
        }),
      {
        storage: {},
        files: {
          [`${WS}/README.md`]: "ws",
          [`${HOME}/.claude/projects/-work-ws/e1.jsonl`]: `${JSON.stringify({ type: "queue-operation", operation: "enqueue", sessionId: "e1" })}\n`,
        },
      },
      "claude",
    ))
})

/** The tool names the process's MCP server lists. */
const listedTools = (proc: FakeProcess) =>
  Effect.map(
    proc.request({
      subtype: "mcp_message",
      server_name: "convergence",
      message: { jsonrpc: "2.0", id: 1, method: "tools/list" },
    }),
    (answer) => answer.response.mcp_response.result.tools.map((t: { name: string }) => t.name) as string[],
  )

const tool = (name: string) => ({ name, description: name, inputSchema: { type: "object" } })

describe("resume_session of an open chat with other tools or instructions", () => {
  it("a turn in flight keeps its process and is told; the next launch takes them; idle, they apply at once", () =>
    run(
      ({ peer, broker, agent }) =>
        Effect.gen(function* () {
          const creating = yield* Effect.forkChild(
            agent.createSession({ sessionId: "r1", cwd: WS, tools: [tool("alpha")], instructions: "One." }),
          )
          const proc = yield* boot(peer)
          yield* Fiber.join(creating)
          expect(yield* listedTools(proc)).toEqual(["alpha"])
          const first = yield* agent.prompt({ sessionId: "r1", text: "hi" })
          yield* proc.expect((f) => f.type === "user")
          yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
          // In a turn: the process stays, the call says the change waits for the next start.
          yield* agent.resumeSession({
            sessionId: "r1",
            cwd: WS,
            tools: [tool("alpha"), tool("beta")],
            instructions: "Two.",
          })
          expect(peer.processes).toHaveLength(1)
          expect(ofType(broker.events, "Notice").map((n) => n.text)).toEqual([
            expect.stringContaining("apply from Claude Code's next start"),
          ])
          // The process dies: the next launch declares the new tools and instructions.
          yield* proc.exit(null, "SIGKILL")
          yield* waitFor(
            () => ofType(broker.events, "RunEnded").some((e) => e.run_id === first.run_id),
            "the end",
          )
          const prompting = yield* Effect.forkChild(agent.prompt({ sessionId: "r1", text: "again" }))
          const next = yield* peer.nextProcess
          const init = yield* next.expectControl("initialize")
          expect(init.request.appendSystemPrompt).toBe("Two.")
          expect(yield* listedTools(next)).toEqual(["alpha", "beta"])
          yield* next.respond(init.request_id, {})
          yield* Fiber.join(prompting)
          yield* next.expect((f) => f.type === "user")
          yield* next.send({
            type: "result",
            subtype: "success",
            is_error: false,
            result: "ok",
            usage: {},
            user_message_uuids: [],
          })
          yield* waitFor(() => ofType(broker.events, "RunEnded").length === 2, "the second run's end")
          // Idle: a resume with other instructions starts the process again at once, on the conversation.
          const resuming = yield* Effect.forkChild(
            agent.resumeSession({ sessionId: "r1", cwd: WS, instructions: "Three." }),
          )
          const third = yield* peer.nextProcess
          const thirdInit = yield* third.expectControl("initialize")
          expect(thirdInit.request.appendSystemPrompt).toBe("Three.")
          expect(third.flag("--resume")).toBe("r1")
          yield* third.respond(thirdInit.request_id, {})
          yield* Fiber.join(resuming)
          expect(yield* listedTools(third)).toEqual(["alpha", "beta"])
          // The same again changes nothing.
          yield* agent.resumeSession({ sessionId: "r1", cwd: WS, instructions: "Three." })
          expect(peer.processes).toHaveLength(3)
        }),
      {
        storage: {},
        files: {
          [`${WS}/README.md`]: "ws",
          [`${HOME}/.claude/projects/-work-ws/r1.jsonl`]: `${JSON.stringify({
            type: "user",
            uuid: "u1",
            parentUuid: null,
            sessionId: "r1",
            message: { role: "user", content: "hi" },
          })}\n`,
        },
      },
      "claude",
    ))
})

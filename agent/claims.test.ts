/**
 * Claims of the product notes about the agent that no other test held,
 * against a scripted `claude` (FakePeer) with the real agent: the options
 * across launches (a refused live value never reaches the next launch,
 * `--allow-dangerously-skip-permissions` on every launch the CLI allows,
 * ultracode asked for again after a model change and checked at launch, a
 * fork of a stored chat keeping its options, the workspace's settings), and
 * what every launch declares (plugin tools and the appended prompt on resume,
 * rewind and fork; version 4 UUIDs; `claude` from PATH, never `CLAUDE_PATH`),
 * a run opened by `system/init` alone, and `usageLimits` at the first
 * `initialize`.
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { activate } from "../main.ts"
import type { AgentEvent, AgentProvider } from "../sdk/protocol.ts"
import { type FakePeer, type FakeProcess, type Frame, makeFakePeer } from "../sdk/testing/fake-peer.ts"
import {
  makeMemoryBroker,
  type MemoryBroker,
  type MemoryBrokerOptions,
} from "../sdk/testing/memory-broker.ts"

const HOME = "/home/user"
const PROJECT = `${HOME}/.claude/projects/-work-ws`
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const WS = "/work/ws"
const ALLOW = "--allow-dangerously-skip-permissions"
const AUTH_OK = JSON.stringify({ loggedIn: true, authMethod: "api_key", apiProvider: "firstParty" })

interface World {
  readonly peer: FakePeer
  readonly broker: MemoryBroker
  readonly agent: AgentProvider
  readonly events: AgentEvent[]
}

const test = <A>(body: (w: World) => Effect.Effect<A, unknown>, options: MemoryBrokerOptions = {}) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const peer = yield* makeFakePeer
      const broker = makeMemoryBroker({
        home: HOME,
        ...options,
        spawn: { claude: peer.spawn },
        run: {
          claude: (args) =>
            Effect.succeed(
              args[0] === "auth"
                ? { code: 0, stdout: AUTH_OK, stderr: "" }
                : { code: 0, stdout: "2.1.332 (Claude Code)", stderr: "" },
            ),
          npm: () => Effect.succeed({ code: 1, stdout: "", stderr: "offline" }),
        },
      })
      yield* activate(broker.api, { timeouts: { controlMs: 2_000, cancelMs: 200 } })
      const agent = broker.agent("claude")
      try {
        return yield* body({ peer, broker, agent, events: broker.events })
      } finally {
        yield* agent.dispose()
      }
    }) as Effect.Effect<A, unknown>,
  )

/** Answer the next process's initialize and return it. */
const boot = (peer: FakePeer, response: Frame = {}) =>
  Effect.gen(function* () {
    const proc = yield* peer.nextProcess
    const init = yield* proc.expectControl("initialize")
    yield* proc.respond(init.request_id, response)
    return proc
  })

/** Run a method while playing the CLI's side of the launch it makes. */
const withLaunch = <A>(peer: FakePeer, method: Effect.Effect<A, unknown>, response: Frame = {}) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(method)
    const proc = yield* boot(peer, response)
    const value = yield* Fiber.join(fiber)
    return { proc, value }
  })

/** The process exits; the next prompt launches again (resuming): that launch. */
const relaunchAfterExit = (peer: FakePeer, agent: AgentProvider, proc: FakeProcess) =>
  Effect.gen(function* () {
    yield* proc.exit(0)
    const { proc: next } = yield* withLaunch(peer, agent.prompt({ sessionId: "s1", text: "again" }))
    return next
  })

const MODELS = {
  models: [
    { value: "haiku", resolvedModel: "claude-haiku-5-5", displayName: "Haiku" },
    { value: "opus", resolvedModel: "claude-opus-5-5", displayName: "Opus" },
  ],
}

describe("a live option change", () => {
  it("a refused value is not kept: the next launch uses the one the CLI accepted", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        const refused = yield* agent
          .setOption({ sessionId: "s1", optionId: "approval_mode", value: "full" })
          .pipe(Effect.flip, Effect.forkChild)
        const mode = yield* proc.expectControl("set_permission_mode")
        yield* proc.refuse(mode.request_id, "Cannot set permission mode to bypassPermissions")
        expect((yield* Fiber.join(refused)).message).toContain("bypassPermissions")
        const next = yield* relaunchAfterExit(peer, agent, proc)
        expect(next.flag("--permission-mode")).toBe("default")
      }),
    ))

  it("an accepted value is kept for the next launch", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        const accepted = yield* agent
          .setOption({ sessionId: "s1", optionId: "approval_mode", value: "accept_edits" })
          .pipe(Effect.forkChild)
        const mode = yield* proc.expectControl("set_permission_mode")
        yield* proc.respond(mode.request_id, { mode: "acceptEdits" })
        yield* Fiber.join(accepted)
        const next = yield* relaunchAfterExit(peer, agent, proc)
        expect(next.flag("--permission-mode")).toBe("acceptEdits")
      }),
    ))
})

describe("--allow-dangerously-skip-permissions", () => {
  it("goes on every launch, whatever the approval mode, so Full access can be chosen live", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(
          peer,
          agent.createSession({ sessionId: "s1", cwd: WS, options: { approval_mode: "supervised" } }),
        )
        expect(proc.flag("--permission-mode")).toBe("default")
        expect(proc.args).toContain(ALLOW)
      }),
    ))

  it("is dropped, once and for the agent, when the CLI refuses it (root without IS_SANDBOX)", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(agent.createSession({ sessionId: "s1", cwd: WS }))
        const refusing = yield* peer.nextProcess
        expect(refusing.args).toContain(ALLOW)
        yield* refusing.stderr(
          "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n",
        )
        yield* refusing.exit(1)
        const proc = yield* boot(peer)
        const opened = yield* Fiber.join(fiber)
        expect(opened.session_id).toBe("s1")
        expect(proc.args).not.toContain(ALLOW)
        expect(proc.flag("--session-id")).toBe("s1")
        expect(ofType(events, "Notice").some((n) => n.text.includes("IS_SANDBOX=1"))).toBe(true)
        // Later launches of any session leave it out too.
        const { proc: other } = yield* withLaunch(peer, agent.createSession({ sessionId: "s2", cwd: WS }))
        expect(other.args).not.toContain(ALLOW)
      }),
    ))

  it("another early exit is the launch's failure, not a retry", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(Effect.flip(agent.createSession({ sessionId: "s1", cwd: WS })))
        const proc = yield* peer.nextProcess
        yield* proc.stderr("Error: something else\n")
        yield* proc.exit(1)
        const error = yield* Fiber.join(fiber)
        expect(error.message).toContain("something else")
        expect(peer.processes.filter((p) => p.args.includes("--session-id"))).toHaveLength(1)
      }),
    ))
})

describe("ultracode", () => {
  it("is checked with get_settings at launch", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(
          agent.createSession({ sessionId: "s1", cwd: WS, options: { model: "opus", effort: "ultracode" } }),
        )
        const proc = yield* boot(peer, MODELS)
        expect(proc.flag("--effort")).toBe("ultracode")
        const settings = yield* proc.expectControl("get_settings")
        yield* proc.respond(settings.request_id, { applied: { effort: "xhigh", ultracode: false } })
        yield* Fiber.join(fiber)
        // The launch's checks run on their own fiber.
        yield* waitFor(
          () => ofType(events, "Notice").some((n) => n.text.includes("Ultracode")),
          "the warning",
        )
      }),
    ))

  it("is sent again after a model change, then checked with get_settings", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        // Launched on Haiku (no xhigh in models.json): no --effort at all.
        const fiber = yield* Effect.forkChild(
          agent.createSession({
            sessionId: "s1",
            cwd: WS,
            options: { model: "claude-haiku-4-5", effort: "ultracode" },
          }),
        )
        const proc = yield* boot(peer, MODELS)
        expect(proc.flag("--effort")).toBeUndefined()
        const atLaunch = yield* proc.expectControl("get_settings")
        yield* proc.respond(atLaunch.request_id, { applied: { ultracode: false } })
        yield* Fiber.join(fiber)
        yield* waitFor(() => ofType(events, "Notice").length === 1, "the launch's warning")
        const change = yield* agent
          .setOption({ sessionId: "s1", optionId: "model", value: "claude-opus-5-5" })
          .pipe(Effect.forkChild)
        const setModel = yield* proc.expectControl("set_model")
        yield* proc.respond(setModel.request_id, { model: "claude-opus-5-5" })
        const apply = yield* proc.expectControl("apply_flag_settings")
        expect(apply.request.settings).toEqual({ effortLevel: "xhigh", ultracode: true })
        yield* proc.respond(apply.request_id)
        const settings = yield* proc.expectControl("get_settings")
        yield* proc.respond(settings.request_id, { applied: { effort: "xhigh", ultracode: true } })
        yield* Fiber.join(change)
        // On: no second warning.
        expect(ofType(events, "Notice")).toHaveLength(1)
      }),
    ))
})

describe("the workspace's settings", () => {
  it("a project's .claude/settings.json that turns workflows off makes ultracode plain xhigh, with a warning, and refuses it live", () =>
    test(
      ({ agent, peer, events }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(
            peer,
            agent.createSession({
              sessionId: "s1",
              cwd: WS,
              options: { model: "claude-opus-5-5", effort: "ultracode" },
            }),
            MODELS,
          )
          expect(proc.flag("--effort")).toBe("xhigh")
          yield* waitFor(
            () => ofType(events, "Notice").some((n) => n.text.includes("turn dynamic workflows off")),
            "the warning",
          )
          const effort = yield* agent
            .setOption({ sessionId: "s1", optionId: "effort", value: "high" })
            .pipe(Effect.forkChild)
          yield* proc.respond((yield* proc.expectControl("apply_flag_settings")).request_id)
          yield* Fiber.join(effort)
          const refused = yield* Effect.flip(
            agent.setOption({ sessionId: "s1", optionId: "effort", value: "ultracode" }),
          )
          expect(refused.message).toContain("workflows")
          expect(proc.received.filter((f) => f.request?.subtype === "apply_flag_settings")).toHaveLength(1)
        }),
      { files: { [`${WS}/.claude/settings.json`]: JSON.stringify({ enableWorkflows: false }) } },
    ))
})

describe("fork", () => {
  it("keeps the options of a stored chat that is not open in this process", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(
          peer,
          agent.createSession({
            sessionId: "s1",
            cwd: WS,
            options: { model: "claude-sonnet-5-5", approval_mode: "accept_edits" },
          }),
        )
        const effort = yield* agent
          .setOption({ sessionId: "s1", optionId: "effort", value: "low" })
          .pipe(Effect.forkChild)
        const apply = yield* proc.expectControl("apply_flag_settings")
        yield* proc.respond(apply.request_id)
        yield* Fiber.join(effort)
        yield* agent.closeSession({ sessionId: "s1" })
        const { proc: forked } = yield* withLaunch(
          peer,
          agent.forkSession({ sessionId: "s1", newSessionId: "f1", cwd: WS }),
        )
        expect(forked.args).toContain("--fork-session")
        expect(forked.flag("--model")).toBe("claude-sonnet-5-5")
        expect(forked.flag("--permission-mode")).toBe("acceptEdits")
        expect(forked.flag("--effort")).toBe("low")
      }),
    ))
})

const waitFor = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    const until = Date.now() + 2_000
    while (!check()) {
      if (Date.now() > until) return yield* Effect.fail(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(5)
    }
  })

const ofType = <T extends AgentEvent["type"]>(events: AgentEvent[], type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type)

const TOOL = {
  name: "lookup",
  description: "Look a word up",
  inputSchema: { type: "object", properties: { word: { type: "string" } } },
}

const transcript = (...prompts: Array<[uuid: string, parent: string | null, text: string]>) =>
  `${prompts
    .map(([uuid, parentUuid, text]) =>
      JSON.stringify({
        type: "user",
        uuid,
        parentUuid,
        sessionId: "s",
        cwd: WS,
        timestamp: "2026-01-01T00:00:00Z",
        message: { role: "user", content: text },
      }),
    )
    .join("\n")}\n`

describe("every launch", () => {
  it("declares the plugin tools and the appended prompt again on resume, rewind and fork", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          const declared = (init: Frame) => {
            expect(init.request.sdkMcpServers).toEqual(["convergence"])
            expect(init.request.appendSystemPrompt).toBe("Knob text.\n\nHost rules.")
          }
          const launch = (method: Effect.Effect<unknown, unknown>) =>
            Effect.gen(function* () {
              const fiber = yield* Effect.forkChild(method)
              const proc = yield* peer.nextProcess
              const init = yield* proc.expectControl("initialize")
              yield* proc.respond(init.request_id)
              yield* Fiber.join(fiber)
              return { proc, init }
            })
          const params = { cwd: WS, tools: [TOOL], instructions: "Host rules." }
          const resumed = yield* launch(agent.resumeSession({ sessionId: "s1", ...params }))
          expect(resumed.proc.flag("--resume")).toBe("s1")
          declared(resumed.init)
          const rewound = yield* launch(agent.rollback({ sessionId: "s1", itemId: "u2" }))
          expect(rewound.proc.flag("--resume-session-at")).toBe("a1")
          declared(rewound.init)
          // A fork of a rewound chat first restarts its origin (so the CLI names the current leaf), then forks.
          const fiber = yield* Effect.forkChild(
            agent.forkSession({ sessionId: "s1", newSessionId: "f1", ...params }),
          )
          for (const expected of ["origin", "fork"]) {
            const proc = yield* peer.nextProcess
            const init = yield* proc.expectControl("initialize")
            yield* proc.respond(init.request_id)
            declared(init)
            if (expected === "origin") expect(proc.flag("--resume")).toBe("s1")
            else expect(proc.args).toContain("--fork-session")
          }
          yield* Fiber.join(fiber)
        }),
      {
        env: { HOME, CLAUDE_APPEND_SYSTEM_PROMPT: "Knob text." },
        files: { [`${PROJECT}/s1.jsonl`]: transcript(["u1", null, "one"], ["u2", "a1", "two"]) },
      },
    ))

  it("names new sessions, aliases and forks with version 4 UUIDs", () =>
    test(
      ({ agent, peer, broker }) =>
        Effect.gen(function* () {
          const { value } = yield* withLaunch(peer, agent.createSession({ cwd: WS }))
          expect(value.session_id).toMatch(UUID_V4)
          const { value: fork } = yield* withLaunch(peer, agent.forkSession({ sessionId: "s1", cwd: WS }))
          expect(fork.session_id).toMatch(UUID_V4)
          yield* withLaunch(peer, agent.resumeSession({ sessionId: "s1", cwd: WS }))
          const { proc } = yield* withLaunch(peer, agent.rollback({ sessionId: "s1", itemId: "u1" }))
          expect(proc.flag("--session-id")).toMatch(UUID_V4)
          expect((broker.storage.get("session:s1") as { cli: string }).cli).toMatch(UUID_V4)
        }),
      { files: { [`${PROJECT}/s1.jsonl`]: transcript(["u1", null, "one"]) } },
    ))

  it("runs `claude` from the login PATH and ignores CLAUDE_PATH", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          // The memory broker spawns only the `claude` command: a path would be refused.
          const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
          expect(proc.args.join(" ")).not.toContain("/opt/elsewhere")
          expect(proc.options.env?.CLAUDE_PATH).toBeUndefined()
        }),
      { env: { HOME, CLAUDE_PATH: "/opt/elsewhere/claude" } },
    ))
})

describe("runs and the agent's info", () => {
  it("system/init alone opens a run, which its result ends", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        yield* proc.send({ type: "system", subtype: "init", model: "claude-opus-5-5", session_id: "s1" })
        yield* waitFor(() => ofType(events, "RunStarted").length === 1, "RunStarted")
        yield* proc.send({
          type: "result",
          subtype: "success",
          is_error: false,
          result: "ok",
          usage: { input_tokens: 1, output_tokens: 1 },
        })
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        const [start] = ofType(events, "RunStarted")
        expect(ofType(events, "RunEnded")[0]).toMatchObject({ run_id: start?.run_id, outcome: "Completed" })
      }),
    ))

  it("AgentInfo.usageLimits is empty at the very first initialize, filled once the probe answers", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const first = yield* agent.initialize()
        expect(first.usageLimits).toBeUndefined()
        const probe = yield* boot(peer)
        const usage = yield* probe.expectControl("get_usage")
        yield* probe.respond(usage.request_id, {
          rate_limits_available: true,
          rate_limits: { five_hour: { utilization: 40, resets_at: "2026-01-01T05:00:00Z" } },
        })
        yield* waitFor(() => peer.processes.length === 1 && probe.received.length > 0, "the probe")
        const until = Date.now() + 2_000
        let later = yield* agent.initialize()
        while (later.usageLimits === undefined && Date.now() < until) {
          yield* Effect.sleep(5)
          later = yield* agent.initialize()
        }
        expect(later.usageLimits?.windows?.length ?? 0).toBeGreaterThan(0)
      }),
    ))
})

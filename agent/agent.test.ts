/**
 * The agent against a scripted `claude` (FakePeer) with the real mapper,
 * options, knobs, history and state: what reaches the command line and the
 * control channel, the catalog probe, rollback, fork and accounts.
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
const WS = "/work/ws"
const PROJECT = `${HOME}/.claude/projects/-work-ws`

interface World {
  readonly peer: FakePeer
  readonly broker: MemoryBroker
  readonly agent: AgentProvider
  readonly events: AgentEvent[]
}

const AUTH_OK = JSON.stringify({ loggedIn: true, authMethod: "api_key", apiProvider: "firstParty" })

const makeWorld = (options: MemoryBrokerOptions = {}, agentId = "claude") =>
  Effect.gen(function* () {
    const peer = yield* makeFakePeer
    const broker = makeMemoryBroker({
      home: HOME,
      files: { [`${WS}/README.md`]: "ws", ...options.files },
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
        ...options.run,
      },
    })
    yield* activate(broker.api, { timeouts: { controlMs: 2_000, cancelMs: 200 } })
    return { peer, broker, agent: broker.agent(agentId), events: broker.events } satisfies World
  })

const test = <A>(
  body: (w: World) => Effect.Effect<A, unknown>,
  options?: MemoryBrokerOptions,
  agentId?: string,
) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const world = yield* makeWorld(options, agentId)
      try {
        return yield* body(world)
      } finally {
        yield* world.agent.dispose()
      }
    }) as Effect.Effect<A, unknown>,
  )

/** Answer the next process's initialize and return it. */
const boot = (peer: FakePeer, response: Frame = {}) =>
  Effect.gen(function* () {
    const proc = yield* peer.nextProcess
    const init = yield* proc.expectControl("initialize")
    yield* proc.respond(init.request_id, response)
    return { proc, init }
  })

/** Run a method while playing the CLI's side of the launch it makes. */
const withLaunch = <A>(peer: FakePeer, method: Effect.Effect<A, unknown>, response: Frame = {}) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(method)
    const launched = yield* boot(peer, response)
    const value = yield* Fiber.join(fiber)
    return { ...launched, value }
  })

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

/** A finished turn: the result naming the user message. */
const finishTurn = (proc: FakeProcess, uuid: string) =>
  proc.send({
    type: "result",
    subtype: "success",
    is_error: false,
    result: "ok",
    num_turns: 1,
    duration_ms: 10,
    duration_api_ms: 5,
    total_cost_usd: 0,
    usage: { input_tokens: 3, output_tokens: 4 },
    modelUsage: {},
    permission_denials: [],
    user_message_uuids: [uuid],
    session_id: "x",
    uuid: crypto.randomUUID(),
  })

const transcriptLine = (record: Frame) =>
  JSON.stringify({ sessionId: "s", cwd: WS, timestamp: "2026-01-01T00:00:00Z", ...record })

describe("initialize and the catalog probe", () => {
  it("reports status, options and continuation key, and probes the catalog once", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const info = yield* agent.initialize()
        expect(info.status).toBe("Ready")
        expect(info.continuationKey).toBe(`${HOME}/.claude`)
        expect(info.models.some((m) => m.value === "claude-opus-5-5")).toBe(true)
        expect(info.options.map((o) => o.id)).toContain("approval_mode")
        expect(info.promptKeywords?.map((k) => k.word)).toEqual(["ultracode"])
        // The probe: prompt-free and MCP-free, asking get_usage.
        const probe = yield* peer.nextProcess
        expect(probe.args).toContain("--strict-mcp-config")
        expect(probe.args).not.toContain("--mcp-config")
        const init = yield* probe.expectControl("initialize")
        expect(init.request).toEqual({ subtype: "initialize" })
        yield* probe.respond(init.request_id, {
          models: [{ value: "opus", resolvedModel: "claude-opus-5-5", displayName: "Opus" }],
          commands: [{ name: "review", description: "Review code" }],
        })
        const usage = yield* probe.expectControl("get_usage")
        yield* probe.respond(usage.request_id, {
          rate_limits_available: true,
          rate_limits: { five_hour: { utilization: 40, resets_at: "2026-01-01T05:00:00Z" } },
        })
        yield* waitFor(() => probe.received.length > 0 && Effect.runSync(probe.exited), "the probe to end")
        expect(probe.received.some((f) => f.type === "user")).toBe(false)
        const again = yield* agent.initialize()
        expect(again.usageLimits?.windows[0]).toMatchObject({ id: "five_hour", used: 0.4 })
        expect(again.models.find((m) => m.value === "claude-opus-5-5")?.aliases).toContain("opus")
        expect(again.skills?.some((s) => s.name === "review" && s.source === "cli")).toBe(true)
        expect(peer.processes).toHaveLength(1)
      }),
    ))

  it("skips the maintenance check (no npm, no maintenance info) while CLAUDE_MAINTENANCE_CHECK is off", async () => {
    const infoWith = async (env: Record<string, string>) => {
      const npm: string[][] = []
      const info = await test(({ agent }) => agent.initialize(), {
        env,
        run: {
          npm: (args) =>
            Effect.sync(() => {
              npm.push([...args])
              return { code: 1, stdout: "", stderr: "offline" }
            }),
        },
      })
      return { info, npm }
    }
    const checked = await infoWith({})
    expect(checked.npm.length).toBeGreaterThan(0)
    expect(checked.info.maintenance).toBeDefined()
    const skipped = await infoWith({ CLAUDE_MAINTENANCE_CHECK: "off" })
    expect(skipped.npm).toEqual([])
    expect(skipped.info.maintenance).toBeUndefined()
    expect(skipped.info.status).toBe("Ready")
  })

  it("concurrent usage requests share one probe", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const both = yield* Effect.all([agent.getUsage(), agent.getUsage()], { concurrency: 2 }).pipe(
          Effect.forkChild,
        )
        const probe = yield* peer.nextProcess
        const init = yield* probe.expectControl("initialize")
        yield* probe.respond(init.request_id, {})
        const usage = yield* probe.expectControl("get_usage")
        yield* probe.respond(usage.request_id, {
          rate_limits: { seven_day: { utilization: 10, resets_at: "2026-01-07T00:00:00Z" } },
        })
        const [a, b] = yield* Fiber.join(both)
        expect(a).toEqual(b)
        expect(a.windows[0]).toMatchObject({ id: "seven_day", used: 0.1 })
        expect(peer.processes).toHaveLength(1)
      }),
    ))
})

describe("sessions", () => {
  it("launches with the options, the knobs and the account's environment", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          const { proc, init, value } = yield* withLaunch(
            peer,
            agent.createSession({
              sessionId: "host-1",
              cwd: WS,
              instructions: "Follow the house rules.",
              options: { model: "claude-opus-5-5", effort: "high", approval_mode: "full" },
            }),
          )
          expect(value.session_id).toBe("host-1")
          expect(proc.options.cwd).toBe(WS)
          expect(proc.flag("--session-id")).toBe("host-1")
          expect(proc.flag("--model")).toBe("claude-opus-5-5")
          expect(proc.flag("--effort")).toBe("high")
          expect(proc.flag("--permission-mode")).toBe("bypassPermissions")
          expect(proc.args).toContain("--allow-dangerously-skip-permissions")
          expect(proc.args).toContain("--forward-subagent-text")
          expect(proc.flags("--add-dir")).toEqual([WS, "/opt/a", "/opt/b"])
          expect(proc.flags("--mcp-config")).toEqual(["/cfg/one.json", "/cfg/two.json"])
          expect(proc.args).toContain("--strict-mcp-config")
          expect(proc.flag("--setting-sources")).toBe("user,project")
          // The user's own arguments come last.
          expect(proc.args.slice(-2)).toEqual(["--verbose", "--name=x y"])
          expect(proc.options.env?.CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS).toBe("1")
          expect(proc.options.env).not.toHaveProperty("HOME")
          expect(proc.options.env).not.toHaveProperty("CLAUDE_CONFIG_DIR")
          expect(init.request).toEqual({
            subtype: "initialize",
            appendSystemPrompt: "Be terse.\n\nFollow the house rules.",
          })
        }),
      {
        env: {
          HOME,
          CLAUDE_ADD_DIRS: "/opt/a:/opt/b",
          CLAUDE_MCP_CONFIG: "/cfg/one.json /cfg/two.json",
          CLAUDE_STRICT_MCP_CONFIG: "1",
          CLAUDE_SETTING_SOURCES: "user, project",
          CLAUDE_EXTRA_ARGS: `--verbose "--name=x y"`,
          CLAUDE_APPEND_SYSTEM_PROMPT: "Be terse.",
        },
      },
    ))

  it("an account with its own directory exports CLAUDE_CONFIG_DIR and its env", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(peer, agent.createSession({ cwd: WS }))
          expect(proc.options.env?.CLAUDE_CONFIG_DIR).toBe(`${HOME}/.claude-work`)
          expect(proc.options.env?.ANTHROPIC_BASE_URL).toBe("http://proxy.local")
          expect(proc.options.env).not.toHaveProperty("HOME")
          const info = yield* agent.initialize()
          expect(info.continuationKey).toBe(`${HOME}/.claude-work`)
        }),
      {
        storage: {
          instances: [
            {
              id: "work",
              name: "Work",
              configDir: "~/.claude-work",
              env: { ANTHROPIC_BASE_URL: "http://proxy.local" },
            },
          ],
        },
      },
      "claude:work",
    ))

  it("maps a turn with the real mapper and reports delivery ids", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        const accepted = yield* agent.prompt({
          sessionId: "s1",
          text: "hi",
          deliveryId: "d1",
          itemId: "item-1",
        })
        const user = yield* proc.expect((f) => f.type === "user")
        yield* proc.send({ type: "system", subtype: "session_state_changed", state: "running" })
        yield* proc.send({
          type: "stream_event",
          event: { type: "message_start", message: { id: "msg_1", model: "claude-opus-5-5", usage: {} } },
          parent_tool_use_id: null,
        })
        yield* proc.send({
          type: "stream_event",
          event: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
          parent_tool_use_id: null,
        })
        yield* proc.send({
          type: "stream_event",
          event: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hello" } },
          parent_tool_use_id: null,
        })
        yield* finishTurn(proc, user.uuid)
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        expect(ofType(events, "TextDelta").map((e) => e.text)).toEqual(["Hello"])
        expect(ofType(events, "RunEnded")[0]).toMatchObject({
          run_id: accepted.run_id,
          outcome: "Completed",
          delivery_ids: ["d1"],
        })
      }),
    ))

  it("setOption changes a running session; ultracode that did not apply is a warning", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        // The CLI's picker values become aliases of the versioned models.
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }), {
          models: [{ value: "sonnet", resolvedModel: "claude-sonnet-5-5", displayName: "Sonnet" }],
        })
        const model = yield* agent
          .setOption({ sessionId: "s1", optionId: "model", value: "sonnet" })
          .pipe(Effect.forkChild)
        const setModel = yield* proc.expectControl("set_model")
        expect(setModel.request.model).toBe("claude-sonnet-5-5")
        yield* proc.respond(setModel.request_id, { model: "claude-sonnet-5-5" })
        yield* Fiber.join(model)
        const effort = yield* agent
          .setOption({ sessionId: "s1", optionId: "effort", value: "ultracode" })
          .pipe(Effect.forkChild)
        const apply = yield* proc.expectControl("apply_flag_settings")
        expect(apply.request.settings).toEqual({ effortLevel: "xhigh", ultracode: true })
        yield* proc.respond(apply.request_id)
        const settings = yield* proc.expectControl("get_settings")
        yield* proc.respond(settings.request_id, { applied: { effort: "xhigh", ultracode: false } })
        yield* Fiber.join(effort)
        expect(
          ofType(events, "Notice").some((n) => n.level === "warning" && n.text.includes("Ultracode")),
        ).toBe(true)
        const refused = yield* agent
          .setOption({ sessionId: "s1", optionId: "approval_mode", value: "auto" })
          .pipe(Effect.flip, Effect.forkChild)
        const mode = yield* proc.expectControl("set_permission_mode")
        expect(mode.request.mode).toBe("auto")
        yield* proc.refuse(mode.request_id, "auto mode is unavailable")
        const error = yield* Fiber.join(refused)
        expect(error.message).toContain("auto mode is unavailable")
      }),
    ))

  it("thinking off on a model that keeps it: no no-op flag, and a notice at launch and at the change", () =>
    test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(
          peer,
          agent.createSession({
            sessionId: "t1",
            cwd: WS,
            options: { model: "claude-opus-5-5", thinking: false },
          }),
        )
        expect(proc.args).not.toContain("--thinking")
        expect(proc.flag("--thinking-display")).toBe("summarized")
        const staysOn = () =>
          ofType(events, "Notice").filter(
            (n) => n.level === "warning" && n.text.includes("Thinking stays on"),
          )
        yield* waitFor(() => staysOn().length === 1, "the launch's notice")
        expect(staysOn()[0]?.text).toContain("Opus 5.5")
        // Thinking on: nothing to say; off again: said again.
        yield* agent.setOption({ sessionId: "t1", optionId: "thinking", value: true })
        expect(staysOn()).toHaveLength(1)
        yield* agent.setOption({ sessionId: "t1", optionId: "thinking", value: false })
        expect(staysOn()).toHaveLength(2)
      }),
    ))

  it("cancel_task stops a subagent by its agent id and refuses an unknown task", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        yield* agent.prompt({ sessionId: "s1", text: "spawn" })
        yield* proc.expect((f) => f.type === "user")
        yield* proc.send({
          type: "assistant",
          message: {
            id: "msg_1",
            role: "assistant",
            model: "claude-opus-5-5",
            content: [
              {
                type: "tool_use",
                id: "toolu_agent",
                name: "Agent",
                input: { description: "Look", prompt: "look" },
              },
            ],
          },
          parent_tool_use_id: null,
        })
        yield* proc.send({
          type: "system",
          subtype: "task_started",
          task_id: "agent-77",
          tool_use_id: "toolu_agent",
          description: "Look",
          task_type: "local_agent",
        })
        const stop = yield* agent
          .cancelTask({ sessionId: "s1", taskId: "toolu_agent" })
          .pipe(Effect.forkChild)
        const request = yield* proc.expectControl("stop_task")
        expect(request.request.task_id).toBe("agent-77")
        yield* proc.respond(request.request_id, {})
        yield* Fiber.join(stop)
        const missing = yield* Effect.flip(agent.cancelTask({ sessionId: "s1", taskId: "nope" }))
        expect(missing._tag).toBe("TaskNotFound")
      }),
    ))
})

describe("rollback and fork", () => {
  it("rewinds by host item id to the message before it, and to nothing under a new alias", () =>
    test(({ agent, peer, broker }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        yield* agent.prompt({ sessionId: "s1", text: "one", itemId: "item-1" })
        const u1 = yield* proc.expect((f) => f.type === "user")
        yield* finishTurn(proc, u1.uuid)
        yield* agent.prompt({ sessionId: "s1", text: "two", itemId: "item-2" })
        const u2 = yield* proc.expect((f) => f.type === "user")
        yield* finishTurn(proc, u2.uuid)
        // Each prompt is remembered by the UUID it was sent with (the record's uuid).
        expect(broker.storage.get("session:s1")).toEqual({ sent: { "item-1": u1.uuid, "item-2": u2.uuid } })
        // The CLI's transcript: our UUIDs became the user records' uuids.
        broker.files.set(
          `${PROJECT}/s1.jsonl`,
          [
            transcriptLine({
              type: "user",
              uuid: u1.uuid,
              parentUuid: null,
              message: { role: "user", content: "one" },
            }),
            transcriptLine({
              type: "assistant",
              uuid: "a1",
              parentUuid: u1.uuid,
              message: { id: "m1", role: "assistant", content: [{ type: "text", text: "1" }] },
            }),
            transcriptLine({
              type: "user",
              uuid: u2.uuid,
              parentUuid: "a1",
              message: { role: "user", content: "two" },
            }),
            transcriptLine({
              type: "assistant",
              uuid: "a2",
              parentUuid: u2.uuid,
              message: { id: "m2", role: "assistant", content: [{ type: "text", text: "2" }] },
            }),
          ].join("\n") + "\n",
        )
        const { proc: rewound } = yield* withLaunch(
          peer,
          agent.rollback({ sessionId: "s1", itemId: "item-2" }),
        )
        expect(rewound.flag("--resume")).toBe("s1")
        expect(rewound.flag("--resume-session-at")).toBe("a1")
        expect(yield* proc.exited).toBe(true)
        expect(broker.storage.get("session:s1")).toEqual({ sent: { "item-1": u1.uuid } })

        const { proc: fresh } = yield* withLaunch(peer, agent.rollback({ sessionId: "s1", itemId: "item-1" }))
        const alias = fresh.flag("--session-id")
        expect(alias).toMatch(/^[0-9a-f-]{36}$/)
        expect(alias).not.toBe("s1")
        expect(fresh.args).not.toContain("--resume")
        expect(broker.storage.get("session:s1")).toEqual({ cli: alias, sent: {} })
        const unknown = yield* Effect.flip(agent.rollback({ sessionId: "s1", itemId: "never-sent" }))
        expect(unknown._tag).toBe("RewindImpossible")
      }),
    ))

  it("lists a chat rewound to nothing under its own id, with the live conversation, the old one hidden", () => {
    const HOST = "aaaaaaaa-0000-4000-8000-000000000001"
    const OTHER = "bbbbbbbb-0000-4000-8000-000000000002"
    const prompt = (uuid: string, text: string) =>
      `${transcriptLine({ type: "user", uuid, parentUuid: null, message: { role: "user", content: text } })}\n`
    return test(
      ({ agent, peer, broker }) =>
        Effect.gen(function* () {
          yield* withLaunch(peer, agent.resumeSession({ sessionId: HOST, cwd: WS }))
          yield* withLaunch(peer, agent.rollback({ sessionId: HOST, itemId: "u1" }))
          const alias = (broker.storage.get(`session:${HOST}`) as { cli: string }).cli
          broker.files.set(`${PROJECT}/${alias}.jsonl`, prompt("v1", "the new start"))
          const page = yield* agent.listSessions({ cwd: WS })
          expect(page.sessions.map((x) => [x.session_id, x.title]).sort()).toEqual([
            [HOST, "the new start"],
            [OTHER, "another chat"],
          ])
          // A second rewind to nothing: the first alias's file is left behind too.
          yield* withLaunch(peer, agent.rollback({ sessionId: HOST, itemId: "v1" }))
          const second = (broker.storage.get(`session:${HOST}`) as { cli: string }).cli
          broker.files.set(`${PROJECT}/${second}.jsonl`, prompt("w1", "once more"))
          const again = yield* agent.listSessions({ cwd: WS })
          expect(again.sessions.map((x) => [x.session_id, x.title]).sort()).toEqual([
            [HOST, "once more"],
            [OTHER, "another chat"],
          ])
        }),
      {
        files: {
          [`${PROJECT}/${HOST}.jsonl`]: prompt("u1", "the old start"),
          [`${PROJECT}/${OTHER}.jsonl`]: prompt("o1", "another chat"),
        },
      },
    )
  })

  it("lists an alias from before the alias index (older or imported state) under its host id", () => {
    const HOST = "aaaaaaaa-0000-4000-8000-000000000003"
    const ALIAS = "cccccccc-0000-4000-8000-000000000004"
    const prompt = (uuid: string, text: string) =>
      `${transcriptLine({ type: "user", uuid, parentUuid: null, message: { role: "user", content: text } })}\n`
    return test(
      ({ agent }) =>
        Effect.gen(function* () {
          const page = yield* agent.listSessions({ cwd: WS })
          expect(page.sessions.map((x) => [x.session_id, x.title])).toEqual([[HOST, "the live one"]])
        }),
      {
        storage: { [`session:${HOST}`]: { cli: ALIAS, sent: {} } },
        files: {
          [`${PROJECT}/${HOST}.jsonl`]: prompt("u1", "the old start"),
          [`${PROJECT}/${ALIAS}.jsonl`]: prompt("v1", "the live one"),
        },
      },
    )
  })

  it("rewinds by a stored user item's id (readSession), after a resume, and by an older index value", () => {
    const records = [
      transcriptLine({
        type: "user",
        uuid: "u1",
        parentUuid: null,
        message: { role: "user", content: "one" },
      }),
      transcriptLine({
        type: "assistant",
        uuid: "a1",
        parentUuid: "u1",
        message: { id: "m1", role: "assistant", content: [{ type: "text", text: "1" }] },
      }),
      transcriptLine({
        type: "user",
        uuid: "u2",
        parentUuid: "a1",
        message: { role: "user", content: "two" },
      }),
      transcriptLine({
        type: "assistant",
        uuid: "a2",
        parentUuid: "u2",
        message: { id: "m2", role: "assistant", content: [{ type: "text", text: "2" }] },
      }),
      transcriptLine({
        type: "user",
        uuid: "u3",
        parentUuid: "a2",
        message: { role: "user", content: "three" },
      }),
    ]
    return test(
      ({ agent, peer, broker }) =>
        Effect.gen(function* () {
          yield* withLaunch(peer, agent.resumeSession({ sessionId: "s1", cwd: WS }))
          const read = yield* agent.readSession({ sessionId: "s1", cwd: WS })
          const users = read.items.filter((i) => i.type === "user")
          expect(users.map((u) => u.id)).toEqual(["u1", "u2", "u3"])
          // The stored item id, never sent by this process, names its record.
          const { proc: rewound } = yield* withLaunch(peer, agent.rollback({ sessionId: "s1", itemId: "u3" }))
          expect(rewound.flag("--resume-session-at")).toBe("a2")
          // What the old state kept by index: prompt 1 ("two"); "old-late" pointed past the kept ones.
          expect(broker.storage.get("session:s1")).toEqual({ sent: { "old-0": 0, "old-1": 1 } })
          const { proc: again } = yield* withLaunch(
            peer,
            agent.rollback({ sessionId: "s1", itemId: "old-1" }),
          )
          expect(again.flag("--resume-session-at")).toBe("a1")
          expect(broker.storage.get("session:s1")).toEqual({ sent: { "old-0": 0 } })
          // An assistant item is not a prompt: nothing restarts.
          const notPrompt = yield* Effect.flip(agent.rollback({ sessionId: "s1", itemId: "a1" }))
          expect(notPrompt._tag).toBe("RewindImpossible")
          expect(notPrompt.message).toContain("a1")
        }),
      {
        storage: { "session:s1": { sent: { "old-0": 0, "old-1": 1, "old-late": 2 } } },
        files: { [`${PROJECT}/s1.jsonl`]: `${records.join("\n")}\n` },
      },
    )
  })

  it("resumes under the stored alias, and forks keeping the origin's options", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(
            peer,
            agent.resumeSession({ sessionId: "s1", cwd: WS, options: { model: "claude-sonnet-5-5" } }),
          )
          expect(proc.flag("--resume")).toBe("cli-alias")
          const { proc: forked, value } = yield* withLaunch(
            peer,
            agent.forkSession({ sessionId: "s1", newSessionId: "f1", cwd: WS }),
          )
          expect(value.session_id).toBe("f1")
          const at = forked.args.indexOf("--resume")
          expect(forked.args.slice(at, at + 5)).toEqual([
            "--resume",
            "cli-alias",
            "--fork-session",
            "--session-id",
            "f1",
          ])
          expect(forked.flag("--model")).toBe("claude-sonnet-5-5")
        }),
      {
        storage: { "session:s1": { cli: "cli-alias", sent: {} } },
        files: {
          [`${PROJECT}/cli-alias.jsonl`]: `${transcriptLine({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hello" } })}\n`,
        },
      },
    ))

  it("resumes a chat not open here with its stored options, the host's given ones on top", () =>
    test(
      ({ agent, peer }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(peer, agent.resumeSession({ sessionId: "s1", cwd: WS }))
          expect(proc.flag("--permission-mode")).toBe("acceptEdits")
          expect(proc.flag("--model")).toBe("claude-sonnet-5-5")
          yield* agent.closeSession({ sessionId: "s1" })
          const { proc: again } = yield* withLaunch(
            peer,
            agent.resumeSession({ sessionId: "s1", cwd: WS, options: { model: "claude-opus-5-5" } }),
          )
          expect(again.flag("--permission-mode")).toBe("acceptEdits")
          expect(again.flag("--model")).toBe("claude-opus-5-5")
        }),
      {
        storage: {
          "session:s1": { sent: {}, options: { approval_mode: "accept_edits", model: "claude-sonnet-5-5" } },
        },
        files: {
          [`${PROJECT}/s1.jsonl`]: `${transcriptLine({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "hello" } })}\n`,
        },
      },
    ))

  it("a chat that never got a prompt resumes as a new conversation under its id", () =>
    test(({ agent, peer }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.resumeSession({ sessionId: "empty-1", cwd: WS }))
        expect(proc.flag("--session-id")).toBe("empty-1")
        expect(proc.args).not.toContain("--resume")
      }),
    ))
})

describe("workflows", () => {
  it("follows a recorded workflow run: agents' transcript files and the record from output_file", async () => {
    const { readFileSync, readdirSync, statSync } = await import("node:fs")
    const { join } = await import("node:path")
    const root = join(import.meta.dirname, "../testdata/workflow")
    const files: Record<string, string> = {}
    const walk = (dir: string, target: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name)
        if (statSync(path).isDirectory()) walk(path, `${target}/${name}`)
        else files[`${target}/${name}`] = readFileSync(path, "utf8")
      }
    }
    walk(join(root, "projects"), "/sandbox/home/.claude/projects")
    walk(join(root, "tasks"), "/sandbox/tmp")
    const frames = readFileSync(join(root, "stdout.jsonl"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => JSON.parse(line) as Frame)
    await test(
      ({ agent, peer, events }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(
            peer,
            agent.createSession({ sessionId: "s1", cwd: "/sandbox/ws" }),
          )
          yield* agent.prompt({ sessionId: "s1", text: "Run the workflow" })
          yield* proc.expect((f) => f.type === "user")
          for (const frame of frames.slice(1)) {
            yield* proc.send(frame)
            if (frame.type === "control_request" && frame.request?.subtype === "can_use_tool") {
              yield* waitFor(() => ofType(events, "ApprovalRequested").length === 1, "the Workflow approval")
              const approval = ofType(events, "ApprovalRequested")[0]!
              yield* agent.answerApproval({
                sessionId: "s1",
                approvalId: approval.approval_id,
                decision: "allow",
              })
            }
          }
          yield* waitFor(
            () =>
              ofType(events, "Task").some(
                (e) => e.task.id === "toolu_wf_1" && e.task.workflow?.result !== undefined,
              ),
            "the workflow's record",
          )
          const workflow = ofType(events, "Task")
            .filter((e) => e.task.id === "toolu_wf_1")
            .at(-1)!.task
          expect(workflow.workflow?.phases.map((p) => p.title)).toEqual(["Gather", "Report"])
          expect(workflow.status).toBe("Completed")
          // The agents' own messages reached their tasks from the transcript files.
          const agentTasks = new Set(
            events
              .filter((e) => e.task_id?.startsWith("toolu_wf_1/") && e.type !== "Task")
              .map((e) => e.task_id),
          )
          expect(agentTasks.size).toBeGreaterThanOrEqual(2)
          // A workflow agent cannot be stopped on its own.
          const [agentTask] = [...agentTasks]
          const refused = yield* Effect.flip(agent.cancelTask({ sessionId: "s1", taskId: agentTask! }))
          expect(refused._tag).toBe("TaskNotStoppable")
          // The whole workflow stops by the CLI's task id.
          const stop = yield* agent
            .cancelTask({ sessionId: "s1", taskId: "toolu_wf_1" })
            .pipe(Effect.forkChild)
          const request = yield* proc.expectControl("stop_task")
          expect(request.request.task_id).toBe("w0kuy5bxk")
          yield* proc.respond(request.request_id, {})
          yield* Fiber.join(stop)
          expect(ofType(events, "RunEnded").length).toBe(2)
        }),
      { home: "/sandbox/home", files: { "/sandbox/ws/README.md": "ws", ...files } },
    )
  })
})

/** The stdout frames of a recording in testdata/. */
const recorded = async (scenario: string): Promise<Frame[]> => {
  const { readFileSync } = await import("node:fs")
  const { join } = await import("node:path")
  return readFileSync(join(import.meta.dirname, "..", "testdata", scenario, "stdout.jsonl"), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Frame)
}

describe("usage limits and skills", () => {
  it("a rejected rate limit reports usage_blocked in the run, refreshes the limits, and the result still ends the run", async () => {
    const frames = await recorded("rate_limit")
    await test(({ agent, peer, events }) =>
      Effect.gen(function* () {
        const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
        const first = yield* agent.prompt({ sessionId: "s1", text: "hi" })
        yield* proc.expect((f) => f.type === "user")
        const firstTurn = frames.slice(1, frames.findIndex((f) => f.type === "result") + 1)
        for (const frame of firstTurn) yield* proc.send(frame)
        yield* waitFor(() => ofType(events, "RunEnded").length === 1, "RunEnded")
        const blocked = ofType(events, "usage_blocked")
        expect(blocked).toHaveLength(1)
        expect(blocked[0]).toMatchObject({ run_id: first.run_id, window: "five_hour" })
        // The responsible window's reset, as the recording's rejection reports it (unix seconds).
        const rejection = frames.find(
          (f) => f.type === "rate_limit_event" && f.rate_limit_info?.status === "rejected",
        )
        const resetsAt = rejection?.rate_limit_info?.resetsAt as number
        expect(resetsAt).toBeGreaterThan(1_700_000_000)
        expect(blocked[0]!.resets_at).toBe(new Date(resetsAt * 1000).toISOString())
        expect(ofType(events, "UsageLimits").length).toBeGreaterThan(0)
        expect(ofType(events, "RunEnded")[0]).toMatchObject({ run_id: first.run_id, outcome: "Failed" })
        const info = yield* agent.initialize()
        expect(info.usageLimits?.windows.find((w) => w.id === "five_hour")?.status).toBe("rejected")
      }),
    )
  })

  it("emits Skills at session start and again only when the list changed after a run", () =>
    test(
      ({ agent, peer, events, broker }) =>
        Effect.gen(function* () {
          const { proc } = yield* withLaunch(peer, agent.createSession({ sessionId: "s1", cwd: WS }))
          yield* waitFor(() => ofType(events, "Skills").length === 1, "the first Skills")
          expect(ofType(events, "Skills")[0]!.skills.map((s) => s.name)).toEqual(["tidy"])
          const turn = (text: string) =>
            Effect.gen(function* () {
              yield* agent.prompt({ sessionId: "s1", text })
              const user = yield* proc.expect((f) => f.type === "user")
              const before = ofType(events, "RunEnded").length
              yield* finishTurn(proc, user.uuid)
              yield* waitFor(() => ofType(events, "RunEnded").length === before + 1, "RunEnded")
              yield* Effect.sleep(20)
            })
          yield* turn("one")
          expect(ofType(events, "Skills")).toHaveLength(1)
          broker.files.set(
            `${WS}/.claude/skills/ship/SKILL.md`,
            "---\nname: ship\ndescription: Ship it\n---\nbody",
          )
          yield* turn("two")
          expect(ofType(events, "Skills")).toHaveLength(2)
          expect(
            ofType(events, "Skills")[1]!
              .skills.map((s) => s.name)
              .sort(),
          ).toEqual(["ship", "tidy"])
        }),
      {
        files: {
          [`${HOME}/.claude/skills/tidy/SKILL.md`]: "---\nname: tidy\ndescription: Tidy up\n---\nbody",
        },
      },
    ))
})

/**
 * The CLI version and capability table (cli-version.ts), what it does to the
 * launch line and the options (one test per left-out flag), and the agent on
 * an older CLI against a scripted `claude` (FakePeer): the one notice, and
 * `Unavailable` below the oldest supported release.
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import {
  type CliTable,
  compareVersions,
  FEATURES,
  makeCliDetector,
  OLDEST_SUPPORTED,
  parseCliVersion,
  supportOf,
} from "./cli-version.ts"
import { launchArgs } from "./session/launch.ts"
import { activate } from "./main.ts"
import { modelCatalog } from "./models.ts"
import { agentOptions, effortChoices, launchFlags } from "./options.ts"
import { liveRequests } from "./options/live.ts"
import { Process } from "./sdk/plugin-api.ts"
import type { AgentEvent, AgentProvider } from "./sdk/protocol.ts"
import { type FakePeer, makeFakePeer } from "./sdk/testing/fake-peer.ts"
import { makeMemoryBroker, type MemoryBroker } from "./sdk/testing/memory-broker.ts"

const v = (text: string) => parseCliVersion(text) as NonNullable<ReturnType<typeof parseCliVersion>>
const cli = (text: string) => supportOf(v(text))
const NEW = { kind: "new", cliId: "c1" } as const
const argsOn = (version: string) =>
  launchArgs({ start: NEW, workspace: "/w", optionFlags: [], cli: cli(version) })
const catalog = modelCatalog(undefined)

describe("the version", () => {
  it("is read from `claude --version`, suffixes ignored; anything else is no version", () => {
    expect(parseCliVersion("2.1.282 (Claude Code)")).toEqual({
      major: 2,
      minor: 1,
      patch: 282,
      text: "2.1.282",
    })
    expect(parseCliVersion("2.1.333-beta.1 (Claude Code)")?.text).toBe("2.1.333")
    expect(parseCliVersion("claude: command not found")).toBeUndefined()
    expect(parseCliVersion("")).toBeUndefined()
  })

  it("compares numerically, part by part", () => {
    expect(compareVersions(v("2.1.282"), v("2.1.332"))).toBeLessThan(0)
    expect(compareVersions(v("2.1.1000"), v("2.1.332"))).toBeGreaterThan(0)
    expect(compareVersions(v("3.0.0"), v("2.9.999"))).toBeGreaterThan(0)
    expect(compareVersions(v("2.1.211"), v("2.1.211"))).toBe(0)
  })
})

describe("the capability table", () => {
  it("has every feature at and after its first release, none before", () => {
    expect(cli("2.1.332").missing).toEqual([])
    expect(cli("2.1.282").missing).toEqual([])
    expect(cli("2.1.211").missing).toEqual([])
    expect(cli("2.1.210").missing).toEqual(["forwardSubagentText"])
    expect(cli("2.1.203").missing).toEqual(["forwardSubagentText"])
    expect(cli("2.1.202").missing).toEqual(["forwardSubagentText", "ultracodeEffort"])
    expect(cli("2.1.202").has("ultracodeEffort")).toBe(false)
    expect(cli("2.1.202").has("forwardSubagentText")).toBe(false)
  })

  it("takes a CLI whose version it cannot read as current: the CLI decides", () => {
    const unknown = supportOf(undefined)
    expect(unknown.missing).toEqual([])
    expect(unknown.unsupported).toBeUndefined()
  })

  it("refuses a CLI below the oldest supported release, naming the release it needs and how to update", () => {
    expect(cli(OLDEST_SUPPORTED.text).unsupported).toBeUndefined()
    const old = cli("2.1.199").unsupported
    expect(old).toContain("Claude Code 2.1.199 is too old")
    expect(old).toContain(`needs ${OLDEST_SUPPORTED.text} or newer`)
    expect(old).toContain("claude update")
    expect(cli("1.0.128").unsupported).toBeDefined()
  })

  it("says what the user would miss in one notice, with the release that brings it; a flag whose loss is nil says nothing", () => {
    expect(cli("2.1.332").notice).toBeUndefined()
    // Before --forward-subagent-text the CLI forwarded subagent text unasked: nothing to tell.
    expect(cli("2.1.205").notice).toBeUndefined()
    expect(cli("2.1.202").notice).toBe(
      `This Claude Code 2.1.202 has no --effort ultracode: ${FEATURES.ultracodeEffort.loss}. Update to 2.1.203 or newer for them.`,
    )
  })
})

describe("the launch line for an older CLI", () => {
  it("leaves out --forward-subagent-text before 2.1.211, and only that", () => {
    expect(argsOn("2.1.211")).toContain("--forward-subagent-text")
    expect(argsOn("2.1.332")).toContain("--forward-subagent-text")
    const old = argsOn("2.1.210")
    expect(old).not.toContain("--forward-subagent-text")
    expect(old).toEqual(argsOn("2.1.211").filter((a) => a !== "--forward-subagent-text"))
  })

  it("sends --effort xhigh for ultracode before 2.1.203 (the nearest level it has)", () => {
    const flags = (version: string) => launchFlags({ effort: "ultracode" }, catalog, true, cli(version))
    const effortOf = (f: string[]) => f[f.indexOf("--effort") + 1]
    expect(effortOf(flags("2.1.203"))).toBe("ultracode")
    expect(effortOf(flags("2.1.202"))).toBe("xhigh")
    // Other levels go out as they are on any release.
    expect(launchFlags({ effort: "max" }, catalog, true, cli("2.1.202"))).toContain("max")
  })

  it("asks a running older CLI for xhigh without ultracode", () => {
    const live = (version: string) =>
      liveRequests("effort", "ultracode", { effort: "ultracode" }, catalog, cli(version))
    expect(live("2.1.332")).toEqual([
      { subtype: "apply_flag_settings", settings: { effortLevel: "xhigh", ultracode: true } },
    ])
    expect(live("2.1.202")).toEqual([
      { subtype: "apply_flag_settings", settings: { effortLevel: "xhigh", ultracode: false } },
    ])
  })

  it("offers ultracode only where the CLI has it", () => {
    const opus = catalog.find((m) => m.value === "claude-opus-5-5")
    expect(opus).toBeDefined()
    if (!opus) return
    expect(effortChoices(opus, {}, cli("2.1.203")).map((c) => c.value)).toContain("ultracode")
    expect(effortChoices(opus, {}, cli("2.1.202")).map((c) => c.value)).not.toContain("ultracode")
    const effort = agentOptions(catalog, {}, cli("2.1.202")).find((o) => o.id === "effort")
    expect(effort?.choices?.map((c) => c.value)).not.toContain("ultracode")
    expect(effort?.choices?.map((c) => c.value)).toContain("xhigh")
  })
})

// ---------------------------------------------------------------------------
// The agent on an older CLI (FakePeer)

const HOME = "/home/user"
const WS = "/work/ws"
const AUTH_OK = JSON.stringify({ loggedIn: true, authMethod: "api_key", apiProvider: "firstParty" })

interface World {
  readonly peer: FakePeer
  readonly broker: MemoryBroker
  readonly agent: AgentProvider
  readonly events: AgentEvent[]
}

/** An agent whose `claude --version` prints `printed`. */
const onCli = <A>(printed: string, body: (w: World) => Effect.Effect<A, unknown>, cliTable?: CliTable) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const peer = yield* makeFakePeer
      const broker = makeMemoryBroker({
        home: HOME,
        files: { [`${WS}/README.md`]: "ws" },
        spawn: { claude: peer.spawn },
        run: {
          claude: (args) =>
            Effect.succeed(
              args[0] === "auth"
                ? { code: 0, stdout: AUTH_OK, stderr: "" }
                : { code: 0, stdout: printed, stderr: "" },
            ),
          npm: () => Effect.succeed({ code: 1, stdout: "", stderr: "offline" }),
        },
      })
      yield* activate(broker.api, {
        timeouts: { controlMs: 2_000, cancelMs: 200 },
        ...(cliTable && { cliTable }),
      })
      const world: World = { peer, broker, agent: broker.agent("claude"), events: broker.events }
      try {
        return yield* body(world)
      } finally {
        yield* world.agent.dispose()
      }
    }) as Effect.Effect<A, unknown>,
  )

const waitFor = (check: () => boolean, what: string) =>
  Effect.gen(function* () {
    const until = Date.now() + 2_000
    while (!check()) {
      if (Date.now() > until) return yield* Effect.fail(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep(5)
    }
  })

/** The real table with ultracode moved to a later release than the CLI under test. */
const LATER_ULTRACODE: CliTable = {
  oldest: OLDEST_SUPPORTED,
  features: { ...FEATURES, ultracodeEffort: { ...FEATURES.ultracodeEffort, since: v("2.1.340") } },
}

const notices = (events: AgentEvent[]) =>
  events.filter((e): e is Extract<AgentEvent, { type: "Notice" }> => e.type === "Notice")

describe("the agent on an older CLI", () => {
  it("launches a CLI older than a flag the plugin uses without it, says so once per session, and relaunches the same way", () =>
    // The case the table is for: the plugin adopts a flag newer than the user's CLI (here, ultracode from 2.1.340).
    onCli(
      "2.1.332 (Claude Code)",
      ({ agent, peer, events }) =>
        Effect.gen(function* () {
          const info = yield* agent.initialize()
          expect(info.status).toBe("Ready")
          const effort = info.options.find((o) => o.id === "effort")
          expect(effort?.choices?.map((c) => c.value)).not.toContain("ultracode")
          // The probe the initialize started.
          const probe = yield* peer.nextProcess
          yield* probe.respond((yield* probe.expectControl("initialize")).request_id, {})
          yield* probe.respond((yield* probe.expectControl("get_usage")).request_id, {})

          const creating = yield* Effect.forkChild(
            agent.createSession({ sessionId: "s1", cwd: WS, options: { effort: "ultracode" } }),
          )
          const proc = yield* peer.nextProcess
          yield* proc.respond((yield* proc.expectControl("initialize")).request_id, {})
          yield* Fiber.join(creating)
          expect(proc.flag("--effort")).toBe("xhigh")
          expect(proc.args).toContain("--forward-subagent-text")
          yield* waitFor(() => notices(events).length > 0, "the notice")
          expect(notices(events).map((n) => [n.session_id, n.level, n.text])).toEqual([
            ["s1", "warning", supportOf(v("2.1.332"), undefined, LATER_ULTRACODE).notice],
          ])
          expect(notices(events)[0]?.text).toContain("This Claude Code 2.1.332 has no --effort ultracode")

          // The process exits; the next prompt relaunches it: same line, no second notice.
          yield* proc.exit(1)
          const prompting = yield* Effect.forkChild(agent.prompt({ sessionId: "s1", text: "again" }))
          const again = yield* peer.nextProcess
          yield* again.respond((yield* again.expectControl("initialize")).request_id, {})
          yield* Fiber.join(prompting)
          expect(again.flag("--effort")).toBe("xhigh")
          yield* Effect.sleep(50)
          expect(notices(events).filter((n) => n.text.startsWith("This Claude Code"))).toHaveLength(1)
        }),
      LATER_ULTRACODE,
    ))

  it("gives 2.1.332 every flag and no notice", () =>
    onCli("2.1.332 (Claude Code)", ({ agent, peer, events }) =>
      Effect.gen(function* () {
        const creating = yield* Effect.forkChild(agent.createSession({ sessionId: "s1", cwd: WS }))
        const proc = yield* peer.nextProcess
        yield* proc.respond((yield* proc.expectControl("initialize")).request_id, {})
        yield* Fiber.join(creating)
        expect(proc.args).toContain("--forward-subagent-text")
        yield* Effect.sleep(50)
        expect(notices(events).filter((n) => n.text.startsWith("This Claude Code"))).toEqual([])
      }),
    ))

  it("is Unavailable on a CLI below the oldest supported release, and starts no process", () =>
    onCli("2.1.202 (Claude Code)", ({ agent, broker }) =>
      Effect.gen(function* () {
        const info = yield* agent.initialize()
        expect(info.status).toBe("Unavailable")
        expect(info.statusMessage).toContain("Claude Code 2.1.202 is too old")
        expect(info.statusMessage).toContain(`needs ${OLDEST_SUPPORTED.text} or newer`)
        const created = yield* Effect.exit(agent.createSession({ sessionId: "s1", cwd: WS }))
        expect(created._tag).toBe("Failure")
        expect(JSON.stringify(created)).toContain("is too old")
        expect(broker.spawned).toEqual([])
      }),
    ))
})

describe("the detector", () => {
  it("runs `claude --version` once, and again only after forget (an update)", async () => {
    let printed = "2.1.210 (Claude Code)"
    const broker = makeMemoryBroker({
      home: HOME,
      run: { claude: () => Effect.succeed({ code: 0, stdout: printed, stderr: "" }) },
    })
    const detector = makeCliDetector()
    const detect = () =>
      Effect.runPromise(detector.detect.pipe(Effect.provideService(Process, broker.api.process)))
    const first = await detect()
    expect(first.version?.text).toBe("2.1.210")
    expect(first.path).toBe("/usr/local/bin/claude")
    printed = "2.1.332 (Claude Code)"
    expect((await detect()).version?.text).toBe("2.1.210")
    expect(broker.ran.filter((r) => r.command === "claude")).toHaveLength(1)
    detector.forget()
    expect((await detect()).missing).toEqual([])
    expect(broker.ran.filter((r) => r.command === "claude")).toHaveLength(2)
  })

  it("takes a CLI that cannot say its version as current", async () => {
    const broker = makeMemoryBroker({
      home: HOME,
      run: { claude: () => Effect.succeed({ code: 127, stdout: "", stderr: "not found" }) },
    })
    const support = await Effect.runPromise(
      makeCliDetector().detect.pipe(Effect.provideService(Process, broker.api.process)),
    )
    expect(support.version).toBeUndefined()
    expect(support.missing).toEqual([])
  })
})

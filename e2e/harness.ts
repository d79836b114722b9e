/**
 * End-to-end harness: the plugin loaded by host/ under its grants, driving
 * the REAL `claude` CLI (the pinned devDependency, or the one CVG_TEST_CLI
 * names: see testkit/cli.ts, through a `claude` link on the login PATH)
 * against testkit's scripted model on 127.0.0.1. No network, no login: a
 * temporary HOME, a dummy API key. A test that needs a newer CLI than the
 * oldest the suite runs declares it with `cliUnderTest.atLeast` and asserts
 * the graceful behaviour below it.
 */
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { type Host, startHost } from "../host/core/host.ts"
import {
  type CliSupport,
  type CliVersion,
  compareVersions,
  parseCliVersion,
  supportOf,
} from "../cli-version.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { cliEnv, makeSandbox, type Sandbox, testCliVersion } from "../testkit/cli.ts"
import {
  type ModelServer,
  type RequestView,
  type Scenario,
  startModelServer,
} from "../testkit/model-server.ts"
import { afterAll, afterEach, expect } from "vitest"

export const repoRoot = join(import.meta.dirname, "..")

/**
 * Where a release changed what the tests see: the first release with the
 * newer behaviour (the suite's oldest release has the older one).
 */
export const CLI_CHANGES = {
  /** `rate_limit_event` for an API key (a 429 with unified headers): 2.1.319 and older write none (bisected on the registry's releases). */
  rateLimitEventForApiKey: "2.1.321",
  /** `set_model`'s answer names the model it switched to: 2.1.332 does, 2.1.282 answers `{}` (not bisected between). */
  setModelNamesModel: "2.1.332",
  /** A steer's pickup is seen in the reply's request (`system/status requesting` lists it): 2.1.332; 2.1.282 shows it only in the result (not bisected between). */
  steerNamedInRequest: "2.1.332",
} as const

/** The CLI this run drives: its version, what the plugin's table says it has, and a version check. */
export const cliUnderTest: {
  readonly version: CliVersion
  readonly support: CliSupport
  readonly atLeast: (version: string) => boolean
} = (() => {
  const version = parseCliVersion(testCliVersion())
  if (!version) throw new Error(`the CLI under test printed no version: ${testCliVersion()}`)
  return {
    version,
    support: supportOf(version),
    atLeast: (other) => compareVersions(version, parseCliVersion(other) as CliVersion) >= 0,
  }
})()

/** Every sandbox this test file made (a file runs in its own worker, so other files' stay apart). */
const sandboxRoots = new Set<string>()

/** The worlds started since the last test ended: closeWorldsAfterEach closes and checks them. */
const worldsOfThisTest = new Set<World>()

export interface World {
  readonly sandbox: Sandbox
  readonly server: ModelServer
  readonly host: Host
  readonly agentId: string
  /** Extra login variables, read at every launch (change them between sessions). */
  readonly env: Record<string, string | undefined>
  /** The agent events of one session so far. */
  readonly events: (sessionId: string) => AgentEvent[]
  /** Wait for the first event of a session matching `match` (recorded or later). */
  readonly waitFor: <T extends AgentEvent["type"]>(
    sessionId: string,
    type: T,
    match?: (event: Extract<AgentEvent, { type: T }>) => boolean,
    timeoutMs?: number,
  ) => Promise<Extract<AgentEvent, { type: T }>>
  readonly close: () => Promise<void>
}

export interface WorldOptions {
  /** Extra login environment for the CLI (e.g. todo tools). */
  readonly env?: Record<string, string>
}

export const startWorld = async (scenario: Scenario, options: WorldOptions = {}): Promise<World> => {
  const sandbox = makeSandbox("cvg-e2e-")
  sandboxRoots.add(sandbox.root)
  const server = await startModelServer(scenario)
  const env: Record<string, string | undefined> = { ...cliEnv(sandbox, server), ...options.env }
  mkdirSync(join(sandbox.root, "data"), { recursive: true })
  let host: Host
  try {
    host = await startHost({
      pluginDir: repoRoot,
      home: sandbox.home,
      dataDir: join(sandbox.root, "data"),
      env,
      workspaces: [sandbox.ws],
      killGraceMs: 1_000,
    })
  } catch (error) {
    await server.close()
    sandbox.cleanup()
    throw error
  }
  const agentId = "claude"
  let closed: Promise<void> | undefined
  const sessionEvents = (sessionId: string) =>
    host.events.agentEvents(agentId).filter((e) => e.session_id === sessionId) as AgentEvent[]
  const world: World = {
    sandbox,
    server,
    host,
    agentId,
    env,
    events: sessionEvents,
    waitFor: async (sessionId, type, match, timeoutMs = 30_000) => {
      const found = await host.events.waitFor(
        (e) =>
          e.kind === "agent_event" &&
          e.event.session_id === sessionId &&
          e.event.type === type &&
          (!match || match(e.event as never)),
        timeoutMs,
      )
      return (found as { event: AgentEvent }).event as never
    },
    // Once: a test may close its world before closeWorldsAfterEach does.
    close: () => {
      closed ??= (async () => {
        try {
          await host.close()
        } finally {
          await server.close()
          sandbox.cleanup()
        }
      })()
      return closed
    },
  }
  worldsOfThisTest.add(world)
  return world
}

export const ofType = <T extends AgentEvent["type"]>(events: ReadonlyArray<AgentEvent>, type: T) =>
  events.filter((e): e is Extract<AgentEvent, { type: T }> => e.type === type)

/** Start a session in the sandbox's workspace. */
export const createSession = (world: World, params: Record<string, unknown> = {}) =>
  world.host.call(world.agentId, "createSession", { cwd: world.sandbox.ws, ...params })

/** Prompt and wait for the run's end. */
export const promptAndWait = async (world: World, sessionId: string, text: string, timeoutMs = 30_000) => {
  const accepted = await world.host.call(world.agentId, "prompt", { sessionId, text })
  const ended = await world.waitFor(sessionId, "RunEnded", (e) => e.run_id === accepted.run_id, timeoutMs)
  return { accepted, ended }
}

/**
 * Processes still running from this file's sandboxes (their command line
 * names the sandbox's `claude` link). Used to prove no `claude` outlives a suite.
 */
export const strayClaudes = (): Array<{ pid: number; cmdline: string }> => {
  const found: Array<{ pid: number; cmdline: string }> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      if ([...sandboxRoots].some((root) => cmdline.includes(`${root}/bin/claude`)))
        found.push({ pid: Number(entry), cmdline })
    } catch {
      // Gone already.
    }
  }
  return found
}

/**
 * Every live process started for this world, whatever its group or parent:
 * the ones whose environment has the sandbox's HOME (the CLI, its tool
 * commands, their children). Zombies are left out. How tests count
 * descendants without trusting the broker's own bookkeeping.
 */
export const processesOf = (world: World): Array<{ pid: number; cmdline: string }> => {
  const needle = Buffer.from(`HOME=${world.sandbox.home}\0`)
  const found: Array<{ pid: number; cmdline: string }> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue
      const environ = readFileSync(`/proc/${entry}/environ`)
      if (environ.indexOf(needle) < 0) continue
      found.push({
        pid: Number(entry),
        cmdline: readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " "),
      })
    } catch {
      // Gone already.
    }
  }
  return found
}

/** Wait until `check` holds, up to `ms`; whether it did. */
export const eventually = async (check: () => boolean, ms: number): Promise<boolean> => {
  const until = Date.now() + ms
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 50))
  return check()
}

/** The user texts of a request, in order (tool results and system reminders left out). */
export const userTexts = (req: RequestView): string[] =>
  req.messages
    .filter((m) => m.role === "user")
    .flatMap((m) =>
      typeof m.content === "string"
        ? [m.content]
        : (m.content as Array<{ type: string; text?: string }>)
            .filter((b) => b.type === "text" && typeof b.text === "string")
            .map((b) => b.text as string),
    )
    .filter((t) => !t.startsWith("<system-reminder>"))

/** Prompt with a host item id and wait for a Completed run. */
export const promptItem = async (w: World, sessionId: string, textIn: string, itemId: string) => {
  const accepted = await w.host.call(w.agentId, "prompt", { sessionId, text: textIn, itemId })
  const ended = await w.waitFor(sessionId, "RunEnded", (e) => e.run_id === accepted.run_id)
  expect(ended.outcome).toBe("Completed")
}

/** The tool results the model received in a request, as one text. */
export const toolResultText = (req: RequestView): string =>
  req
    .toolResults()
    .map((r) => r.content)
    .join("\n")

/**
 * Every world a test started is closed after it (again, if the test closed
 * it itself), and must leave no `claude` running; nothing this file started
 * may outlive the file.
 */
export const closeWorldsAfterEach = (): void => {
  afterEach(async () => {
    const closing = [...worldsOfThisTest]
    worldsOfThisTest.clear()
    for (const world of closing) {
      await world.close()
      expect(world.host.processes()).toEqual([])
    }
  })
  afterAll(() => {
    expect(strayClaudes()).toEqual([])
  })
}

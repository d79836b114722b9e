/**
 * `npm run acp`: this repository's plugin, loaded by host/ under its grants,
 * served as an Agent Client Protocol agent on stdin/stdout (newline-
 * delimited JSON-RPC). stdout carries only the protocol; diagnostics go to
 * stderr. When the client closes stdin (or the process gets SIGTERM/SIGINT)
 * every session closes and the host ends every `claude` process it started,
 * then the process exits.
 *
 * The connection is served from the first moment: the plugin process is
 * spawned first, before the host's own modules load (spawnEarly), the host
 * starts alongside the client's `initialize`, and the agent's
 * info from the last probe is kept in `<data>/acp/agent-info.json` (at a
 * first start, the plugin's built-in catalog stands in: built-in-info.ts),
 * so neither `session/new` nor `session/load` waits for a CLI start
 * (agent.ts).
 *
 *   npm run acp                      the default account (your Claude login, or ANTHROPIC_API_KEY)
 *   npm run acp -- --demo            the offline demo: testkit's scripted model on 127.0.0.1
 *   npm run acp -- --account <id>    a stored account (agent claude:<id>)
 *   npm run acp -- --login           run `claude auth login` in this terminal (ACP terminal auth)
 *   npm run acp -- --auto-continue identified|any   one "continue" when a usage limit's window reopens
 *
 * The same file bundled (scripts/build-acp.mjs → dist/acp/server.mjs, started
 * by the entry dist/acp/main.mjs, which turns on Node's compile cache first)
 * runs with plain `node`; the host bundles the plugin for its process at start.
 */
import { spawn } from "node:child_process"
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { Readable } from "node:stream"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { parseAutoContinueMode } from "../core/auto-continue.ts"
import type { AgentInfo } from "../../sdk/protocol.ts"
import type { Host } from "../core/host.ts"
import { type SpawnedPlugin, spawnPluginChild } from "../plugin-process/spawn.ts"
import type { DemoWorld } from "../tui/demo-env.ts"
import type { BatchedStdio } from "./stdout.ts"
// Only node: modules and light files above: the plugin process is spawned before the host (effect,
// zod) is imported, so the child's start overlaps the host's loading. The ACP side (the SDK, its
// schemas, the agent) is imported once the host has handed the child its broker; the demo's world
// only with --demo.

const here = dirname(fileURLToPath(import.meta.url))
/** host/acp/ or dist/acp/: the repository is two folders up either way. */
const repoRoot = resolve(here, "..", "..")
// The plugin is the repository's own: the host bundles it for its plugin process (host/plugin-process/).
const pluginDir = repoRoot

const USAGE = `npm run acp [-- options]   (or: node dist/acp/main.mjs [options])

  Serves Claude Code as an Agent Client Protocol agent on stdin/stdout.

  --demo            the offline demo: a scripted model on 127.0.0.1, no login needed
  --account <id>    use a stored account (default: claude, your own login)
  --data <dir>      the host's data folder (default ~/.local/share/convergence-claude)
  --login           run \`claude auth login\` here and exit (what an editor's terminal auth runs)
  --keep            keep the demo's temporary folder
  --auto-continue <identified|any>  when a usage limit blocks a run, send one "continue"
                    at its reset (identified: claude.ai accounts only; any: also keys and tokens)
`

/** stdin and stdout carry the protocol, written in batches (stdout.ts); flushed before every exit. */
let stdio: BatchedStdio | undefined
const exit = (code: number) => {
  stdio?.flush()
  process.exit(code)
}

const say = (line: string) => process.stderr.write(`[acp] ${line}\n`)

const version = (): string => {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version
  } catch {
    return "0"
  }
}

/**
 * The plugin process's heap: the young generation capped at 1 MB a half
 * (less memory idle and through a long session/load, no cost in time:
 * `npm run bench -- acp`), and a 64 MB first heap limit, as the terminal
 * front end's plugin process has (fewer mark-compacts in a fresh process's
 * first long read). CVG_ACP_PLUGIN_V8 replaces both (the flags
 * child-flags.ts admits; "" for V8's defaults).
 */
const PLUGIN_V8_FLAGS = (process.env.CVG_ACP_PLUGIN_V8 ?? "--max-semi-space-size=1 --initial-heap-size=64")
  .split(" ")
  .filter(Boolean)

/**
 * The plugin process, spawned before anything else loads (spawn.ts: the
 * same command line, grants and empty environment the host gives it);
 * `startHost` takes it. None when the manifest cannot be read here: the
 * host then reports what is wrong with it and spawns nothing.
 */
const spawnEarly = (): Promise<SpawnedPlugin | undefined> => {
  let main: unknown
  try {
    main = (JSON.parse(readFileSync(join(pluginDir, "plugin.manifest.json"), "utf8")) as { main?: unknown })
      .main
  } catch {}
  if (typeof main !== "string") return Promise.resolve(undefined)
  return spawnPluginChild({ pluginDir, main, v8Flags: PLUGIN_V8_FLAGS }).catch(() => undefined)
}

/**
 * ACP has no update method, so the plugin's maintenance check (the CLI's
 * owner and published version: `npm view`, a network call for most
 * installs) is work on the way to the first `session/new` that nobody
 * reads: turned off unless the environment already says otherwise.
 */
const withoutMaintenance = (env: Record<string, string | undefined>) => {
  // In place: the host reads this same object at every launch (mcp.ts sets CLAUDE_MCP_CONFIG in it).
  env.CLAUDE_MAINTENANCE_CHECK ??= "off"
  return env
}

/** The agent info last probed, per agent id: read at start, rewritten (atomically) when a probe answers. */
const infoFile = (dataDir: string) => join(dataDir, "acp", "agent-info.json")

const readKnownInfo = (dataDir: string, agentId: string): AgentInfo | undefined => {
  try {
    const all = JSON.parse(readFileSync(infoFile(dataDir), "utf8")) as Record<string, unknown>
    const info = all[agentId] as Partial<AgentInfo> | undefined
    // A file from another version, or hand-edited: used only when it has the shape answers need.
    if (info && typeof info.status === "string" && Array.isArray(info.options) && Array.isArray(info.models))
      return info as AgentInfo
  } catch {}
  return undefined
}

const rememberInfo = (dataDir: string, agentId: string) => (info: AgentInfo) => {
  const file = infoFile(dataDir)
  try {
    let all: Record<string, unknown> = {}
    try {
      all = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
    } catch {}
    if (JSON.stringify(all[agentId]) === JSON.stringify(info)) return
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(`${file}.tmp`, JSON.stringify({ ...all, [agentId]: info }))
    renameSync(`${file}.tmp`, file)
  } catch (error) {
    say(`could not keep the agent's info in ${file}: ${String(error)}`)
  }
}

const login = (): Promise<number> =>
  new Promise((done) => {
    const child = spawn("claude", ["auth", "login"], { stdio: "inherit", env: process.env })
    child.on("error", (error) => {
      say(`claude auth login could not start: ${error.message}`)
      done(1)
    })
    child.on("exit", (code) => done(code ?? 1))
  })

const main = async (): Promise<number> => {
  const { values } = parseArgs({
    options: {
      demo: { type: "boolean" },
      account: { type: "string" },
      data: { type: "string" },
      login: { type: "boolean" },
      keep: { type: "boolean" },
      "auto-continue": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  })
  if (values.help) {
    process.stderr.write(USAGE)
    return 0
  }
  if (values.login) return login()
  const autoContinue = parseAutoContinueMode(values["auto-continue"])
  if (autoContinue === undefined) {
    say(`--auto-continue ${values["auto-continue"]}: use identified, any or off`)
    return 2
  }

  const debug = process.env.CVG_ACP_DEBUG === "1"
  const since = (what: string) => debug && say(`${what} at +${Math.round(performance.now())} ms`)
  since("entry loaded")
  const spawning = spawnEarly()
  if (debug) void spawning.then((early) => early && since("plugin process spawned"))
  const [{ startHost }, spawnedPlugin] = await Promise.all([import("../core/host.ts"), spawning])
  since("host side loaded")
  let pluginStarting!: () => void
  const pluginStarted = new Promise<void>((resolve) => (pluginStarting = resolve))

  let world: DemoWorld | undefined
  let env: Record<string, string | undefined>
  let agentId: string
  let dataDir: string
  let starting: Promise<Host>
  if (values.demo) {
    const { startDemoWorld } = await import("../tui/demo-env.ts")
    world = await startDemoWorld(pluginDir, { keep: values.keep === true })
    env = { ...world.env }
    agentId = world.agentId
    // --data keeps the demo's chats (and so its session list) across starts.
    dataDir = values.data ? resolve(values.data) : world.dataDir
    starting = startHost({
      pluginDir,
      home: world.home,
      dataDir,
      env: withoutMaintenance(env),
      workspaces: [world.workspace],
      pluginV8Flags: PLUGIN_V8_FLAGS,
      onPluginStarting: pluginStarting,
      ...(spawnedPlugin && { spawnedPlugin }),
    })
    say(
      `demo: the model is scripted (testkit/demo.ts on ${world.server.url}); sessions run in ${world.workspace}`,
    )
  } else {
    const account = values.account ?? "claude"
    agentId = account === "claude" || account.startsWith("claude:") ? account : `claude:${account}`
    dataDir = resolve(
      values.data ??
        join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share"), "convergence-claude"),
    )
    // The user's own `claude`, found on their PATH (the pinned one is the demo's and the tests').
    env = { ...process.env }
    starting = startHost({
      pluginDir,
      dataDir,
      env: withoutMaintenance(env),
      pluginV8Flags: PLUGIN_V8_FLAGS,
      onPluginStarting: pluginStarting,
      ...(spawnedPlugin && { spawnedPlugin }),
    })
  }
  // The child starts on the other core while this one evaluates the ACP side; a host that fails
  // before its plugin starts is reported below, through hostReady.
  await Promise.race([pluginStarted, starting.then(undefined, () => {})])
  since("plugin process starting")
  const [{ makeAcpAgent }, { mcpEnvSetter }, { batchedStdio }, { builtInInfo }] = await Promise.all([
    import("./agent.ts"),
    import("./mcp.ts"),
    import("./stdout.ts"),
    import("./built-in-info.ts"),
  ])

  /** The host, once its plugin provides the agent; a host that cannot is closed and the process ends. */
  const hostReady = starting.then(async (host) => {
    since("host started")
    if (debug)
      host.logger.subscribe((e) =>
        say(
          `${e.level} ${e.source}: ${e.message}${e.data === undefined ? "" : ` ${JSON.stringify(e.data)}`}`,
        ),
      )
    if (!host.agents.has(agentId))
      await host.events
        .waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
        .catch(async () => {
          say(`no account ${agentId} (have: ${[...host.agents.keys()].join(", ")})`)
          await host.close()
          await world?.close()
          exit(1)
        })
    since("agent provided")
    return host
  })

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await (await starting.catch(() => undefined))?.close()
      await world?.close()
    })()
    return closing
  }
  process.once("SIGTERM", () => void close().then(() => exit(143)))
  process.once("SIGINT", () => void close().then(() => exit(130)))

  const agent = makeAcpAgent({
    host: hostReady,
    agentId,
    setMcpConfig: mcpEnvSetter(env),
    ...(world && { fixedCwd: world.workspace }),
    // A first start (no info kept yet) answers from the plugin's built-in catalog; the probe's follows.
    knownInfo: readKnownInfo(dataDir, agentId) ?? builtInInfo(agentId),
    rememberInfo: (info) => {
      since("catalog probed")
      rememberInfo(dataDir, agentId)(info)
    },
    version: version(),
    // The legacy terminal sign-in runs this very entry again with --login.
    selfCommand: { command: process.execPath, args: [...process.execArgv, process.argv[1]!] },
    log: say,
    debug,
    autoContinue,
  })
  stdio = batchedStdio(process.stdout, Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>)
  const connection = agent.app.connect(stdio.stream)
  since("serving")
  // A host that could not start ends the process: nothing can be served without it.
  await Promise.race([connection.closed, hostReady])
  await connection.closed
  await agent.closeSessions()
  await close()
  return 0
}

main().then(
  (code) => exit(code),
  (error: unknown) => {
    say(error instanceof Error ? (error.stack ?? error.message) : String(error))
    exit(1)
  },
)

/**
 * `npm run acp`: this repository's plugin, loaded by host/ under its grants,
 * served as an Agent Client Protocol agent on stdin/stdout (newline-
 * delimited JSON-RPC). stdout carries only the protocol; diagnostics go to
 * stderr. When the client closes stdin (or the process gets SIGTERM/SIGINT)
 * every session closes and the host ends every `claude` process it started,
 * then the process exits.
 *
 *   npm run acp                      the default account (your Claude login, or ANTHROPIC_API_KEY)
 *   npm run acp -- --demo            the offline demo: testkit's scripted model on 127.0.0.1
 *   npm run acp -- --account <id>    a stored account (agent claude:<id>)
 *   npm run acp -- --login           run `claude auth login` in this terminal (ACP terminal auth)
 *   npm run acp -- --auto-continue identified|any   one "continue" when a usage limit's window reopens
 *
 * The same file bundled (scripts/build-acp.mjs → dist/acp/main.mjs) runs
 * with plain `node`, the plugin beside it in dist/acp/plugin/.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { Readable, Writable } from "node:stream"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import * as acp from "@agentclientprotocol/sdk/unstable"
import { parseAutoContinueMode } from "../auto-continue.ts"
import { startHost } from "../host.ts"
import { type DemoWorld, startDemoWorld } from "../tui/demo-env.ts"
import { loginPath } from "../tui/login.ts"
import { makeAcpAgent } from "./agent.ts"
import { mcpEnvSetter } from "./mcp.ts"

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

const say = (line: string) => process.stderr.write(`[acp] ${line}\n`)

const version = (): string => {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string }).version
  } catch {
    return "0"
  }
}

const login = (): Promise<number> =>
  new Promise((done) => {
    const child = spawn("claude", ["auth", "login"], {
      stdio: "inherit",
      env: { ...process.env, PATH: loginPath(process.env.PATH) },
    })
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

  let world: DemoWorld | undefined
  let env: Record<string, string | undefined>
  let agentId: string
  let host: Awaited<ReturnType<typeof startHost>>
  if (values.demo) {
    world = await startDemoWorld(pluginDir, { keep: values.keep === true })
    env = { ...world.env }
    agentId = world.agentId
    host = await startHost({
      pluginDir,
      home: world.home,
      dataDir: world.dataDir,
      env,
      workspaces: [world.workspace],
    })
    say(
      `demo: the model is scripted (testkit/demo.ts on ${world.server.url}); sessions run in ${world.workspace}`,
    )
  } else {
    const account = values.account ?? "claude"
    agentId = account === "claude" || account.startsWith("claude:") ? account : `claude:${account}`
    const dataDir = resolve(
      values.data ??
        join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share"), "convergence-claude"),
    )
    env = { ...process.env, PATH: loginPath(process.env.PATH) }
    host = await startHost({ pluginDir, dataDir, env })
  }

  const debug = process.env.CVG_ACP_DEBUG === "1"
  if (debug)
    host.logger.subscribe((e) =>
      say(`${e.level} ${e.source}: ${e.message}${e.data === undefined ? "" : ` ${JSON.stringify(e.data)}`}`),
    )

  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await host.close()
      await world?.close()
    })()
    return closing
  }
  process.once("SIGTERM", () => void close().then(() => process.exit(143)))
  process.once("SIGINT", () => void close().then(() => process.exit(130)))

  try {
    if (!host.agents.has(agentId))
      await host.events.waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
  } catch {
    say(`no account ${agentId} (have: ${[...host.agents.keys()].join(", ")})`)
    await close()
    return 1
  }

  const agent = makeAcpAgent({
    host,
    agentId,
    setMcpConfig: mcpEnvSetter(env),
    ...(world && { fixedCwd: world.workspace }),
    version: version(),
    log: say,
    debug,
    autoContinue,
  })
  const stream = acp.ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  )
  const connection = agent.app.connect(stream)
  await connection.closed
  await agent.closeSessions()
  await close()
  return 0
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(error instanceof Error ? (error.stack ?? error.message) : String(error))
    process.exit(1)
  },
)

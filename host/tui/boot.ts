/**
 * What happens behind the input line once it is up: find a login (or choose
 * the offline demo), the data folder and its enabled plugin, start the host
 * with it, wait for the agent, say what runs where, and open the session.
 * Lines typed meanwhile wait (app.ts) and run once this resolves true.
 *
 * The host, the demo's world and the plugin verbs are imported here, not by
 * the entry: the input line does not wait for them to load.
 */
import { homedir } from "node:os"
import { join, resolve } from "node:path"
import type { Host, StartHostOptions } from "../core/host.ts"
import type { Chat, ChatOptions } from "./app.ts"
import type { Parsed } from "./args.ts"
import { type Format, NO_AGENT } from "./context.ts"
import type { DemoWorld } from "./demo-env.ts"
import { detectLogin, type LoginState, loginPath } from "./login.ts"
import { loadMarkdown } from "./markdown.ts"
import { readPreferences, rememberPreference } from "./preferences.ts"

type Paint = (format: Format, text: string) => string

export interface BootContext {
  readonly values: Parsed["values"]
  /** A one-shot run (a prompt argument): no invitation to type. */
  readonly oneShot: boolean
  readonly program: string
  readonly chat: Chat
  /** The chat's options, filled in here with what only the start knows (data folder, env, reload…). */
  readonly options: { -readonly [K in keyof ChatOptions]: ChatOptions[K] }
  readonly paint: Paint
  /** Run at exit, last registered first. */
  readonly cleanup: (fn: () => Promise<void>) => void
  /** What the start found, for the exit's hints. */
  readonly found: { world?: DemoWorld; dataDir?: string }
}

/** The host's data folder (plugins, accounts, storage, prompt history) when no --data is given. */
export const defaultDataDir = () =>
  join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share"), "convergence-claude")

const whyDemo = (login: LoginState): string =>
  login.kind === "no_cli"
    ? `no Claude Code CLI could be run (${login.reason})`
    : "no ANTHROPIC_API_KEY, and `claude auth status` says you are not logged in"

/** How to get a real login from here: the CLI a checkout pins, or the one on PATH. */
const loginHint = (login: LoginState | undefined, program: string): string => {
  const checkout = program.startsWith("npm")
  const signIn = checkout ? "`npx claude auth login` (the CLI this repository pins)" : "`claude auth login`"
  const again = checkout ? "npm start" : "cvg"
  return login?.kind === "no_cli"
    ? `Install Claude Code${checkout ? " (npm ci here puts the pinned one in node_modules/.bin)" : ""}, then sign in with ${signIn}, or set ANTHROPIC_API_KEY.`
    : `Sign in with ${signIn}, or set ANTHROPIC_API_KEY, then run ${again} again.`
}

/** The demo's world, or undefined for a real login; false when the flags cannot go together (said). */
const chooseWorld = async (
  b: BootContext,
): Promise<{ world?: DemoWorld; why?: string; login?: LoginState } | false> => {
  const { values, chat, paint } = b
  let login: LoginState | undefined
  let why: string | undefined
  if (values.demo) why = "--demo"
  else if (values.account === undefined) {
    login = await detectLogin(process.env)
    if (login.kind === "no_cli" || login.kind === "logged_out") why = whyDemo(login)
  }
  if (why === undefined) return { ...(login && { login }) }
  if (values.data !== undefined) {
    chat.say(
      `${paint("red", "✗ --data is not used by the demo")}${paint("dim", " — the demo keeps its accounts and storage in its own temporary folder; drop --data, or use --account")}`,
    )
    return false
  }
  const { startDemoWorld } = await import("./demo-env.ts")
  const world = await startDemoWorld((await import("./plugin-verbs.ts")).packageRoot, {
    keep: values.keep === true,
    ...(values.cwd && { workspace: resolve(values.cwd) }),
  })
  b.cleanup(() => world.close())
  // Nobody at a keyboard in the demo: its approvals and questions are answered, saying so.
  if (b.options.approvals === "deny")
    Object.assign(b.options, { approvals: "allow", questions: "first", policyReason: "demo" })
  return { world, why, ...(login && { login }) }
}

/** Say what runs where (and, for the demo, what it is). */
const banner = async (
  b: BootContext,
  host: Host,
  found: { world?: DemoWorld; why?: string; login?: LoginState },
) => {
  const { chat, paint, options } = b
  chat.say(
    `${paint("bold", "convergence/claude")} ${paint("dim", `· plugin ${host.manifest.id} in host/ · account ${options.agentId}`)}`,
    paint("dim", `workspace ${options.cwd}`),
  )
  const world = found.world
  if (!world) return
  const { DEMO_ACCOUNT_NAME } = await import("./demo-env.ts")
  chat.say(
    paint(["yellow", "bold"], `DEMO — the model is scripted (testkit/demo.ts on ${world.server.url}).`) +
      paint("yellow", " No network, no login; it is not Claude."),
    paint("dim", `  why: ${found.why}. ${DEMO_ACCOUNT_NAME} is the account.`),
    paint("dim", `  ${loginHint(found.login, b.program)}`),
    ...(!b.oneShot
      ? [`  Type anything (try ${paint("bold", '"Show me around"')}) to run it. /help lists the commands.`]
      : []),
  )
}

/** Start everything behind the input line: true when the chat can go on, false when it must end (said why). */
export const boot = async (b: BootContext): Promise<boolean> => {
  const { values, chat, paint, options } = b
  const markdown = loadMarkdown()
  const found = await chooseWorld(b)
  if (!found) return false
  const world = found.world
  b.found.world = world
  const dataDir = world?.dataDir ?? resolve(values.data ?? defaultDataDir())
  b.found.dataDir = dataDir
  const account = values.account ?? "claude"
  const agentId =
    world?.agentId ?? (account === "claude" || account.startsWith("claude:") ? account : `claude:${account}`)
  const cwd = world?.workspace ?? options.cwd
  const env = world?.env ?? { ...process.env, PATH: loginPath(process.env.PATH) }
  Object.assign(options, {
    agentId,
    cwd,
    dataDir,
    env,
    remembered: world ? {} : readPreferences(dataDir, agentId),
    remember: (optionId: string, value: string) => rememberPreference(dataDir, agentId, optionId, value),
  })
  const verbs = await import("./plugin-verbs.ts")
  // The demo and npm start run this repository's plugin: installed and enabled for them, saying so.
  if (world) {
    const { installPlugin, setEnabled } = await import("../core/installed.ts")
    const { plugin } = await installPlugin(dataDir, verbs.packageRoot)
    setEnabled(dataDir, plugin.id, true)
    chat.say(
      paint(
        "dim",
        `the demo installed and enabled ${plugin.id} (this repository's plugin) in its own data folder`,
      ),
    )
  } else if (b.program.startsWith("npm")) {
    const said = await verbs.ensureOwnPlugin(dataDir, paint)
    if (said) chat.say(said)
  }
  const plugin = await verbs.enabledAgentPlugin(dataDir)
  if (!plugin) {
    chat.say(
      paint("yellow", `! ${NO_AGENT}`),
      paint(
        "dim",
        `  ${b.program} install convergence/claude installs this package's plugin (its grants are shown first)`,
      ),
    )
    return true
  }
  const { startHost } = await import("../core/host.ts")
  const hostOptions: StartHostOptions = {
    pluginDir: plugin.dir,
    dataDir,
    env,
    workspaces: [cwd],
    requireEnabled: true,
    ...(world && { home: world.home }),
  }
  let current: Host | undefined
  const starting = startHost(hostOptions)
  b.cleanup(async () => (current ?? (await starting.catch(() => undefined)))?.close())
  current = await starting
  options.reload = async () => {
    await current?.close()
    current = undefined
    const enabled = await verbs.enabledAgentPlugin(dataDir)
    if (enabled) current = await startHost({ ...hostOptions, pluginDir: enabled.dir })
    return current
  }
  const host = current
  // Stored accounts register once the plugin has read its storage.
  if (!host.agents.has(agentId))
    await host.events
      .waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
      .catch(() => {
        throw new Error(
          `no account ${agentId} (have: ${[...host.agents.keys()].join(", ")}) — use --account claude, or /account add in the chat`,
        )
      })
  await Promise.all([banner(b, host, found), markdown])
  chat.connect(host, agentId, cwd)
  return chat.start()
}

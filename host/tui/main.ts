/**
 * `npm start`: the plugin in this repository, loaded by host/ under its
 * grants, with a chat in the terminal (host/tui/). With no login (no
 * ANTHROPIC_API_KEY, and `claude auth status` signed out or no CLI) or with
 * --demo it runs offline against testkit's scripted model.
 *
 *   npm start                      chat
 *   npm start -- "prompt"          run one prompt; exit 0 Completed, 1 Failed, 130 Cancelled
 *   npm start -- --help            the options
 *
 * Whatever ends it (a run's end, /quit, Ctrl-C at any moment, a signal, a
 * reader that closed stdout) ends it the same way: the host closes (every
 * `claude` process with it) and the demo's temporary folder is removed.
 */
import { statSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { type AutoContinueMode, parseAutoContinueMode } from "../core/auto-continue.ts"
import { parseArgs, styleText } from "node:util"
import { startHost } from "../core/host.ts"
import { Chat } from "./app.ts"
import { DEMO_ACCOUNT_NAME, type DemoWorld, startDemoWorld } from "./demo-env.ts"
import { detectLogin, type LoginState, loginPath } from "./login.ts"
import { DEMO_PROMPT } from "../../testkit/demo.ts"

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../..")

const isFolder = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

const USAGE = `npm start [-- [options] ["prompt"]]

  With a prompt, run it and exit when the run ends (0 Completed, 1 Failed, 130 Cancelled).
  Without one, open the chat (/help inside lists the commands).

  --demo            the offline demo: a scripted model on 127.0.0.1, no login needed
                    (the default when no login is found)
  --account <id>    use the real model with this account ("claude", or a stored account id)
  --yes             one-shot runs and piped input: allow every approval and take each
                    question's first option (without it approvals are denied)
  --cwd <dir>       the workspace the agent works in (default: the folder npm start was run
                    from; with --demo, the demo's own temporary folder)
  --data <dir>      the host's data folder: accounts, plugin storage, prompt history
                    (default ~/.local/share/convergence-claude; not with --demo)
  --model <value>   --effort <level>   --approval <supervised|accept_edits|auto|full>
  --auto-continue <identified|any>  when a usage limit blocks a run, send one "continue"
                    at its reset (identified: claude.ai accounts only; any: also keys and tokens)
  --keep            keep the demo's temporary folder
  --no-color        plain text
`

const fail = (message: string, hint: string): never => {
  process.stderr.write(`✗ ${message} — ${hint}\n`)
  process.exit(1)
}

const autoContinueMode = (value: string | undefined): AutoContinueMode =>
  parseAutoContinueMode(value) ??
  fail(`--auto-continue=${value}`, "use --auto-continue identified, any or off")

const parse = () => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        demo: { type: "boolean" },
        account: { type: "string" },
        yes: { type: "boolean", short: "y" },
        cwd: { type: "string" },
        data: { type: "string" },
        model: { type: "string" },
        effort: { type: "string" },
        approval: { type: "string" },
        keep: { type: "boolean" },
        "auto-continue": { type: "string" },
        "no-color": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    })
  } catch (error) {
    return fail((error as Error).message, "npm start -- --help lists the options")
  }
}

const whyDemo = (login: LoginState): string =>
  login.kind === "no_cli"
    ? `no Claude Code CLI could be run (${login.reason})`
    : "no ANTHROPIC_API_KEY, and `claude auth status` says you are not logged in"

/** How to get a real login from here: the CLI this repository pins, or one on PATH. */
const loginHint = (login: LoginState | undefined): string =>
  login?.kind === "no_cli"
    ? "Install Claude Code (npm ci here puts the pinned one in node_modules/.bin), then sign in with `npx claude auth login`, or set ANTHROPIC_API_KEY."
    : "Sign in with `npx claude auth login` (the CLI this repository pins), or set ANTHROPIC_API_KEY, then run npm start again."

/** The host's data folder (accounts, storage, prompt history) when no --data is given. */
const defaultDataDir = () =>
  join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share"), "convergence-claude")

/**
 * The one way out: close what is open (the host ends every child; the demo
 * folder goes), then exit. A second call (a second signal) waits for the first.
 */
const cleanups: Array<() => Promise<void>> = []
let exiting: Promise<never> | undefined
const exitWith = (code: number): Promise<never> => {
  exiting ??= (async () => {
    // Each step gets a few seconds: a hung-up terminal must not keep the demo folder.
    for (const cleanup of cleanups.splice(0).reverse())
      await Promise.race([cleanup().catch(() => {}), new Promise((r) => setTimeout(r, 5000).unref())])
    process.exit(code)
  })()
  return exiting
}
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const)
  process.on(signal, () => {
    // Inside the chat Ctrl-C cancels the run; it registers its own handler.
    if (signal === "SIGINT" && process.listenerCount("SIGINT") > 1) return
    void exitWith(signal === "SIGINT" ? 130 : 143)
  })
// A hung-up terminal fails reads and writes with EIO; whatever throws, clean up before leaving.
process.on("uncaughtException", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EIO") process.stderr.write(`✗ ${error.message.split("\n")[0]}\n`)
  void exitWith(1)
})
// A reader that went away (`| head`) ends the chat: nothing more can be shown.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") void exitWith(141)
})

const main = async (): Promise<number> => {
  const { values, positionals } = parse()
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const prompt = positionals.join(" ").trim() || undefined
  const color =
    process.stdout.isTTY === true &&
    !values["no-color"] &&
    !process.env.NO_COLOR &&
    process.env.TERM !== "dumb"
  const paint = (format: Parameters<typeof styleText>[0], text: string) =>
    color ? styleText(format, text, { validateStream: false }) : text

  let demoReason: string | undefined
  let login: LoginState | undefined
  if (values.demo) demoReason = "--demo"
  else if (values.account === undefined) {
    login = await detectLogin(process.env)
    if (login.kind === "no_cli" || login.kind === "logged_out") demoReason = whyDemo(login)
  }
  if (demoReason !== undefined && values.data !== undefined)
    fail(
      "--data is not used by the demo",
      "the demo keeps its accounts and storage in its own temporary folder; drop --data, or use --account",
    )
  const cwdFlag = values.cwd === undefined ? undefined : resolve(values.cwd)
  if (cwdFlag !== undefined && !isFolder(cwdFlag))
    fail(`--cwd ${cwdFlag} is not a folder`, "name a folder that exists")

  let world: DemoWorld | undefined
  const sessionOptions: Record<string, string> = {}
  if (values.model) sessionOptions.model = values.model
  if (values.effort) sessionOptions.effort = values.effort
  if (values.approval) sessionOptions.approval_mode = values.approval

  let host: Awaited<ReturnType<typeof startHost>>
  let agentId: string
  let cwd: string
  let hostOptions: Parameters<typeof startHost>[0]
  if (demoReason !== undefined) {
    world = await startDemoWorld(repoRoot, {
      keep: values.keep === true,
      ...(cwdFlag && { workspace: cwdFlag }),
    })
    const demo = world
    cleanups.push(() => demo.close())
    agentId = world.agentId
    cwd = world.workspace
    hostOptions = {
      pluginDir: repoRoot,
      home: world.home,
      dataDir: world.dataDir,
      env: world.env,
      workspaces: [cwd],
    }
  } else {
    const account = values.account ?? "claude"
    agentId = account === "claude" || account.startsWith("claude:") ? account : `claude:${account}`
    cwd = cwdFlag ?? resolve(process.env.INIT_CWD ?? process.cwd())
    const dataDir = resolve(values.data ?? defaultDataDir())
    const env = { ...process.env, PATH: loginPath(process.env.PATH) }
    hostOptions = { pluginDir: repoRoot, dataDir, env, workspaces: [cwd] }
  }
  host = await startHost(hostOptions)
  let current = host
  cleanups.push(() => current.close())
  const reload = async () => {
    await current.close()
    current = await startHost(hostOptions)
    host = current
    return current
  }

  let code = 1
  try {
    // Stored accounts register once the plugin has read its storage.
    if (!host.agents.has(agentId))
      await host.events
        .waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
        .catch(() => {
          throw new Error(
            `no account ${agentId} (have: ${[...host.agents.keys()].join(", ")}) — use --account claude, or /account add in the chat`,
          )
        })

    const unattended = prompt !== undefined || process.stdin.isTTY !== true
    const chat = new Chat({
      host,
      agentId,
      cwd,
      input: process.stdin,
      output: process.stdout,
      color,
      reload,
      env: world?.env ?? process.env,
      historyFile: join(values.data ? resolve(values.data) : defaultDataDir(), "prompt-history.jsonl"),
      ...(Object.keys(sessionOptions).length > 0 && { sessionOptions }),
      // Nobody at a keyboard (a prompt argument, or lines from a pipe): answered by policy.
      approvals: unattended ? (values.yes || world ? "allow" : "deny") : "ask",
      questions: unattended && (values.yes || world) ? "first" : "ask",
      policyReason: world
        ? "demo"
        : values.yes
          ? "--yes"
          : `${prompt === undefined ? "piped input" : "one-shot run"} without --yes`,
      autoContinue: autoContinueMode(values["auto-continue"]),
    })
    chat.say(
      `${paint("bold", "convergence/claude")} ${paint("dim", `· plugin ${host.manifest.id} in host/ · account ${agentId}`)}`,
      paint("dim", `workspace ${cwd}`),
    )
    if (world)
      chat.say(
        paint(["yellow", "bold"], `DEMO — the model is scripted (testkit/demo.ts on ${world.server.url}).`) +
          paint("yellow", " No network, no login; it is not Claude."),
        paint("dim", `  why: ${demoReason}. ${DEMO_ACCOUNT_NAME} is the account.`),
        paint("dim", `  ${loginHint(login)}`),
        ...(prompt === undefined
          ? [
              `  Type anything (try ${paint("bold", `"${DEMO_PROMPT}"`)}) to run it. /help lists the commands.`,
            ]
          : []),
      )
    if (!(await chat.start())) return 1
    code = prompt === undefined ? await chat.interactive() : await chat.once(prompt)
  } catch (error) {
    process.stderr.write(`✗ ${error instanceof Error ? error.message.split("\n")[0] : String(error)}\n`)
    code = 1
  }
  return code
}

main().then(
  (code) => exitWith(code),
  (error: unknown) => {
    process.stderr.write(
      `✗ ${error instanceof Error ? error.message.split("\n")[0]! : String(error)} — run \`npm run setup\`, or report it with the command you ran\n`,
    )
    return exitWith(1)
  },
)

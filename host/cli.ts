/**
 * `npm start`: the plugin in this repository, loaded by host/ under its
 * grants, with a chat in the terminal (host/tui/). With no login (no
 * ANTHROPIC_API_KEY, and `claude auth status` signed out or no CLI) or with
 * --demo it runs offline against testkit's scripted model.
 *
 *   npm start                      chat
 *   npm start -- "prompt"          run one prompt; exit 0 Completed, 1 Failed, 130 Cancelled
 *   npm start -- --help            the options
 */
import type { AutoContinueMode } from "./auto-continue.ts"
import { homedir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs, styleText } from "node:util"
import { startHost } from "./host.ts"
import { Chat } from "./tui/app.ts"
import { DEMO_ACCOUNT_NAME, type DemoWorld, startDemoWorld } from "./tui/demo-env.ts"
import { detectLogin, type LoginState, loginPath } from "./tui/login.ts"
import { DEMO_PROMPT } from "../testkit/demo.ts"

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "..")

const USAGE = `npm start [-- [options] ["prompt"]]

  With a prompt, run it and exit when the run ends (0 Completed, 1 Failed, 130 Cancelled).
  Without one, open the chat (/help inside lists the commands).

  --demo            the offline demo: a scripted model on 127.0.0.1, no login needed
                    (the default when no login is found)
  --account <id>    use the real model with this account ("claude", or a stored account id)
  --yes             one-shot runs: allow every approval
  --cwd <dir>       the workspace (default: the folder npm start was run from)
  --data <dir>      the host's data folder (default ~/.local/share/convergence-claude)
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
  value === undefined || value === "off"
    ? "off"
    : value === "any"
      ? "any"
      : value === "on" || value === "identified"
        ? "identified"
        : fail(`--auto-continue=${value}`, "use --auto-continue identified, any or off")

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

const main = async (): Promise<number> => {
  const { values, positionals } = parse()
  if (values.help) {
    process.stdout.write(USAGE)
    return 0
  }
  const prompt = positionals.join(" ").trim() || undefined
  const color = process.stdout.isTTY === true && !values["no-color"] && !process.env.NO_COLOR
  const paint = (format: Parameters<typeof styleText>[0], text: string) =>
    color ? styleText(format, text, { validateStream: false }) : text

  let demoReason: string | undefined
  if (values.demo) demoReason = "--demo"
  else if (values.account === undefined) {
    const login = await detectLogin(process.env)
    if (login.kind === "no_cli" || login.kind === "logged_out") demoReason = whyDemo(login)
  }

  let world: DemoWorld | undefined
  const sessionOptions: Record<string, string> = {}
  if (values.model) sessionOptions.model = values.model
  if (values.effort) sessionOptions.effort = values.effort
  if (values.approval) sessionOptions.approval_mode = values.approval

  let host: Awaited<ReturnType<typeof startHost>>
  let agentId: string
  let cwd: string
  if (demoReason !== undefined) {
    world = await startDemoWorld(repoRoot, values.keep === true)
    agentId = world.agentId
    cwd = world.workspace
    host = await startHost({ pluginDir: repoRoot, home: world.home, dataDir: world.dataDir, env: world.env })
  } else {
    const account = values.account ?? "claude"
    agentId = account === "claude" || account.startsWith("claude:") ? account : `claude:${account}`
    cwd = resolve(values.cwd ?? process.env.INIT_CWD ?? process.cwd())
    const dataDir = resolve(
      values.data ??
        join(process.env.XDG_DATA_HOME ?? join(homedir(), ".local", "share"), "convergence-claude"),
    )
    const env = { ...process.env, PATH: loginPath(process.env.PATH) }
    host = await startHost({ pluginDir: repoRoot, dataDir, env, workspaces: [cwd] })
  }

  let code = 1
  try {
    // Stored accounts register once the plugin has read its storage.
    if (!host.agents.has(agentId))
      await host.events
        .waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
        .catch(() =>
          fail(
            `no account ${agentId} (have: ${[...host.agents.keys()].join(", ")})`,
            "use --account claude, or add the account to the plugin's `instances` storage",
          ),
        )

    const chat = new Chat({
      host,
      agentId,
      cwd,
      input: process.stdin,
      output: process.stdout,
      color,
      ...(Object.keys(sessionOptions).length > 0 && { sessionOptions }),
      approvals: prompt === undefined ? "ask" : values.yes || world ? "allow" : "deny",
      questions: prompt !== undefined && (values.yes || world) ? "first" : "ask",
      policyReason: world ? "demo" : values.yes ? "--yes" : "one-shot run without --yes",
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
        paint("dim", "  Log in with `claude auth login` (or set ANTHROPIC_API_KEY) to use the real model."),
        ...(prompt === undefined
          ? [
              `  Type anything (try ${paint("bold", `"${DEMO_PROMPT}"`)}) to run it. /help lists the commands.`,
            ]
          : []),
      )
    if (!(await chat.start()) && prompt !== undefined) return 1
    code = prompt === undefined ? await chat.interactive() : await chat.once(prompt)
  } finally {
    await host.close()
    await world?.close()
  }
  return code
}

main().then(
  (code) => process.exit(code),
  (error: unknown) =>
    fail(
      error instanceof Error ? error.message.split("\n")[0]! : String(error),
      "run `npm run setup`, or report it with the command you ran",
    ),
)

/**
 * The terminal front end: `cvg` (dist/tui/main.mjs, built by
 * scripts/build-tui.mjs) and `npm start` in a checkout. The input line is up
 * at once; the host, its enabled plugin and the session start behind it
 * (boot.ts), and a prompt typed meanwhile runs when they are ready. With no
 * login (no ANTHROPIC_API_KEY, and `claude auth status` signed out or no
 * CLI) or with --demo it runs offline against testkit's scripted model.
 *
 *   cvg                        chat
 *   cvg "prompt"               run one prompt; exit 0 Completed, 1 Failed, 130 Cancelled
 *   cvg install <plugin>       install a plugin (its grants shown; enabled separately)
 *   cvg plugins [enable|disable <id>]
 *   cvg --help                 the options
 *
 * Whatever ends it (a run's end, /quit, Ctrl-C at any moment, a signal, a
 * reader that closed stdout) ends it the same way: the host closes (every
 * `claude` process with it) and the demo's temporary folder is removed.
 */
import { statSync } from "node:fs"
import { join, resolve } from "node:path"
import { styleText } from "node:util"
import { parseAutoContinueMode } from "../core/auto-continue.ts"
import { Chat, type ChatOptions } from "./app.ts"
import { type Parsed, parseCommandLine, programName, usage } from "./args.ts"
import { boot, type BootContext, defaultDataDir } from "./boot.ts"

const isFolder = (path: string): boolean => {
  try {
    return statSync(path).isDirectory()
  } catch {
    return false
  }
}

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

const fail = (message: string): number => {
  process.stderr.write(`✗ ${message}\n`)
  return 1
}

type Paint = (format: Parameters<typeof styleText>[0], text: string) => string

/** `install` and `plugins`: the plugin verbs, on the data folder. */
const pluginVerb = async (
  values: Parsed["values"],
  words: ReadonlyArray<string>,
  paint: Paint,
): Promise<number> => {
  const verbs = await import("./plugin-verbs.ts")
  const program = programName()
  const dataDir = resolve(values.data ?? defaultDataDir())
  const [verb, what, id] = words
  if (verb === "install") {
    if (!what) return fail(`name the plugin to install — ${program} install convergence/claude`)
    const installed = await verbs.install(dataDir, what, paint, program).catch((error: Error) => error)
    if (installed instanceof Error) return fail(`${installed.message.split("\n")[0]} — ${program} --help`)
    process.stdout.write(`${installed.lines.join("\n")}\n`)
    return 0
  }
  if (what === "enable" || what === "disable") {
    process.stdout.write(`${verbs.toggle(dataDir, id, what === "enable", paint)}\n`)
    return 0
  }
  if (what !== undefined && what !== "details") return fail(`plugins ${what}? — ${program} --help`)
  process.stdout.write(`${(await verbs.listPlugins(dataDir, paint, what === "details")).join("\n")}\n`)
  return 0
}

const main = async (): Promise<number> => {
  const program = programName()
  const parsedLine = parseCommandLine(process.argv.slice(2), program)
  if (!parsedLine.ok) return fail(parsedLine.message)
  const { values, positionals } = parsedLine.parsed
  if (values.help) {
    process.stdout.write(usage(program))
    return 0
  }
  const color =
    process.stdout.isTTY === true &&
    !values["no-color"] &&
    !process.env.NO_COLOR &&
    process.env.TERM !== "dumb"
  const paint: Paint = (format, text) => (color ? styleText(format, text, { validateStream: false }) : text)
  if (positionals[0] === "install" || positionals[0] === "plugins")
    return pluginVerb(values, positionals, paint)

  const prompt = positionals.join(" ").trim() || undefined
  const autoContinue = parseAutoContinueMode(values["auto-continue"])
  if (autoContinue === undefined)
    return fail(`--auto-continue=${values["auto-continue"]} — use --auto-continue identified, any or off`)
  const cwdFlag = values.cwd === undefined ? undefined : resolve(values.cwd)
  if (cwdFlag !== undefined && !isFolder(cwdFlag))
    return fail(`--cwd ${cwdFlag} is not a folder — name a folder that exists`)

  const sessionOptions: Record<string, string> = {}
  if (values.model) sessionOptions.model = values.model
  if (values.effort) sessionOptions.effort = values.effort
  if (values.approval) sessionOptions.approval_mode = values.approval
  // Nobody at a keyboard (a prompt argument, or lines from a pipe): answered by policy.
  const unattended = prompt !== undefined || process.stdin.isTTY !== true
  const byPolicy = values.yes === true || values.demo === true
  const options: BootContext["options"] = {
    cwd: cwdFlag ?? resolve(process.env.INIT_CWD ?? process.cwd()),
    input: process.stdin,
    output: process.stdout,
    color,
    program,
    historyFile: join(values.data ? resolve(values.data) : defaultDataDir(), "prompt-history.jsonl"),
    ...(Object.keys(sessionOptions).length > 0 && { sessionOptions }),
    ...(values.resume && { resume: values.resume }),
    approvals: unattended ? (byPolicy ? "allow" : "deny") : "ask",
    questions: unattended && byPolicy ? "first" : "ask",
    policyReason: values.demo
      ? "demo"
      : values.yes
        ? "--yes"
        : `${prompt === undefined ? "piped input" : "one-shot run"} without --yes`,
    autoContinue,
  }
  const chat = new Chat(options as ChatOptions)
  const found: BootContext["found"] = {}
  const ready = boot({
    values,
    oneShot: prompt !== undefined,
    program,
    chat,
    options,
    paint,
    cleanup: (fn) => cleanups.push(fn),
    found,
  })
  const code = prompt === undefined ? await chat.interactive(ready) : await chat.once(prompt, ready)
  // How to come back to the chat just left (the demo's sessions leave with its folder).
  const { sessionId, userItems } = chat.state
  if (prompt === undefined && !found.world && sessionId && userItems.length > 0)
    process.stdout.write(paint("dim", `to continue this chat: ${program} --resume ${sessionId}\n`))
  return code
}

main().then(
  (code) => exitWith(code),
  (error: unknown) => {
    process.stderr.write(
      `✗ ${error instanceof Error ? error.message.split("\n")[0]! : String(error)} — report it with the command you ran\n`,
    )
    return exitWith(1)
  },
)

/**
 * The terminal front end's command line: its options, its verbs (`install`,
 * `plugins`), the usage text, and errors that point to `--help` (never to
 * Node's advice about `--`, which means nothing under `npm start --`). The
 * usage names the command the way the person ran it: `cvg`, or
 * `npm start --` from a checkout.
 */
import { parseArgs } from "node:util"

/** How the person started the front end, for usage and hints. */
export const programName = (): string => (process.env.CVG_LAUNCHER === "npm start" ? "npm start --" : "cvg")

export const usage = (program: string): string => `${program} [options] ["prompt"]
${program} install <plugin>                  install a plugin: convergence/claude (this package's), a folder
                                         or an npm pack tarball; its grants are shown, nothing runs yet
${program} plugins [details]                 the installed plugins and what they may do
${program} plugins enable|disable <id>       turn one on or off

  With a prompt, run it and exit when the run ends (0 Completed, 1 Failed, 130 Cancelled).
  Without one, open the chat (/help inside lists the commands).

  --demo            the offline demo: a scripted model on 127.0.0.1, no login needed
                    (the default when no login is found)
  --account <id>    use the real model with this account ("claude", or a stored account id)
  --resume <id>     continue a stored chat of this workspace (its id, as the end of a chat prints it)
  --yes             one-shot runs and piped input: allow every approval and take each
                    question's first option (without it approvals are denied)
  --cwd <dir>       the workspace the agent works in (default: the folder you ran it from;
                    with --demo, the demo's own temporary folder)
  --data <dir>      the host's data folder: installed plugins, accounts, plugin storage, prompt
                    history (default ~/.local/share/convergence-claude; not with --demo)
  --model <value>   --effort <level>   --approval <supervised|accept_edits|auto|full>
  --auto-continue <identified|any>  when a usage limit blocks a run, send one "continue"
                    at its reset (identified: claude.ai accounts only; any: also keys and tokens)
  --keep            keep the demo's temporary folder
  --no-color        plain text
`

export const OPTIONS = {
  demo: { type: "boolean" },
  account: { type: "string" },
  resume: { type: "string" },
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
} as const

export type Parsed = ReturnType<typeof parseArgs<{ allowPositionals: true; options: typeof OPTIONS }>>

/** The arguments, or the one line that says what is wrong with them. */
export const parseCommandLine = (
  args: ReadonlyArray<string>,
  program: string,
): { readonly ok: true; readonly parsed: Parsed } | { readonly ok: false; readonly message: string } => {
  try {
    return { ok: true, parsed: parseArgs({ args: [...args], allowPositionals: true, options: OPTIONS }) }
  } catch (error) {
    const code = (error as { code?: string }).code
    const text = (error as Error).message
    const unknown = /^Unknown option '([^']+)'/.exec(text)?.[1]
    const what =
      code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown
        ? `unknown option ${unknown}`
        : (text.split(/\.\s/)[0] ?? text).replace(/\.$/, "")
    return { ok: false, message: `${what} — ${program} --help lists the options` }
  }
}

/**
 * /plugins (the installed plugins and what they may do, grouped; enable and
 * disable, the plugin then loaded or stopped) and /trace (`npm run trace --
 * …` inside the chat, over the workspace's repository: it reads only).
 */
import type { ChatContext } from "../context.ts"
import { makeMarkdown } from "../markdown.ts"
import { pluginLines } from "../plugins.ts"
import { startChat } from "../sessions.ts"
import { type Command, note, warn } from "./command.ts"

const PLUGINS_USAGE = "/plugins [details] · /plugins enable <id> · /plugins disable <id>"
const TRACE_USAGE = "usage: /trace report --base <rev> [--head <rev>] [--ref <notes ref>] [--repo <dir>]"

/** Turn a plugin on or off, then load what is enabled now (a new session, or none). */
const toggle = async (ctx: ChatContext, id: string | undefined, enabled: boolean): Promise<void> => {
  const dataDir = ctx.options.dataDir
  if (!dataDir) return warn(ctx, "this chat keeps no plugins of its own (no data folder)")
  if (ctx.runs.running) return warn(ctx, "cancel the run first (Ctrl-C)")
  const verbs = await import("../plugin-verbs.ts")
  ctx.say(verbs.toggle(dataDir, id, enabled, ctx.paint))
  const reload = ctx.options.reload
  if (!reload || !id) return
  const before = ctx.state.host?.manifest.id
  if (!enabled && before !== id) return
  await ctx.attempt(enabled ? "Loading the plugin…" : "Stopping the plugin…", "restart to load it", () =>
    ctx.reloadHost(reload),
  )
  ctx.state.sessionId = undefined
  ctx.state.info = undefined
  ctx.updateStatus()
  if (ctx.state.host) await startChat(ctx)
  else note(ctx, "no plugin provides an agent now: prompts wait until one is enabled")
}

const plugins = async (ctx: ChatContext, _arg: string | undefined, words: ReadonlyArray<string>) => {
  const [verb, id] = words
  if (verb === "enable" || verb === "disable") return toggle(ctx, id, verb === "enable")
  if (verb !== undefined && verb !== "details") return warn(ctx, PLUGINS_USAGE)
  const details = verb === "details"
  const dataDir = ctx.options.dataDir
  if (dataDir) {
    const { listPlugins } = await import("../plugin-verbs.ts")
    ctx.say(...(await listPlugins(dataDir, ctx.paint, details)))
  } else if (ctx.state.host) ctx.say(...pluginLines(ctx.state.host.manifest, ctx.paint, { details }))
  note(ctx, details ? `  ${PLUGINS_USAGE}` : `  /plugins details lists every pattern · ${PLUGINS_USAGE}`)
}

const trace = async (ctx: ChatContext, arg: string | undefined): Promise<void> => {
  const argv = (arg ?? "").split(/\s+/).filter(Boolean)
  if (argv.length === 0) return note(ctx, TRACE_USAGE)
  const { traceCommand } = await import("../../trace/trace-report.ts")
  const outcome = await traceCommand(argv, ctx.state.cwd)
  if (outcome.code !== 0)
    // The command's own usage names the npm script; here it is typed as /trace.
    return warn(ctx, outcome.stderr.trimEnd().replace(/npm run trace -- /g, "/trace "))
  const output = ctx.options.output
  ctx.say(makeMarkdown({ color: ctx.options.color, width: () => output.columns ?? 100 })(outcome.stdout))
}

export const pluginCommands: ReadonlyArray<Command> = [
  {
    name: "plugins",
    usage: [["/plugins", "the installed plugins and what they may do; /plugins enable|disable <id>"]],
    needsAgent: false,
    complete: () => ["details", "enable", "disable"],
    run: plugins,
  },
  {
    name: "trace",
    usage: [
      [
        "/trace report --base <rev> [--head <rev>]",
        "Agent Trace: which lines of those commits the agent wrote",
      ],
    ],
    needsAgent: false,
    run: trace,
  },
]

/**
 * /plugins (the loaded plugin and its grants with their reasons) and /trace
 * (`npm run trace -- …` inside the chat, over the workspace's repository:
 * it reads only).
 */
import { traceCommand } from "../../trace/trace-report.ts"
import type { ChatContext } from "../context.ts"
import { makeMarkdown } from "../markdown.ts"
import { grantLines } from "../plugins.ts"
import type { Command } from "./command.ts"

const plugins = (ctx: ChatContext): void => {
  const { paint } = ctx
  const m = ctx.state.host.manifest
  ctx.say(
    `  ${paint("bold", m.id)} ${m.version}${m.name ? ` · ${m.name}` : ""} ${paint("dim", `· entry ${m.main} · plugin API ${m.pluginApi}`)}`,
    ...(m.description ? [`  ${paint("dim", m.description)}`] : []),
    `  ${paint("bold", "grants")}`,
    ...grantLines(m).map(
      (g) =>
        `    ${paint("cyan", g.grant)}${g.what ? ` ${g.what}` : ""}\n      ${paint("dim", `why: ${g.reason}`)}`,
    ),
  )
}

const trace = async (ctx: ChatContext, arg: string | undefined): Promise<void> => {
  const argv = (arg ?? "").split(/\s+/).filter(Boolean)
  const outcome = await traceCommand(argv, ctx.state.cwd)
  const text = outcome.code === 0 ? outcome.stdout : outcome.stderr
  const output = ctx.options.output
  const markdown = makeMarkdown({ color: ctx.options.color, width: () => output.columns ?? 100 })
  ctx.say(outcome.code === 0 ? markdown(text) : ctx.paint("yellow", text.trimEnd()))
}

export const pluginCommands: ReadonlyArray<Command> = [
  {
    name: "plugins",
    usage: [["/plugins", "the loaded plugin, its version and every grant with its reason"]],
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
    run: trace,
  },
]

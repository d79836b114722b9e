/**
 * The front end's commands, one table in /help's order: /help prints their
 * usage lines, Tab completes their names and arguments, and a typed
 * `/name` runs the one it names. Any other `/word` goes to the agent.
 */
import { commonPrefix, complete } from "../completion.ts"
import { type ChatContext, NO_AGENT } from "../context.ts"
import { ALWAYS_HOLDS } from "../pending.ts"
import { accountCommands } from "./accounts.ts"
import type { Command } from "./command.ts"
import { optionCommands } from "./options.ts"
import { planCommand } from "./plan.ts"
import { pluginCommands } from "./plugins.ts"
import { endCommands, runCommands, taskCommands } from "./run.ts"
import { folderCommand, sessionCommands } from "./sessions.ts"

export type { Command } from "./command.ts"

const help: Command = {
  name: "help",
  aliases: ["?"],
  usage: [],
  needsAgent: false,
  run: (ctx) => ctx.say(...helpLines(ctx)),
}

export const COMMANDS: ReadonlyArray<Command> = [
  ...sessionCommands,
  ...accountCommands,
  ...optionCommands,
  planCommand,
  ...runCommands,
  folderCommand,
  ...taskCommands,
  ...pluginCommands,
  ...endCommands,
  help,
]

const byName = new Map(COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])].map((n) => [n, c] as const)))

/** The command `name` names (without its slash), or undefined: the line is the agent's. */
export const findCommand = (name: string): Command | undefined => byName.get(name)

/** The names Tab offers (one-letter aliases left out). */
export const commandNames = (): string[] =>
  COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? []).filter((a) => a.length > 1)])

/** /help: each command's form and what it does, side by side, or (a narrow screen) one under the other. */
export const helpLines = (ctx: ChatContext): string[] => [
  ...COMMANDS.flatMap((c) => c.usage).flatMap(([form, what]) =>
    (ctx.options.output.columns ?? 100) < 72
      ? [`  ${ctx.paint("bold", form)}`, `      ${what}`]
      : [`  ${ctx.paint("bold", form.padEnd(18))} ${what}`],
  ),
  ctx.paint(
    "dim",
    `  At an approval: a allow · d [reason] deny · A always (${ALWAYS_HOLDS}). At a question: a number or text.`,
  ),
  ctx.paint(
    "dim",
    "  Enter sends; a line ending in \\ continues; a paste keeps its newlines; Tab completes.",
  ),
]

/** Edits between two words (insert, delete, replace, swap two neighbours). */
const distance = (a: string, b: string): number => {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
    }
  return d[a.length]![b.length]!
}

/** The front-end command `name` is a near miss of (one edit for short names, two for longer ones). */
const nearestCommand = (name: string): string | undefined => {
  const allowed = name.length <= 4 ? 1 : 2
  let best: { name: string; d: number } | undefined
  for (const candidate of commandNames()) {
    const d = distance(name.toLowerCase(), candidate)
    if (d > 0 && d <= allowed && (!best || d < best.d)) best = { name: candidate, d }
  }
  return best?.name
}

/** A line starting with `/`: the command it names, or (a skill, a CLI command, a typo) the agent's. */
export const runSlashLine = (ctx: ChatContext, line: string): void | Promise<void> => {
  const [name = "", ...words] = line.slice(1).split(/\s+/)
  const command = findCommand(name)
  if (command && command.needsAgent !== false && !ctx.state.host)
    return ctx.say(ctx.paint("yellow", NO_AGENT))
  if (command) return command.run(ctx, words.join(" ").trim() || undefined, words)
  const skills = ctx.state.skills ?? ctx.state.info?.skills ?? ctx.state.knownInfo?.skills ?? []
  const known = skills.find((s) => s.name === name)
  const near = known ? undefined : nearestCommand(name)
  // A near miss of a front-end command is a typo, not a prompt worth a turn.
  if (near)
    return ctx.say(
      ctx.paint("yellow", `/${name} is not a command: did you mean /${near}? (/help lists them)`),
    )
  const note = known
    ? `/${name} goes to the agent (${known.source === "cli" ? "a Claude Code command" : `a ${known.source} skill`})`
    : `/${name} is not a front-end command (/help): sent to the agent as typed`
  return ctx.send(line, note)
}

/** Readline's completer: the candidates and the word they complete; an ambiguous list is printed here. */
export const completeLine = (ctx: ChatContext, line: string): [string[], string] => {
  const { state } = ctx
  const skills = (state.skills ?? state.info?.skills ?? [])
    .filter((s) => !s.hidden_from_picker)
    .map((s) => s.name)
  const space = line.indexOf(" ")
  const name = line.startsWith("/") ? line.slice(1, space >= 0 ? space : undefined) : ""
  const values = findCommand(name)?.complete?.(ctx)
  const [hits, word] = complete(line, {
    commands: commandNames(),
    skills,
    args: values && values !== "path" ? { [name]: values } : {},
    pathArgs: values === "path" ? [name] : [],
    cwd: state.cwd,
  })
  if (hits.length <= 1) return [hits, word]
  const common = commonPrefix(hits)
  if (common.length > word.length) return [[common], word]
  // The list is ours to print, above the input line (readline's would scroll it away).
  ctx.say(ctx.paint("dim", hits.join("  ")))
  return [[], word]
}

/**
 * The front end's commands, one table in /help's order: /help prints their
 * usage lines, Tab completes their names and arguments, and a typed
 * `/name` runs the one it names. Any other `/word` goes to the agent.
 */
import { commonPrefix, complete } from "../completion.ts"
import type { ChatContext } from "../context.ts"
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

export const helpLines = (ctx: ChatContext): string[] => [
  ...COMMANDS.flatMap((c) => c.usage).map(
    ([form, what]) => `  ${ctx.paint("bold", form.padEnd(18))} ${what}`,
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

/** A line starting with `/`: the command it names, or (a skill, a CLI command, a typo) the agent's. */
export const runSlashLine = (ctx: ChatContext, line: string): void | Promise<void> => {
  const [name = "", ...words] = line.slice(1).split(/\s+/)
  const command = findCommand(name)
  if (command) return command.run(ctx, words.join(" ").trim() || undefined, words)
  const skills = ctx.state.skills ?? ctx.state.info?.skills ?? []
  const known = skills.find((s) => s.name === name)
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

/**
 * Tab completion for the input line: front-end commands, the agent's skills
 * and slash commands, and the arguments that have a fixed set of values
 * (models, effort levels, approval modes, accounts, session numbers, files
 * for /image and /cd). Pure: the chat passes in what it knows.
 */
import { readdirSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"

export interface CompletionSources {
  readonly commands: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  /** Values per command name (without the slash), e.g. model → the model values. */
  readonly args: Readonly<Record<string, ReadonlyArray<string>>>
  /** Commands whose argument is a path, and the folder it is relative to. */
  readonly pathArgs: ReadonlyArray<string>
  readonly cwd: string
}

/** Readline's answer: the candidates for the word being typed, and that word. */
export const complete = (line: string, sources: CompletionSources): [string[], string] => {
  if (!line.startsWith("/")) return [[], line]
  const space = line.indexOf(" ")
  if (space < 0) {
    const names = [...new Set([...sources.commands, ...sources.skills])].map((n) => `/${n}`)
    return [names.filter((n) => n.startsWith(line)).sort(), line]
  }
  const command = line.slice(1, space)
  const word = line.slice(line.lastIndexOf(" ") + 1)
  if (sources.pathArgs.includes(command)) return [paths(word, sources.cwd), word]
  const values = sources.args[command] ?? []
  return [values.filter((v) => v.startsWith(word)), word]
}

const paths = (word: string, cwd: string): string[] => {
  const dir = word.endsWith("/") ? word : dirname(word)
  const base = word.endsWith("/") ? "" : basename(word)
  try {
    return readdirSync(resolve(cwd, dir), { withFileTypes: true })
      .filter((e) => e.name.startsWith(base) && (base.startsWith(".") || !e.name.startsWith(".")))
      .map((e) => {
        const path = dir === "." && !word.startsWith("./") ? e.name : join(dir, e.name)
        return e.isDirectory() ? `${path}/` : path
      })
      .sort()
  } catch {
    return []
  }
}

/** The longest start every candidate shares. */
export const commonPrefix = (words: ReadonlyArray<string>): string => {
  if (words.length === 0) return ""
  let prefix = words[0]!
  for (const w of words) while (!w.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix
}

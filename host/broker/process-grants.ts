/**
 * What a granted command may be asked to do: its arguments, its working
 * directory and the environment variables the plugin sets for it.
 *
 * A process grant names commands; a command's name alone lets a plugin run
 * anything the command can run (`npm exec -c '<anything>'`). So a grant may
 * also list argument patterns per command (words split on spaces; `*` is any
 * one argument, or any text inside a word; a last `**` is any further
 * arguments), and the call must match one. The working directory must lie in
 * a granted fs.read scope (or be the host's default, HOME). The plugin may set
 * or remove only the variables its grant names (`CLAUDE_*` style patterns),
 * and never one that decides which program runs or what code it loads, grant
 * or not.
 */

/** Set by no plugin, granted or not: they choose the program, its loader or its start-up code. */
const NEVER_SET = [
  "PATH",
  "HOME",
  "SHELL",
  "ENV",
  "BASH_ENV",
  "BASH_FUNC_*",
  "SHELLOPTS",
  "BASHOPTS",
  "PS4",
  "IFS",
  "PROMPT_COMMAND",
  "NODE_*",
  "LD_*",
  "DYLD_*",
  "PYTHON*",
  "PERL5*",
  "PERLLIB",
  "RUBYOPT",
  "RUBYLIB",
  "GIT_*",
  "NPM_CONFIG_*",
  "npm_config_*",
]

const escapeRegExp = (text: string) => text.replace(/[.+?^${}()|[\]\\]/g, "\\$&")

/** `CLAUDE_*` → a test for names; a pattern without `*` is one exact name. */
const namePattern = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split("*").map(escapeRegExp).join(".*")}$`)

const NEVER = NEVER_SET.map(namePattern)

export interface EnvRule {
  /** Why `name` may not be set, or null when it may. */
  readonly refusal: (name: string) => string | null
}

export const envRule = (granted: ReadonlyArray<string>): EnvRule => {
  const allowed = granted.map(namePattern)
  return {
    refusal: (name) => {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return "not a variable name"
      if (NEVER.some((p) => p.test(name))) return "it decides which program runs or what code it loads"
      if (!allowed.some((p) => p.test(name))) return "not in the manifest's process env grant"
      return null
    },
  }
}

/** One argument pattern: its words, and whether a last `**` takes any further arguments. */
interface ArgsPattern {
  readonly words: ReadonlyArray<RegExp>
  readonly rest: boolean
  readonly text: string
}

const wordPattern = (word: string): RegExp =>
  word === "*" ? /^[\s\S]*$/ : new RegExp(`^${word.split("*").map(escapeRegExp).join("[\\s\\S]*")}$`)

const parseArgsPattern = (text: string): ArgsPattern => {
  const words = text.trim().split(/\s+/).filter(Boolean)
  const rest = words.at(-1) === "**"
  return { words: (rest ? words.slice(0, -1) : words).map(wordPattern), rest, text }
}

export interface ArgsRule {
  /** Why `args` may not be passed to `command`, or null when they may. */
  readonly refusal: (command: string, args: ReadonlyArray<string>) => string | null
}

/** Commands without patterns take any arguments (the CLI itself: its flags are the plugin's job). */
export const argsRule = (patterns: Readonly<Record<string, ReadonlyArray<string>>>): ArgsRule => {
  const byCommand = new Map(Object.entries(patterns).map(([c, list]) => [c, list.map(parseArgsPattern)]))
  return {
    refusal: (command, args) => {
      const list = byCommand.get(command)
      if (list === undefined) return null
      const fits = (p: ArgsPattern) =>
        (p.rest ? args.length >= p.words.length : args.length === p.words.length) &&
        p.words.every((w, i) => w.test(args[i] ?? ""))
      return list.some(fits) ? null : `the arguments match none of the manifest's patterns for ${command}`
    },
  }
}

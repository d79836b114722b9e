/**
 * A front-end command: its name (and aliases), the /help lines that show how
 * to type it, what Tab offers for its argument, and what it does. The one
 * table of them (commands/index.ts) is what /help, completion and dispatch
 * all read.
 */
import type { ChatContext } from "../context.ts"

export interface Command {
  readonly name: string
  readonly aliases?: ReadonlyArray<string>
  /** /help's lines: the form typed, and what it does (none: another command's line covers it). */
  readonly usage: ReadonlyArray<readonly [form: string, what: string]>
  /** false: it works with no agent (before the host is up, or with no plugin enabled). */
  readonly needsAgent?: false
  /** What Tab offers for the argument: values, or "path" for a file or folder of the workspace. */
  readonly complete?: (ctx: ChatContext) => ReadonlyArray<string> | "path"
  /** `arg`: the words after the name joined (undefined when none); `words`: them one by one. */
  readonly run: (
    ctx: ChatContext,
    arg: string | undefined,
    words: ReadonlyArray<string>,
  ) => void | Promise<void>
}

/** A yellow line: the command could not do what was asked, and why. */
export const warn = (ctx: ChatContext, text: string): void => ctx.say(ctx.paint("yellow", text))

/** A dim line: a fact or a hint. */
export const note = (ctx: ChatContext, text: string): void => ctx.say(ctx.paint("dim", text))

/** A green line: done. */
export const done = (ctx: ChatContext, text: string): void => ctx.say(ctx.paint("green", text))

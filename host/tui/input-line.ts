/**
 * The input line: readline over the chat's input, with the prompt history
 * kept across starts (typed single-line messages only, never an answer to
 * an approval), Tab completion (commands/index.ts) and Ctrl-C. Typed lines
 * become whole messages (input.ts: pastes and `\` continuations) before the
 * chat sees them.
 */
import { createInterface, type Interface } from "node:readline"
import { completeLine } from "./commands/index.ts"
import type { ChatContext } from "./context.ts"
import { LineAssembler } from "./input.ts"
import { appendHistory, loadHistory } from "./prompt-history.ts"

export interface InputLine {
  readonly rl: Interface
  /** True while a `\` continuation waits for its next line. */
  readonly continuing: () => boolean
}

export const openInputLine = (
  ctx: ChatContext,
  handlers: { readonly message: (text: string) => void; readonly interrupt: () => void },
): InputLine => {
  const terminal = ctx.screen.interactive
  const historyFile = ctx.options.historyFile
  const history = historyFile && terminal ? loadHistory(historyFile) : []
  const rl = createInterface({
    input: ctx.options.input,
    output: ctx.options.output,
    terminal,
    historySize: 500,
    history: [...history].reverse(),
    removeHistoryDuplicates: true,
    ...(terminal && { completer: (line: string) => completeLine(ctx, line) }),
  })
  ctx.screen.attach(rl)
  const assembler = new LineAssembler(terminal, (message) => {
    if (historyFile && terminal && !message.includes("\n") && !ctx.pending.waiting)
      appendHistory(historyFile, message)
    handlers.message(message)
  })
  rl.on("line", (line) => {
    ctx.screen.lineEntered(line)
    assembler.push(line)
    // A continuation or paste shows its own prompt until the message is whole.
    setImmediate(() => ctx.updatePrompt())
  })
  rl.on("SIGINT", handlers.interrupt)
  return { rl, continuing: () => assembler.continuing }
}

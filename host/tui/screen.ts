/**
 * The terminal the chat writes to. On an interactive terminal the bottom of
 * the screen belongs to two lines that stay put: the status line (model,
 * effort, approval mode, account, context, cwd; a spinner while waiting)
 * and the input line, which readline owns and keeps editable while a run
 * streams. Output is written above them in whole lines: the two lines are
 * erased, the output written, and the two drawn again with whatever the
 * person had typed, so neither ever lands in the scrollback.
 *
 * Rules it keeps: every write is whole lines; the cursor rests in the input
 * line between writes (so keystrokes echo there, never inside output); the
 * status line is cut to the width so it never wraps. A pipe or a dumb
 * terminal gets plain lines and no status or input line.
 */
import { clearScreenDown, cursorTo, type Interface, moveCursor } from "node:readline"
import stringWidth from "string-width"
import { stripAnsi, wrapStyled } from "./text.ts"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

export interface ScreenOptions {
  readonly output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }
  /** A real terminal (TTY, not TERM=dumb): status and input lines drawn. */
  readonly interactive: boolean
  /** Paint the status line dim. */
  readonly color: boolean
}

/** Readline's own count of input rows above its cursor; reset when we clear its area ourselves. */
type ReadlineRows = Interface & { prevRows?: number }

/** Cut a plain line to `width` columns. */
export const fitWidth = (line: string, width: number): string => {
  if (width <= 1) return ""
  if (stringWidth(line) <= width) return line
  let out = ""
  for (const ch of line) {
    if (stringWidth(`${out}${ch}…`) > width) break
    out += ch
  }
  return `${out}…`
}

export class Screen {
  private rl: ReadlineRows | undefined
  private promptText: string | undefined
  private status: ((width: number) => string) | undefined
  private spinnerLabel: string | undefined
  private spinnerTimer: NodeJS.Timeout | undefined
  private frame = 0
  /** What is drawn below the output right now. */
  private drawn: { status: boolean; statusWidth: number; prompt: boolean } | undefined
  /** Rows between the status line and the cursor after Enter (readline already moved down). */
  private enteredRows: number | undefined
  private closed = false

  constructor(private readonly options: ScreenOptions) {
    if (options.interactive) options.output.on?.("resize", () => this.redraw())
  }

  get interactive(): boolean {
    return this.options.interactive
  }

  private get columns(): number {
    return this.options.output.columns ?? 80
  }

  /** The readline the input line belongs to. */
  attach(rl: Interface): void {
    this.rl = rl
    // Node 24's readline throws on prompt() once closed (Node 20 ignored it): forget it at close.
    rl.once("close", () => {
      if (this.rl === rl) this.rl = undefined
    })
  }

  /** Write whole lines of agent or front-end text (a missing last newline is added). */
  write(text: string): void {
    if (text === "" || this.closed) return
    const whole = this.wrap(text.endsWith("\n") ? text : `${text}\n`)
    if (!this.options.interactive) {
      this.options.output.write(whole)
      return
    }
    this.erase()
    this.options.output.write(whole)
    this.draw()
  }

  /** On a terminal, every line word-wrapped to its width (a pipe gets the lines as they are). */
  private wrap(text: string): string {
    const width = this.options.output.isTTY === true ? this.options.output.columns : undefined
    if (!width) return text
    return text
      .split("\n")
      .map((line) => wrapStyled(line, width).join("\n"))
      .join("\n")
  }

  /** Write lines (a newline is added to each). */
  lines(...lines: ReadonlyArray<string>): void {
    if (lines.length > 0) this.write(lines.map((l) => `${l}\n`).join(""))
  }

  /**
   * The person pressed Enter on `line` typed after `prompt`: readline echoed
   * it and moved to the next row. The echo is erased at the next write, which
   * puts the line in the scrollback the way the chat wants it shown.
   */
  lineEntered(line: string): void {
    if (!this.options.interactive || !this.drawn) return
    const first = this.enteredRows === undefined
    const promptWidth = first && this.drawn.prompt ? stringWidth(stripAnsi(this.promptText ?? "")) : 0
    const rows = Math.floor((promptWidth + stringWidth(line)) / Math.max(1, this.columns)) + 1
    this.enteredRows = (this.enteredRows ?? (this.drawn.status ? 1 : 0)) + rows
  }

  /** Show `text` as the prompt from now on (undefined: no input line, e.g. one-shot runs). */
  setPrompt(text: string | undefined): void {
    if (text === this.promptText) return
    this.promptText = text
    this.redraw()
  }

  /** The status line's text for a width (plain; painted dim here). */
  setStatus(text: ((width: number) => string) | undefined): void {
    const before = this.status?.(this.columns)
    this.status = text
    if (text?.(this.columns) !== before) this.redrawStatus()
  }

  /** Start (or relabel) the spinner in the status line; undefined stops it. */
  spin(label: string | undefined): void {
    if (!this.options.interactive) return
    if (label === this.spinnerLabel) return
    this.spinnerLabel = label
    if (label === undefined) {
      clearInterval(this.spinnerTimer)
      this.spinnerTimer = undefined
    } else if (!this.spinnerTimer) {
      this.spinnerTimer = setInterval(() => {
        this.frame = (this.frame + 1) % FRAMES.length
        this.redrawStatus()
      }, 80)
      this.spinnerTimer.unref()
    }
    this.redrawStatus()
  }

  get spinning(): boolean {
    return this.spinnerLabel !== undefined
  }

  /** Erase the status and input lines for good and leave the cursor on a fresh line. */
  close(): void {
    this.spin(undefined)
    this.erase()
    this.closed = true
  }

  /** Draw both lines again (after a resize, a prompt change, or when nothing was drawn). */
  redraw(): void {
    if (!this.options.interactive || this.closed) return
    this.erase()
    this.draw()
  }

  private statusLine(): string | undefined {
    const spinner = this.spinnerLabel === undefined ? "" : `${FRAMES[this.frame]} ${this.spinnerLabel}  ·  `
    const room = this.columns - 1 - stringWidth(spinner)
    const text = `${spinner}${this.status?.(room) ?? ""}`.replace(/ {2}· {2}$/, "")
    if (text === "") return undefined
    const fitted = fitWidth(text, this.columns - 1)
    return this.options.color ? `\u001b[2m${fitted}\u001b[22m` : fitted
  }

  private redrawStatus(): void {
    if (!this.options.interactive || this.closed) return
    if (!this.drawn || this.enteredRows !== undefined) return
    const line = this.statusLine()
    if (this.drawn.status !== (line !== undefined)) {
      this.redraw()
      return
    }
    if (line === undefined) return
    const out = this.options.output
    const up = this.drawn.prompt ? (this.rl?.getCursorPos().rows ?? 0) + 1 : 0
    // Save the cursor (in the input line), rewrite the status row, come back.
    out.write("\u001b7")
    if (up > 0) moveCursor(out, 0, -up)
    cursorTo(out, 0)
    out.write(`${line}\u001b[K`)
    out.write("\u001b8")
    this.drawn.statusWidth = stringWidth(stripAnsi(line))
  }

  /** Remove the status and input lines; the cursor ends where they began. */
  private erase(): void {
    if (!this.drawn) return
    const out = this.options.output
    // A status line drawn wider than the terminal is now (a resize) was wrapped by it into more rows.
    const statusRows = this.drawn.status ? Math.max(1, Math.ceil(this.drawn.statusWidth / this.columns)) : 0
    let up: number
    if (this.enteredRows !== undefined) up = this.enteredRows + statusRows - (this.drawn.status ? 1 : 0)
    else up = statusRows + (this.drawn.prompt ? (this.rl?.getCursorPos().rows ?? 0) : 0)
    if (!this.drawn.prompt && this.drawn.status) up = statusRows - 1
    if (up > 0) moveCursor(out, 0, -up)
    cursorTo(out, 0)
    clearScreenDown(out)
    this.drawn = undefined
    this.enteredRows = undefined
  }

  private draw(): void {
    if (this.drawn) return
    const out = this.options.output
    const status = this.statusLine()
    const prompt = this.promptText !== undefined && this.rl !== undefined
    if (status !== undefined) out.write(prompt ? `${status}\n` : status)
    if (prompt && this.rl) {
      // Readline would move up by the rows it drew last time; we already cleared them.
      this.rl.prevRows = 0
      this.rl.setPrompt(this.promptText!)
      this.rl.prompt(true)
    }
    this.drawn = { status: status !== undefined, statusWidth: stringWidth(stripAnsi(status ?? "")), prompt }
  }
}

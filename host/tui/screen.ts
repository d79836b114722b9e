/**
 * The terminal the chat writes to: agent output, a spinner for long waits and
 * the readline prompt share one screen. Output first clears the prompt (or
 * the spinner) line, and the prompt comes back once output rests at the start
 * of a line, with whatever the person had typed.
 */
import { clearLine, cursorTo, type Interface } from "node:readline"

const FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]

export interface ScreenOptions {
  readonly output: NodeJS.WritableStream & { isTTY?: boolean }
  /** Draw the spinner (a terminal); off, a wait shows nothing. */
  readonly animate: boolean
}

export class Screen {
  private atLineStart = true
  private promptShown = false
  private promptText: string | undefined
  private spinnerLabel: string | undefined
  private spinnerTimer: NodeJS.Timeout | undefined
  private frame = 0
  private rl: Interface | undefined

  constructor(private readonly options: ScreenOptions) {}

  /** The readline the prompt belongs to. */
  attach(rl: Interface): void {
    this.rl = rl
    // Node 24's readline throws on prompt() once closed (Node 20 ignored it): forget it at close.
    rl.once("close", () => {
      if (this.rl === rl) this.rl = undefined
    })
  }

  /** Write agent or front-end text. */
  write(text: string): void {
    if (text === "") return
    this.clearTransient()
    this.options.output.write(text)
    this.atLineStart = text.endsWith("\n")
    this.restore()
  }

  /** Write whole lines (a newline is added to each). */
  lines(...lines: ReadonlyArray<string>): void {
    if (lines.length === 0) return
    this.write((this.atLineStart ? "" : "\n") + lines.map((l) => `${l}\n`).join(""))
  }

  /** The person pressed Enter: readline echoed the line and a newline. */
  lineEntered(): void {
    this.promptShown = false
    this.atLineStart = true
  }

  /** Show `text` as the prompt from now on (undefined: no prompt, e.g. one-shot runs). */
  setPrompt(text: string | undefined): void {
    this.promptText = text
    if (this.promptShown) this.clearTransient()
    this.restore()
  }

  /** Start (or relabel) the spinner; undefined stops it. */
  spin(label: string | undefined): void {
    if (!this.options.animate) return
    if (label === undefined) {
      if (this.spinnerLabel === undefined) return
      this.spinnerLabel = undefined
      clearInterval(this.spinnerTimer)
      this.spinnerTimer = undefined
      this.clearTransient()
      this.restore()
      return
    }
    this.spinnerLabel = label
    if (!this.spinnerTimer) this.spinnerTimer = setInterval(() => this.drawSpinner(), 80)
    this.drawSpinner()
  }

  get spinning(): boolean {
    return this.spinnerLabel !== undefined
  }

  /** Stop the spinner and leave the cursor on a fresh line. */
  close(): void {
    this.spin(undefined)
    this.promptText = undefined
    this.clearTransient()
    if (!this.atLineStart) this.options.output.write("\n")
    this.atLineStart = true
  }

  private drawSpinner(): void {
    if (this.spinnerLabel === undefined || !this.atLineStart) return
    this.clearTransient()
    this.frame = (this.frame + 1) % FRAMES.length
    this.options.output.write(`${FRAMES[this.frame]} ${this.spinnerLabel}`)
    this.spinnerDrawn = true
  }

  private spinnerDrawn = false

  /** Erase the prompt or spinner line (output is about to take its place). */
  private clearTransient(): void {
    if (!this.promptShown && !this.spinnerDrawn) return
    if (this.options.output.isTTY || this.options.animate) {
      cursorTo(this.options.output, 0)
      clearLine(this.options.output, 0)
    } else if (this.promptShown) this.options.output.write("\n")
    this.promptShown = false
    this.spinnerDrawn = false
  }

  /** Bring back the spinner or the prompt when output rests at a line start. */
  private restore(): void {
    if (!this.atLineStart) return
    if (this.spinnerLabel !== undefined) {
      this.drawSpinner()
      return
    }
    if (this.promptText === undefined || !this.rl) return
    this.rl.setPrompt(this.promptText)
    this.rl.prompt(true)
    this.promptShown = true
  }
}

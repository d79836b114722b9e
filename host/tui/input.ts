/**
 * Typed lines into messages. On a terminal, lines that arrive in the same
 * input chunk are a paste and stay one message with their newlines; a line
 * ending in `\` continues on the next. A pipe sends every line on its own
 * (a script is one command or prompt per line).
 */
export class LineAssembler {
  private held: string[] = []
  private continued: string[] = []
  private scheduled = false

  constructor(
    /** A terminal: pastes and continuations join; a pipe: every line is a message. */
    private readonly joinPastes: boolean,
    private readonly deliver: (message: string) => void,
  ) {}

  /** True while a `\` continuation waits for its next line. */
  get continuing(): boolean {
    return this.continued.length > 0
  }

  push(line: string): void {
    if (!this.joinPastes) {
      this.deliver(line)
      return
    }
    this.held.push(line)
    if (this.scheduled) return
    this.scheduled = true
    // Every line of one chunk is emitted before the next turn of the loop.
    setImmediate(() => {
      this.scheduled = false
      const lines = this.held
      this.held = []
      this.take(lines)
    })
  }

  private take(lines: ReadonlyArray<string>): void {
    const last = lines.at(-1) ?? ""
    if (lines.length === 1 && last.endsWith("\\")) {
      this.continued.push(last.slice(0, -1))
      return
    }
    const message = [...this.continued, ...lines].join("\n")
    this.continued = []
    this.deliver(message)
  }
}

/**
 * Typed messages waiting for their turn. An answer to a waiting approval or
 * question goes first; the rest are handled one at a time, in order, once
 * the chat is ready; a line read from a pipe also waits for the run before
 * it (a script is one line after another), and the end of a script waits
 * for every line and the runs they started.
 */
export interface QueueHandlers {
  /** Resolves false when the chat could not start: nothing more is handled. */
  readonly ready: () => Promise<boolean>
  /** An approval or question waits for the next line. */
  readonly asked: () => boolean
  readonly answer: (line: string) => void
  /** A script must wait: it reads from a pipe and a run is open. */
  readonly mustWait: () => boolean
  readonly handle: (message: string) => Promise<void>
}

export class MessageQueue {
  private readonly queue: string[] = []
  private pumping = false
  /** Woken on every event: a piped line waits for the run before it, the script's end for both. */
  private readonly sleepers = new Set<() => void>()

  constructor(private readonly handlers: QueueHandlers) {}

  /** A whole message typed (or pasted, or piped). */
  push(message: string): void {
    if (this.handlers.asked() && this.queue.length === 0 && !this.pumping) {
      this.handlers.answer(message)
      return
    }
    this.queue.push(message)
    void this.pump()
  }

  /** Something happened (an event): a waiting line looks again. */
  wake(): void {
    for (const wake of [...this.sleepers]) wake()
    this.sleepers.clear()
  }

  private sleep(): Promise<void> {
    return new Promise<void>((resolve) => this.sleepers.add(resolve))
  }

  private async pump(): Promise<void> {
    if (this.pumping) return
    this.pumping = true
    try {
      while (this.queue.length > 0) {
        if (!(await this.handlers.ready())) return
        if (this.handlers.asked()) this.handlers.answer(this.queue.shift()!)
        else if (this.handlers.mustWait()) await this.sleep()
        else await this.handlers.handle(this.queue.shift()!)
      }
    } finally {
      this.pumping = false
      this.wake()
    }
  }

  /** Once nothing is queued, being handled or (for a script) running. */
  async settled(): Promise<void> {
    while (this.pumping || this.queue.length > 0 || this.handlers.mustWait()) await this.sleep()
  }
}

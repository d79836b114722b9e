/**
 * One ACP session the front end serves: the provider session of the same id,
 * its option values, its mapping state, the prompts waiting for their run to
 * end, and the client requests (approvals, questions) it has open.
 *
 * Rules kept:
 * - Every prompt ends exactly once: when its run ends, when a cancel's grace
 *   runs out (then `cancelled`, and the run's later end is ignored), or when
 *   the session closes. A cancelled prompt always answers `cancelled`.
 * - Notifications go out in order on one chain; a prompt answers only after
 *   every update before its end was written.
 */
import type { AgentEvent, RunOutcome } from "../../sdk/protocol.ts"
import type { OptionValues } from "./options.ts"
import { makeUpdateState, type Update, type UpdateState } from "./updates.ts"

type RunEnded = Extract<AgentEvent, { type: "RunEnded" }>

/** How a prompt's wait ended. */
export type PromptEnd =
  | {
      readonly kind: "ended"
      readonly outcome: RunOutcome
      readonly event: RunEnded
      readonly cancelled: boolean
    }
  | { readonly kind: "cancelled" }
  | { readonly kind: "closed" }

interface Waiter {
  readonly runId: string
  cancelled: boolean
  readonly resolve: (end: PromptEnd) => void
}

export class AcpSession {
  readonly updates: UpdateState = makeUpdateState()
  values: Record<string, string | boolean>
  skills = new Set<string>()
  /** Open client requests by approval or question id; aborting one withdraws it from the client. */
  readonly asks = new Map<string, AbortController>()
  private readonly waiters = new Set<Waiter>()
  /** Runs that ended before their prompt started waiting (a very short run). */
  private readonly ended = new Map<string, RunEnded>()
  private outbox: Promise<void> = Promise.resolve()
  private closed = false

  constructor(
    readonly id: string,
    readonly cwd: string,
    values: OptionValues,
    private readonly send: (update: Update) => Promise<void>,
    private readonly log: (message: string) => void,
  ) {
    this.values = { ...values }
  }

  /** Queue an update behind every earlier one. */
  notify(update: Update): Promise<void> {
    if (this.closed) return this.outbox
    this.outbox = this.outbox.then(
      () => this.send(update),
      () => this.send(update),
    )
    this.outbox = this.outbox.catch((error: unknown) => this.log(`session/update failed: ${String(error)}`))
    return this.outbox
  }

  /** Resolves once everything queued so far was written. */
  flushed(): Promise<void> {
    return this.outbox
  }

  /** Wait for run `runId` to end (or be cancelled, or the session to close). */
  waitRun(runId: string): Promise<PromptEnd> {
    const early = this.ended.get(runId)
    if (early)
      return Promise.resolve({ kind: "ended", outcome: early.outcome, event: early, cancelled: false })
    if (this.closed) return Promise.resolve({ kind: "closed" })
    return new Promise((resolve) => {
      const waiter: Waiter = {
        runId,
        cancelled: false,
        resolve: (end) => {
          this.waiters.delete(waiter)
          resolve(end)
        },
      }
      this.waiters.add(waiter)
    })
  }

  runEnded(event: RunEnded): void {
    let waited = false
    for (const w of [...this.waiters])
      if (w.runId === event.run_id) {
        waited = true
        w.resolve({ kind: "ended", outcome: event.outcome, event, cancelled: w.cancelled })
      }
    if (!waited) {
      this.ended.set(event.run_id, event)
      // Only the last few matter (a prompt collects its run's end at once).
      if (this.ended.size > 16) this.ended.delete(this.ended.keys().next().value!)
    }
  }

  /** Mark every waiting prompt cancelled; after `graceMs` answer them `cancelled` whatever the run does. */
  cancel(graceMs: number): void {
    const waiting = [...this.waiters]
    for (const w of waiting) w.cancelled = true
    for (const ask of this.asks.values()) ask.abort()
    this.asks.clear()
    if (waiting.length === 0) return
    const timer = setTimeout(() => {
      for (const w of waiting) if (this.waiters.has(w)) w.resolve({ kind: "cancelled" })
    }, graceMs)
    timer.unref?.()
  }

  get running(): boolean {
    return this.waiters.size > 0
  }

  close(): void {
    if (this.closed) return
    this.closed = true
    for (const ask of this.asks.values()) ask.abort()
    this.asks.clear()
    for (const w of [...this.waiters]) w.resolve({ kind: "closed" })
  }
}

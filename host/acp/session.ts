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
  /** The run the prompt is in; undefined while a steered prompt waits for the run that answers it. */
  runId: string | undefined
  readonly deliveryId: string
  cancelled: boolean
  guard?: ReturnType<typeof setTimeout>
  readonly resolve: (end: PromptEnd) => void
}

/** How long a steered prompt its run did not take waits for the CLI to begin the turn that answers it. */
const CONTINUATION_MS = 5_000

/**
 * Does this run end answer this prompt? The run reports the prompts it
 * consumed (delivery ids); a run that failed or was cancelled ends every
 * prompt in it; an older CLI that reports none ends its own run's prompts.
 */
const answers = (w: Waiter, e: RunEnded): boolean =>
  e.delivery_ids?.includes(w.deliveryId) === true ||
  (e.run_id === w.runId && (e.outcome !== "Completed" || e.delivery_ids === undefined))

export class AcpSession {
  values: Record<string, string | boolean>
  skills = new Set<string>()
  /** Open client requests by approval or question id; aborting one withdraws it from the client. */
  readonly asks = new Map<string, AbortController>()
  private readonly waiters = new Set<Waiter>()
  /** Run ends no prompt was waiting for yet (a very short run). */
  private readonly ended: RunEnded[] = []
  private outbox: Promise<void> = Promise.resolve()
  private closed = false
  /** Updates kept back until the client has the session's id (its session/new answer). */
  private held: Update[] | undefined
  /** Settles when the provider session exists (session/new answers before it does). */
  ready: Promise<void> = Promise.resolve()

  constructor(
    readonly id: string,
    readonly cwd: string,
    values: OptionValues,
    private readonly send: (update: Update) => Promise<void>,
    private readonly log: (message: string) => void,
    /** The mapping state (a loaded chat's carries on from its replay). */
    readonly updates: UpdateState = makeUpdateState(),
  ) {
    this.values = { ...values }
  }

  /** Keep updates back until `release`. */
  hold(): void {
    this.held ??= []
  }

  release(): void {
    const held = this.held ?? []
    this.held = undefined
    for (const update of held) void this.notify(update)
  }

  /** Queue an update behind every earlier one. */
  notify(update: Update): Promise<void> {
    if (this.closed) return this.outbox
    if (this.held) {
      this.held.push(update)
      return this.outbox
    }
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

  /** Wait for the run end that answers the prompt `deliveryId` sent into run `runId`. */
  waitRun(runId: string, deliveryId: string): Promise<PromptEnd> {
    if (this.closed) return Promise.resolve({ kind: "closed" })
    return new Promise((resolve) => {
      const waiter: Waiter = {
        runId,
        deliveryId,
        cancelled: false,
        resolve: (end) => {
          clearTimeout(waiter.guard)
          this.waiters.delete(waiter)
          resolve(end)
        },
      }
      this.waiters.add(waiter)
      for (const e of this.ended) if (this.waiters.has(waiter)) this.offer(waiter, e)
    })
  }

  private offer(w: Waiter, e: RunEnded): boolean {
    if (answers(w, e)) {
      w.resolve({ kind: "ended", outcome: e.outcome, event: e, cancelled: w.cancelled })
      return true
    }
    if (e.run_id !== w.runId) return false
    // A steer the run finished without: the CLI answers it in a turn of its own.
    w.runId = undefined
    w.guard = setTimeout(
      () => w.resolve({ kind: "ended", outcome: e.outcome, event: e, cancelled: w.cancelled }),
      CONTINUATION_MS,
    )
    return true
  }

  runStarted(runId: string): void {
    for (const w of this.waiters)
      if (w.runId === undefined) {
        clearTimeout(w.guard)
        w.runId = runId
      }
  }

  runEnded(event: RunEnded): void {
    let taken = false
    for (const w of [...this.waiters]) taken = this.offer(w, event) || taken
    if (!taken) {
      this.ended.push(event)
      // Only the last few matter (a prompt collects its run's end at once).
      if (this.ended.length > 16) this.ended.shift()
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

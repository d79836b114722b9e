/**
 * Every run open in the chat's session, tracked by id: a prompt's run (known
 * from the call's answer, whose events may arrive first) and a run the agent
 * opens by itself end on screen alike and give the prompt back. A one-shot
 * run waits here for its end.
 */
import type { AgentEvent, RunOutcome, RunUsage } from "../../sdk/protocol.ts"

export type RunEnded = Extract<AgentEvent, { type: "RunEnded" }>

/** The exit code that says how a run ended. */
export const exitCodeFor = (outcome: RunOutcome): number =>
  outcome === "Completed" ? 0 : outcome === "Cancelled" ? 130 : 1

export class RunTracker {
  private readonly open = new Set<string>()
  private readonly ends = new Map<string, RunEnded>()
  private readonly waiters = new Map<string, (e: RunEnded) => void>()
  /** How the last run ended (a script's exit code). */
  lastOutcome: RunOutcome | undefined
  /** The last run's usage that reported the context (the status line's). */
  lastUsage: RunUsage | undefined
  /** Prompts sent and not yet answered: a run starting meanwhile is theirs. */
  sending = 0

  get running(): boolean {
    return this.open.size > 0
  }

  /** A run began: true when it is a prompt's of ours (being sent, or already named by the call's answer). */
  started(runId: string): boolean {
    const ours = this.sending > 0 || this.open.has(runId)
    this.open.add(runId)
    return ours
  }

  /** A prompt's run, named by the call's answer (its end may have been heard already). */
  accepted(runId: string): void {
    if (!this.ends.has(runId)) this.open.add(runId)
  }

  ended(e: RunEnded): void {
    this.open.delete(e.run_id)
    this.lastOutcome = e.outcome
    if (e.usage?.context_used) this.lastUsage = e.usage
    this.ends.set(e.run_id, e)
    this.waiters.get(e.run_id)?.(e)
    this.waiters.delete(e.run_id)
  }

  /** The end of `runId`, once it comes. */
  waitFor(runId: string): Promise<RunEnded> {
    const ended = this.ends.get(runId)
    if (ended) return Promise.resolve(ended)
    return new Promise((resolve) => this.waiters.set(runId, resolve))
  }

  /** Another session: none of its runs are open here. */
  reset(): void {
    this.open.clear()
    this.lastUsage = undefined
  }
}

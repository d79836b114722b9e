/**
 * What became of a message typed while a run was open (a steer), said from
 * the delivery facts the plugin reports (docs/agent-protocol.md, recovery
 * facts): taken up by the running turn (`input_delivery` picked up in that
 * run, or the run's `delivery_ids` naming it), or left for the next turn
 * (the run ended without it), whose start then names the message instead of
 * "a turn by itself". Never concluded from the prompt call's answer alone.
 */
import type { AgentEvent, PromptAccepted } from "../../sdk/protocol.ts"

interface Steer {
  readonly text: string
  /** The run it was sent into (from the call's answer). */
  runId?: string
  /** The run ended without taking it up: the next turn the agent begins is its. */
  missed: boolean
}

/** A message as the chat quotes it: its first line, cut short. */
export const quote = (text: string, max = 40): string => {
  const line = text.split("\n", 1)[0] ?? ""
  return `“${line.length > max ? `${line.slice(0, max - 1)}…` : line}”`
}

export class Steers {
  private readonly byDelivery = new Map<string, Steer>()

  /** A message sent while a run was open, under `deliveryId`. */
  sent(deliveryId: string, text: string): void {
    this.byDelivery.set(deliveryId, { text, missed: false })
  }

  /** The call's answer: the line to say, or undefined when it did not join a run (or was settled already). */
  accepted(deliveryId: string, accepted: PromptAccepted): string | undefined {
    const steer = this.byDelivery.get(deliveryId)
    if (!steer) return undefined
    if (!accepted.steered) {
      this.byDelivery.delete(deliveryId)
      return undefined
    }
    steer.runId = accepted.run_id
    return "↳ sent to the running turn; waiting for the model to take it up"
  }

  /** A run the agent began by itself: the line that names it (a missed steer's turn, or a turn of its own). */
  selfStarted(): string {
    const missed = [...this.byDelivery.values()].find((s) => s.missed)
    if (!missed) return "↻ the agent started a turn by itself (Ctrl-C cancels it)"
    // This turn is the steer's now: named once, its delivery then said in this turn.
    missed.missed = false
    missed.runId = undefined
    return `↻ a new turn for ${quote(missed.text)} (Ctrl-C cancels it)`
  }

  /** What an event settles about a steer: the lines to say (none for most events). */
  onEvent(e: AgentEvent): string[] {
    if (e.type === "input_delivery" && e.delivery_id !== undefined) {
      const steer = this.byDelivery.get(e.delivery_id)
      if (!steer) return []
      // Not read by the model (the renderer says so with the run's end): the next turn may still take it up.
      if (e.state === "not_picked_up") {
        steer.missed = true
        return []
      }
      this.byDelivery.delete(e.delivery_id)
      if (e.state !== "picked_up") return []
      return [
        e.run_id !== undefined && e.run_id === steer.runId
          ? `↳ the running turn took up ${quote(steer.text)}`
          : `↳ ${quote(steer.text)} is answered in this turn`,
      ]
    }
    if (e.type !== "RunEnded") return []
    const lines: string[] = []
    for (const [id, steer] of this.byDelivery) {
      if (steer.runId !== e.run_id || steer.missed) continue
      if (e.delivery_ids?.includes(id)) {
        this.byDelivery.delete(id)
        lines.push(`↳ the turn took up ${quote(steer.text)}`)
        continue
      }
      steer.missed = true
      lines.push(`↳ the turn ended before the model read ${quote(steer.text)}; it waits for the next turn`)
    }
    return lines
  }

  /** Another session: nothing sent here is waited for. */
  clear(): void {
    this.byDelivery.clear()
  }
}

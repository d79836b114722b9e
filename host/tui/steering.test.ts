/**
 * What the chat says of a steer, from the delivery facts alone: one the
 * model never read (`not_picked_up`) is named by the turn the agent then
 * begins for it, once, and said answered there.
 */
import { describe, expect, it } from "vitest"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { Steers } from "./steering.ts"

const ev = (e: Record<string, unknown>) => ({ session_id: "s1", ...e }) as AgentEvent

describe("steers", () => {
  it("names the agent's next turn after a steer its turn did not pick up, once", () => {
    const steers = new Steers()
    steers.sent("d1", "and one more thing")
    expect(steers.accepted("d1", { run_id: "r1", steered: true })).toContain("sent to the running turn")
    const notRead = ev({ type: "input_delivery", run_id: "r1", input_uuid: "u1", delivery_id: "d1" })
    expect(steers.onEvent({ ...notRead, state: "not_picked_up" } as AgentEvent)).toEqual([])
    expect(steers.onEvent(ev({ type: "RunEnded", run_id: "r1", outcome: "Cancelled" }))).toEqual([])
    expect(steers.selfStarted()).toBe("↻ a new turn for “and one more thing” (Ctrl-C cancels it)")
    const read = { ...notRead, run_id: "r2", state: "picked_up" } as AgentEvent
    expect(steers.onEvent(read)).toEqual(["↳ “and one more thing” is answered in this turn"])
    expect(steers.selfStarted()).toBe("↻ the agent started a turn by itself (Ctrl-C cancels it)")
  })
})

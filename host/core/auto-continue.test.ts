/** The continue-at-reset helper: when it sends its one "continue", and when it holds back. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { AgentEvent, RecoveryIdentity } from "../../sdk/protocol.ts"
import { makeAutoContinue, timeLeft } from "./auto-continue.ts"

const S = "s1"
const R = "run-1"
const ID: RecoveryIdentity = {
  identified: true,
  key: "k",
  email: "e",
  organization_id: "o",
  config_dir: "/c",
}
const blocked = (
  at: number,
  extra: Partial<Extract<AgentEvent, { type: "usage_blocked" }>> = {},
): AgentEvent => ({
  type: "usage_blocked",
  session_id: S,
  run_id: R,
  window: "five_hour",
  resets_at: new Date(at).toISOString(),
  reason: "window",
  message: "limit",
  ...extra,
})
const ended: AgentEvent = { type: "RunEnded", session_id: S, run_id: R, outcome: "Failed" }
const identity = (identity: RecoveryIdentity): AgentEvent => ({
  type: "recovery_identity",
  session_id: S,
  run_id: R,
  identity,
})

describe("continue at the reset", () => {
  beforeEach(() => void vi.useFakeTimers({ now: 1_000_000 }))
  afterEach(() => void vi.useRealTimers())

  const setup = (mode: "identified" | "any" = "identified") => {
    const sent: string[] = []
    const notes: string[] = []
    const auto = makeAutoContinue({
      mode,
      marginMs: 0,
      send: (_s, text) => void sent.push(text),
      notify: (_s, t) => void notes.push(t),
    })
    return { auto, sent, notes }
  }

  it("sends one continue at the reset of an identified account's blocked run, showing the time left", () => {
    const { auto, sent, notes } = setup()
    auto.onEvent(blocked(1_005_000))
    auto.onEvent(ended)
    expect(auto.status(S)).toBeUndefined() // the identity is still on its way
    auto.onEvent(identity(ID))
    expect(auto.status(S)).toEqual({ state: "scheduled", at: 1_005_000, leftMs: 5_000 })
    expect(notes.at(-1)).toContain("in 5 s")
    vi.advanceTimersByTime(4_999)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(1)
    expect(sent).toEqual(["continue"])
    vi.advanceTimersByTime(60_000)
    auto.onEvent(ended)
    expect(sent).toEqual(["continue"])
  })

  it("holds an unidentified account unless the person opted in for it", () => {
    const held = setup()
    held.auto.onEvent(blocked(1_005_000))
    held.auto.onEvent(identity({ identified: false, reason: "an external token pays" }))
    held.auto.onEvent(ended)
    vi.advanceTimersByTime(10_000)
    expect(held.sent).toEqual([])
    expect(held.auto.status(S)).toEqual({ state: "held", reason: expect.stringContaining("external token") })
    const any = setup("any")
    any.auto.onEvent(blocked(1_005_000))
    any.auto.onEvent(identity({ identified: false, reason: "an external token pays" }))
    any.auto.onEvent(ended)
    vi.advanceTimersByTime(10_000)
    expect(any.sent).toEqual(["continue"])
  })

  it("never continues credits_required, a missing deadline, or after something else was sent", () => {
    for (const event of [
      blocked(1_005_000, { reason: "credits_required", resets_at: undefined }),
      blocked(0, { resets_at: undefined }),
    ]) {
      const { auto, sent } = setup()
      auto.onEvent(event)
      auto.onEvent(identity(ID))
      auto.onEvent(ended)
      vi.advanceTimersByTime(10_000)
      expect(sent).toEqual([])
      expect(auto.status(S)?.state).toBe("held")
    }
    const { auto, sent } = setup()
    auto.onEvent(blocked(1_005_000))
    auto.onEvent(identity(ID))
    auto.onEvent(ended)
    auto.sent(S)
    vi.advanceTimersByTime(10_000)
    expect(sent).toEqual([])
    expect(auto.status(S)).toBeUndefined()
  })

  it("waits for the run's end: a block is not a reason to send into a live run", () => {
    const { auto, sent } = setup()
    auto.onEvent(blocked(1_001_000))
    auto.onEvent(identity(ID))
    vi.advanceTimersByTime(10_000)
    expect(sent).toEqual([])
    auto.onEvent(ended)
    vi.advanceTimersByTime(0)
    expect(sent).toEqual(["continue"])
  })

  it("says the time left in seconds, minutes or hours", () => {
    expect([timeLeft(4_200), timeLeft(125_000), timeLeft(3_900_000)]).toEqual([
      "in 5 s",
      "in 3 min",
      "in 1 h 5 min",
    ])
  })
})

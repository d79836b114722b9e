/** Usage-limit warnings (usage-limits.ts): once per window and reset, a notice or a chat line, never below 80%. */
import { describe, expect, it } from "vitest"
import type { UsageLimits } from "../../sdk/protocol.ts"
import { makeUpdateState } from "./update-state.ts"
import { updatesOf } from "./updates.ts"

const limits = (
  used: number,
  resets = "2026-12-07T21:53:00.000Z",
  status = "allowed_warning",
): UsageLimits => ({
  windows: [
    { id: "five_hour", label: "5-hour limit", used, resets_at: resets, status: status as "allowed_warning" },
    { id: "seven_day", label: "Weekly limit", used: 0.42, status: "allowed" },
  ],
  reset_credits: [],
  updated_at: "2026-12-07T20:00:00.000Z",
})
const event = (l: UsageLimits) => ({ type: "UsageLimits" as const, session_id: "s", limits: l })

describe("usage limits shown to the client", () => {
  it("warns once per window and reset time, with a meter, from 80% used", () => {
    const state = makeUpdateState()
    expect(updatesOf(state, event(limits(0.5)))).toEqual([])
    const [warning] = updatesOf(state, event(limits(0.92)))
    expect(warning).toMatchObject({
      sessionUpdate: "agent_message_chunk",
      content: {
        text: "\n\n> ⚠ 5-hour limit: 92% used · resets 2026-12-07 21:53 UTC `██████████████████░░`\n\n",
      },
    })
    expect(updatesOf(state, event(limits(0.95)))).toEqual([])
    // The next window (a new reset time) is warned of again; a rejection is the run's to report.
    expect(updatesOf(state, event(limits(0.9, "2026-12-08T02:53:00.000Z")))).toHaveLength(1)
    expect(updatesOf(state, event(limits(1, "2026-12-08T07:53:00.000Z", "rejected")))).toEqual([])
  })

  it("is a notice, the meter its description, for a client that declared notices", () => {
    const state = makeUpdateState({ notices: true, compaction: false, terminalCards: false })
    expect(updatesOf(state, event(limits(0.85)))).toEqual([
      {
        sessionUpdate: "notice",
        severity: "warning",
        title: "5-hour limit: 85% used · resets 2026-12-07 21:53 UTC",
        description: "`█████████████████░░░`",
      },
    ])
  })
})

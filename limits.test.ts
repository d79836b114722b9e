import { describe, expect, it } from "vitest"
import { limitsFromGetUsage, limitsFromRateLimitEvent } from "./limits.ts"

const now = new Date("2026-11-29T12:00:00.000Z")
// 1_800_000_000 unix seconds
const RESET = "2027-01-15T08:00:00.000Z"

describe("rate_limit_event (0-1 fractions, unix seconds)", () => {
  it("keeps the fraction and turns seconds into ISO", () => {
    const limits = limitsFromRateLimitEvent(
      { status: "allowed_warning", rateLimitType: "seven_day", utilization: 0.82, resetsAt: 1_800_000_000 },
      now,
    )
    expect(limits).toEqual({
      windows: [
        { id: "seven_day", label: "Weekly limit", used: 0.82, resets_at: RESET, status: "allowed_warning" },
      ],
      reset_credits: [],
      updated_at: now.toISOString(),
    })
  })

  it("reads unified windows keyed by id or listed, and the overage state", () => {
    const keyed = limitsFromRateLimitEvent(
      {
        status: "allowed",
        rateLimitType: "five_hour",
        utilization: 0.1,
        unifiedWindows: {
          five_hour: { utilization: 0.1, resetsAt: 1_800_000_000, status: "allowed" },
          seven_day: { utilization: 0.5, resetsAt: 1_800_600_000 },
        },
        overageStatus: "allowed",
      },
      now,
    )
    expect(keyed.windows.map((w) => [w.id, w.used, w.resets_at])).toEqual([
      ["five_hour", 0.1, RESET],
      ["seven_day", 0.5, "2027-01-22T06:40:00.000Z"],
      ["overage", 0, undefined],
    ])
    const listed = limitsFromRateLimitEvent(
      { status: "allowed", unifiedWindows: [{ id: "seven_day_overage_included", utilization: 1.4 }] },
      now,
    )
    expect(listed.windows).toEqual([
      { id: "seven_day_overage_included", label: "Weekly limit with extra usage", used: 1 },
    ])
  })

  it("names the responsible window of a rejection with its own deadline", () => {
    const info = {
      status: "rejected",
      rateLimitType: "seven_day",
      unifiedWindows: {
        seven_day: { utilization: 1, resetsAt: 1_800_000_000 },
        five_hour: { utilization: 1, resetsAt: 1 },
      },
    }
    expect(limitsFromRateLimitEvent(info, now).blocking_window).toBe("seven_day")
  })
})

describe("get_usage (0-100 percent, ISO)", () => {
  it("turns percentages into fractions and keeps ISO resets", () => {
    const limits = limitsFromGetUsage(
      {
        subscription_type: "max",
        rate_limits_available: true,
        rate_limits: {
          five_hour: { utilization: 37, resets_at: "2026-11-29T15:00:00+00:00" },
          seven_day: { utilization: 100, resets_at: null },
          seven_day_opus: null,
          model_scoped: [{ display_name: "Fable", utilization: 12.5, resets_at: "2026-12-01T00:00:00Z" }],
        },
      },
      now,
    )
    expect(limits).toEqual({
      windows: [
        { id: "five_hour", label: "5-hour limit", used: 0.37, resets_at: "2026-11-29T15:00:00.000Z" },
        { id: "seven_day", label: "Weekly limit", used: 1 },
        {
          id: "model:Fable",
          label: "Weekly limit (Fable)",
          used: 0.125,
          resets_at: "2026-12-01T00:00:00.000Z",
        },
      ],
      reset_credits: [],
      updated_at: now.toISOString(),
    })
  })

  it("reports no windows when the account has no plan limits (offline answer)", () => {
    expect(
      limitsFromGetUsage(
        { session: {}, subscription_type: null, rate_limits_available: false, rate_limits: null },
        now,
      ),
    ).toEqual({
      windows: [],
      reset_credits: [],
      updated_at: now.toISOString(),
    })
  })
})

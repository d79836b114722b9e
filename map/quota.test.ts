/**
 * Quota recovery facts over the CLI's recorded `rate_limit_info` shapes
 * (testdata/rate_limit, CLI 2.1.332) and the variants its schema declares.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { blocks, quotaFactOf, rejectionOf } from "./quota.ts"
import { RateLimitInfo } from "../wire.ts"

const recorded = readFileSync(join(import.meta.dirname, "../testdata/rate_limit/stdout.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.includes('"rate_limit_event"'))
  .map((l) => RateLimitInfo.parse(JSON.parse(l).rate_limit_info))
const [rejected, warning] = recorded as [RateLimitInfo, RateLimitInfo]
const RESET = new Date(1_800_000_000 * 1000).toISOString()

describe("quota facts", () => {
  it("allowed and warning never block (a rejected unified window alone does not either)", () => {
    expect(quotaFactOf(warning)).toEqual({ kind: "warning" })
    expect(blocks(quotaFactOf(warning))).toBe(false)
    const allowed = {
      ...warning,
      status: "allowed",
      unifiedWindows: { five_hour: { utilization: 1, resetsAt: 1, status: "rejected" } },
    }
    expect(quotaFactOf(allowed)).toEqual({ kind: "allowed" })
    expect(rejectionOf(allowed)).toBeUndefined()
  })

  it("a rejection covered by permitted paid overage does not block", () => {
    for (const overageStatus of ["allowed", "allowed_warning"]) {
      const fact = quotaFactOf({ ...rejected, overageStatus, isUsingOverage: true })
      expect(fact).toEqual({ kind: "overage_permitted" })
      expect(blocks(fact)).toBe(false)
    }
  })

  it("grace alone does not override a native rejection", () => {
    const graced = { ...rejected, rateLimitGraceActive: true }
    expect(blocks(quotaFactOf(graced))).toBe(true)
  })

  it("the recorded rejection names its window, its deadline and its unified entry", () => {
    const deadline = new Date((rejected.resetsAt ?? 0) * 1000).toISOString()
    expect(rejectionOf(rejected)).toEqual({
      kind: "rejected",
      reason: "window",
      window: "five_hour",
      resetsAt: deadline,
      entry: { id: "five_hour", label: "5-hour limit", used: 1, resets_at: deadline, status: "rejected" },
      message: `5-hour limit reached; it resets at ${deadline}.`,
    })
  })

  it("takes a missing top-level deadline from the responsible window's own entry, never another's", () => {
    const info = {
      status: "rejected",
      rateLimitType: "seven_day",
      unifiedWindows: {
        seven_day: { utilization: 1, resetsAt: 1_800_000_000 },
        five_hour: { utilization: 1, resetsAt: 1 },
      },
    }
    expect(rejectionOf(info)).toMatchObject({ window: "seven_day", resetsAt: RESET })
    const none = rejectionOf({
      status: "rejected",
      rateLimitType: "seven_day",
      unifiedWindows: { five_hour: { utilization: 1, resetsAt: 1 } },
    })
    expect(none).toMatchObject({
      window: "seven_day",
      message: "Weekly limit reached; no reset time was reported.",
    })
    expect(none?.resetsAt).toBeUndefined()
    expect(none?.entry).toBeUndefined()
  })

  it("a rejected overage without its deadline shows it missing, never the window's", () => {
    const fact = rejectionOf({ ...rejected, isUsingOverage: true, overageStatus: "rejected" })
    expect(fact).toMatchObject({
      reason: "overage",
      window: "overage",
      message: "Extra usage reached; no reset time was reported.",
    })
    expect(fact?.resetsAt).toBeUndefined()
    expect(
      rejectionOf({ status: "rejected", rateLimitType: "overage", resetsAt: 1_800_000_000 })?.resetsAt,
    ).toBeUndefined()
    expect(
      rejectionOf({ status: "rejected", rateLimitType: "overage", overageResetsAt: 1_800_000_000 })?.resetsAt,
    ).toBe(RESET)
  })

  it("credits_required blocks and never promises a timed reset", () => {
    const fact = rejectionOf({ ...rejected, errorCode: "credits_required" })
    expect(fact).toEqual({
      kind: "rejected",
      reason: "credits_required",
      window: "five_hour",
      message: "5-hour limit reached: credits are required to continue.",
    })
  })
})

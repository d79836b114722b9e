/**
 * Rate limits → `UsageLimits`. Two decoders on purpose: the stream's
 * `rate_limit_event` gives a 0-1 fraction and unix seconds, `get_usage` gives
 * a 0-100 percentage and ISO strings. The protocol wants 0-1 and ISO: a
 * time that cannot be one (out of Date's range, not a date) is left out,
 * never thrown on or passed through.
 */
import type { UsageLimits, UsageWindow } from "./sdk/protocol.ts"
import type { GetUsageResponse, RateLimitInfo } from "./wire.ts"

const labels: Readonly<Record<string, string>> = {
  five_hour: "5-hour limit",
  seven_day: "Weekly limit",
  seven_day_opus: "Weekly limit (Opus)",
  seven_day_sonnet: "Weekly limit (Sonnet)",
  seven_day_oauth_apps: "Weekly limit (apps)",
  seven_day_overage_included: "Weekly limit with extra usage",
  overage: "Extra usage",
}
export const windowLabel = (id: string): string => labels[id] ?? id.replace(/_/g, " ")

const clampShare = (share: number): number => Math.max(0, Math.min(share, 1))
/** Unix seconds as ISO 8601; undefined for a time no Date can hold (1e300 would throw "Invalid time value"). */
export const fromUnixSeconds = (seconds: number | null | undefined): string | undefined => {
  if (typeof seconds !== "number") return undefined
  const date = new Date(seconds * 1000)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}
const statusOf = (value: unknown): UsageWindow["status"] =>
  value === "allowed" || value === "allowed_warning" || value === "rejected" ? value : undefined

const window = (
  id: string,
  used: number | null | undefined,
  resetsAt: string | undefined,
  status: UsageWindow["status"],
  label = windowLabel(id),
): UsageWindow => ({
  id,
  label,
  used: clampShare(used ?? 0),
  ...(resetsAt === undefined ? {} : { resets_at: resetsAt }),
  ...(status === undefined ? {} : { status }),
})

interface StreamWindow {
  readonly id: string
  readonly utilization?: number | null
  readonly resetsAt?: number | null
  readonly status?: string | null
}

/** The unified windows of a rate_limit_event, whether keyed by id or listed. */
const unifiedWindows = (info: RateLimitInfo): StreamWindow[] => {
  const unified = info.unifiedWindows
  if (unified === undefined || unified === null) return []
  if (Array.isArray(unified))
    return unified.flatMap((w) => {
      const id = w.id ?? w.rateLimitType
      return typeof id === "string" ? [{ ...w, id }] : []
    })
  return Object.entries(unified).map(([id, w]) => ({ ...w, id }))
}

/** `rate_limit_event.rate_limit_info` (0-1, unix seconds) → UsageLimits. */
export const limitsFromRateLimitEvent = (info: RateLimitInfo, now: Date = new Date()): UsageLimits => {
  const windows = new Map<string, UsageWindow>()
  for (const w of unifiedWindows(info)) {
    windows.set(w.id, window(w.id, w.utilization, fromUnixSeconds(w.resetsAt), statusOf(w.status)))
  }
  const main = info.rateLimitType
  if (typeof main === "string") {
    const known = windows.get(main)
    const resetsAt = fromUnixSeconds(info.resetsAt) ?? known?.resets_at
    windows.set(
      main,
      window(main, info.utilization ?? known?.used, resetsAt, statusOf(info.status) ?? known?.status),
    )
  }
  if (typeof info.overageStatus === "string" && !windows.has("overage")) {
    const resetsAt = fromUnixSeconds(info.overageResetsAt)
    const used = info.overageStatus === "rejected" ? 1 : 0
    windows.set("overage", window("overage", used, resetsAt, statusOf(info.overageStatus)))
  }
  const blocking = info.status === "rejected" ? main : undefined
  return {
    windows: [...windows.values()],
    reset_credits: [],
    ...(typeof blocking === "string" ? { blocking_window: blocking } : {}),
    updated_at: now.toISOString(),
  }
}

const isoOf = (value: string | null | undefined): string | undefined => {
  if (typeof value !== "string" || value === "") return undefined
  const ms = Date.parse(value)
  // Not a time: the protocol promises ISO 8601, so it is left out rather than passed on.
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString()
}

const meterIds = [
  "five_hour",
  "seven_day",
  "seven_day_opus",
  "seven_day_sonnet",
  "seven_day_oauth_apps",
] as const

/** `get_usage` (0-100 percent, ISO) → UsageLimits. No availability is claimed from it. */
export const limitsFromGetUsage = (response: GetUsageResponse, now: Date = new Date()): UsageLimits => {
  const limits = response.rate_limits
  const windows: UsageWindow[] = []
  if (limits !== null && limits !== undefined) {
    for (const id of meterIds) {
      const meter = limits[id]
      if (meter === null || meter === undefined || typeof meter.utilization !== "number") continue
      windows.push(window(id, meter.utilization / 100, isoOf(meter.resets_at), undefined))
    }
    for (const scoped of limits.model_scoped ?? []) {
      if (typeof scoped.utilization !== "number") continue
      windows.push(
        window(
          `model:${scoped.display_name}`,
          scoped.utilization / 100,
          isoOf(scoped.resets_at),
          undefined,
          `Weekly limit (${scoped.display_name})`,
        ),
      )
    }
  }
  return { windows, reset_credits: [], updated_at: now.toISOString() }
}

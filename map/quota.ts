/**
 * Quota recovery facts: what one `rate_limit_event` says about whether work
 * may go on, apart from the meters (limits.ts) and the run lifecycle (the
 * session's ledger). Plain functions over what wire.ts decodes.
 *
 * Rules (product notes "Quota recovery facts", CLI 2.1.332's own schema text):
 * - the top-level `status` says whether requests are refused; a rejected
 *   unified window alone does not;
 * - `allowed`, `allowed_warning`, and a rejection covered by permitted paid
 *   overage (`overageStatus` allowed or allowed_warning) never block;
 * - `rateLimitGraceActive` alone never overrides a rejection (the CLI keeps it
 *   true at hard exhaustion);
 * - a rejection names the responsible window and that window's own deadline
 *   (from its unified entry when the frame has none); `credits_required`
 *   never promises a timed reset; a rejected overage without
 *   `overageResetsAt` has no deadline, never another window's.
 */
import { fromUnixSeconds, windowLabel } from "../limits.ts"
import type { UsageBlockReason, UsageWindow } from "../sdk/protocol.ts"
import type { RateLimitInfo } from "../wire.ts"

export type QuotaFact =
  | { readonly kind: "allowed" | "warning" | "overage_permitted" }
  | {
      readonly kind: "rejected"
      readonly reason: UsageBlockReason
      readonly window?: string
      readonly resetsAt?: string
      /** The responsible window's unified entry (0-1, ISO), when reported. */
      readonly entry?: UsageWindow
      readonly message: string
    }

const permits = (status: unknown): boolean => status === "allowed" || status === "allowed_warning"

interface Entry {
  readonly utilization?: number | null
  readonly resetsAt?: number | null
  readonly status?: string | null
}

const unifiedEntry = (info: RateLimitInfo, id: string): Entry | undefined => {
  const unified = info.unifiedWindows
  if (unified === undefined || unified === null) return undefined
  if (Array.isArray(unified)) return unified.find((w) => (w.id ?? w.rateLimitType) === id)
  return unified[id]
}

const entryOf = (id: string, entry: Entry | undefined): UsageWindow | undefined => {
  if (entry === undefined) return undefined
  const status = entry.status
  const resets_at = fromUnixSeconds(entry.resetsAt)
  return {
    id,
    label: windowLabel(id),
    used: Math.max(0, Math.min(entry.utilization ?? 0, 1)),
    ...(resets_at === undefined ? {} : { resets_at }),
    ...(status === "allowed" || status === "allowed_warning" || status === "rejected" ? { status } : {}),
  }
}

/** The one quota fact of a `rate_limit_info`. */
export const quotaFactOf = (info: RateLimitInfo): QuotaFact => {
  if (info.status === "allowed") return { kind: "allowed" }
  if (info.status === "allowed_warning") return { kind: "warning" }
  if (info.status !== "rejected") return { kind: "allowed" }
  const type = typeof info.rateLimitType === "string" ? info.rateLimitType : undefined
  if (info.errorCode === "credits_required")
    return {
      kind: "rejected",
      reason: "credits_required",
      ...(type === undefined ? {} : { window: type }),
      message: `${type === undefined ? "Usage limit" : windowLabel(type)} reached: credits are required to continue.`,
    }
  // Paid extra usage that is permitted covers the overflow: nothing is cut off.
  if (type !== "overage" && permits(info.overageStatus)) return { kind: "overage_permitted" }
  const overage = type === "overage" || (info.isUsingOverage === true && info.overageStatus === "rejected")
  const window = overage ? "overage" : type
  const seconds = overage
    ? (info.overageResetsAt ?? undefined)
    : (info.resetsAt ??
      (window === undefined ? undefined : unifiedEntry(info, window)?.resetsAt) ??
      undefined)
  // A time no Date can hold (1e300) is a missing deadline, never a thrown error.
  const resetsAt = fromUnixSeconds(seconds)
  const entry = window === undefined ? undefined : entryOf(window, unifiedEntry(info, window))
  const label = window === undefined ? "Usage limit" : windowLabel(window)
  return {
    kind: "rejected",
    reason: overage ? "overage" : "window",
    ...(window === undefined ? {} : { window }),
    ...(resetsAt === undefined ? {} : { resetsAt }),
    ...(entry === undefined ? {} : { entry }),
    message:
      resetsAt !== undefined
        ? `${label} reached; it resets at ${resetsAt}.`
        : `${label} reached; no reset time was reported.`,
  }
}

/** Does this fact stop work? Only a native rejection does (and only its result ends the run). */
export const blocks = (fact: QuotaFact): fact is Extract<QuotaFact, { kind: "rejected" }> =>
  fact.kind === "rejected"

/** A rejection as the mapper signals it to the session (which emits `usage_blocked`). */
export type Rejection = Extract<QuotaFact, { kind: "rejected" }>

/** The native rejection of a rate_limit_event, if any (covered overage and grace alone are none). */
export const rejectionOf = (info: RateLimitInfo): Rejection | undefined => {
  const fact = quotaFactOf(info)
  return blocks(fact) ? fact : undefined
}

/**
 * The plan's usage limits shown to an ACP client (ACP has no update of its
 * own for them; `usage_update` is the context window's): a warning with a
 * meter before a window's limit, once per window and reset time. The
 * figures themselves ride on `usage_update`'s `_meta.claudeCode.rateLimits`
 * (updates.ts); a rejection is the run's `usage_blocked` error.
 */
import type { UsageLimits, UsageWindow } from "../../sdk/protocol.ts"
import type { Update, UpdateState } from "./update-state.ts"

/** The share of a window from which the client is warned. */
export const WARN_AT = 0.8
const METER_CELLS = 20

/** `███████████████░░░░░`: the share used, in cells. */
export const meter = (used: number): string => {
  const filled = Math.round(Math.max(0, Math.min(1, used)) * METER_CELLS)
  return `${"█".repeat(filled)}${"░".repeat(METER_CELLS - filled)}`
}

/** " · resets 2026-11-29 21:53 UTC", or nothing when the time is unknown. */
const resetText = (resetsAt: string | undefined): string => {
  const at = resetsAt === undefined ? undefined : new Date(resetsAt)
  if (at === undefined || Number.isNaN(at.getTime())) return ""
  return ` · resets ${at.toISOString().slice(0, 10)} ${at.toISOString().slice(11, 16)} UTC`
}

/** One window's warning line: what is used of which limit, and when it resets. */
export const warningLine = (window: UsageWindow): string =>
  `${window.label}: ${Math.round(window.used * 100)}% used${resetText(window.resets_at)}`

/**
 * The windows to warn of now: at or past WARN_AT and not yet rejected (a
 * rejection is reported by the run), each once until it resets.
 */
export const windowsToWarn = (state: UpdateState, limits: UsageLimits): UsageWindow[] =>
  limits.windows.filter((w) => {
    if (w.used < WARN_AT || w.status === "rejected") return false
    const key = `${w.id}@${w.resets_at ?? ""}`
    if (state.warned.has(key)) return false
    state.warned.add(key)
    return true
  })

/** The warnings as the client shows them: `notice` updates (the meter below the title) when declared, else chat lines. */
export const limitWarnings = (
  state: UpdateState,
  limits: UsageLimits,
  show: { readonly notice: (text: string) => Update; readonly note: (text: string) => Update },
): Update[] =>
  windowsToWarn(state, limits).map((w) =>
    state.client.notices
      ? show.notice(`${warningLine(w)}\n\`${meter(w.used)}\``)
      : show.note(`⚠ ${warningLine(w)} \`${meter(w.used)}\``),
  )

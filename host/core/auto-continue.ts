/**
 * Continue at the reset, for front ends (the terminal chat, the ACP server):
 * when a run ends blocked by a usage limit with a known deadline and the
 * person opted in, show the time left and send one "continue" when the
 * window reopens.
 *
 * Rules (issue 17, beyond the product notes):
 * - only a run that `usage_blocked` names, after its `RunEnded`, with a
 *   `resets_at` (never `credits_required`, which has no timed reset);
 * - only when the run's `recovery_identity` is identified (an API key, an
 *   external token or unproven evidence is held with its reason), unless the
 *   person opted in for unidentified accounts too (`"any"`);
 * - only if nothing else was sent to the session meanwhile (`sent` cancels);
 * - at most once per blocked run; a timer never outlives `dispose`.
 */
import type { AgentEvent, RecoveryIdentity } from "../../sdk/protocol.ts"

/** "identified": only an identified account; "any": also unidentified ones (the person's choice). */
export type AutoContinueMode = "off" | "identified" | "any"

export interface AutoContinueOptions {
  readonly mode: AutoContinueMode
  /** Send the continue prompt to the session. */
  readonly send: (sessionId: string, text: string) => void | Promise<void>
  /** Something for the person to read (scheduled, held, sent, cancelled). */
  readonly notify?: (sessionId: string, text: string) => void
  /** Extra wait after the deadline, so the window has really reopened (default 1 s). */
  readonly marginMs?: number
  readonly text?: string
  readonly now?: () => number
}

export type AutoContinueStatus =
  | { readonly state: "scheduled"; readonly at: number; readonly leftMs: number }
  | { readonly state: "held"; readonly reason: string }

interface Blocked {
  readonly runId: string
  readonly resetsAt: number | undefined
  readonly reason: string | undefined
  ended: boolean
  identity: RecoveryIdentity | undefined
  timer: ReturnType<typeof setTimeout> | undefined
  at: number | undefined
  done: boolean
  held: string | undefined
}

export const CONTINUE_TEXT = "continue"

/** A flag's value (`--auto-continue`): off when absent; undefined when it is none of off, identified (or on), any. */
export const parseAutoContinueMode = (value: string | undefined): AutoContinueMode | undefined =>
  value === undefined || value === "off"
    ? "off"
    : value === "any"
      ? "any"
      : value === "on" || value === "identified"
        ? "identified"
        : undefined

/** "in 1 h 5 min", "in 42 s": the time left, for a status line. */
export const timeLeft = (ms: number): string => {
  const s = Math.max(0, Math.ceil(ms / 1000))
  if (s < 60) return `in ${s} s`
  const min = Math.ceil(s / 60)
  return min < 60 ? `in ${min} min` : `in ${Math.floor(min / 60)} h ${min % 60} min`
}

export const makeAutoContinue = (options: AutoContinueOptions) => {
  const now = options.now ?? Date.now
  const margin = options.marginMs ?? 1000
  const text = options.text ?? CONTINUE_TEXT
  const blocked = new Map<string, Blocked>()
  const notify = (sessionId: string, message: string) => options.notify?.(sessionId, message)

  const hold = (sessionId: string, b: Blocked, reason: string) => {
    if (b.held === reason) return
    b.held = reason
    notify(sessionId, `Not continuing automatically: ${reason}.`)
  }

  const arm = (sessionId: string, b: Blocked) => {
    if (!b.ended || b.done || b.timer !== undefined) return
    if (b.reason === "credits_required")
      return hold(sessionId, b, "credits are required, there is no timed reset")
    if (b.resetsAt === undefined) return hold(sessionId, b, "no reset time was reported")
    if (b.identity === undefined) return // its identity is on its way
    if (!b.identity.identified && options.mode !== "any")
      return hold(sessionId, b, `the account is not identified (${b.identity.reason})`)
    const at = b.resetsAt + margin
    b.at = at
    b.held = undefined
    b.timer = setTimeout(() => fire(sessionId, b), Math.max(0, at - now()))
    notify(sessionId, `Continuing automatically at ${new Date(at).toISOString()} (${timeLeft(at - now())}).`)
  }

  const fire = (sessionId: string, b: Blocked) => {
    b.timer = undefined
    if (b.done || blocked.get(sessionId) !== b) return
    b.done = true
    blocked.delete(sessionId)
    notify(sessionId, "The usage window reopened: continuing.")
    void Promise.resolve(options.send(sessionId, text)).catch((error: unknown) =>
      notify(sessionId, `The automatic continue failed: ${String(error)}`),
    )
  }

  const cancel = (sessionId: string, why: string) => {
    const b = blocked.get(sessionId)
    if (!b) return
    blocked.delete(sessionId)
    if (b.timer !== undefined) {
      clearTimeout(b.timer)
      notify(sessionId, `Automatic continue cancelled: ${why}.`)
    }
  }

  return {
    /** Every event of the sessions this front end shows. */
    onEvent: (event: AgentEvent): void => {
      if (options.mode === "off") return
      const sid = event.session_id
      const b = blocked.get(sid)
      switch (event.type) {
        case "usage_blocked": {
          cancel(sid, "the session was blocked again")
          const resetsAt = event.resets_at === undefined ? undefined : Date.parse(event.resets_at)
          blocked.set(sid, {
            runId: event.run_id,
            resetsAt: resetsAt === undefined || Number.isNaN(resetsAt) ? undefined : resetsAt,
            reason: event.reason,
            ended: false,
            identity: undefined,
            timer: undefined,
            at: undefined,
            done: false,
            held: undefined,
          })
          return
        }
        case "recovery_identity":
          if (b && event.run_id === b.runId) {
            b.identity = event.identity
            arm(sid, b)
          }
          return
        case "RunEnded":
          if (b && event.run_id === b.runId) {
            b.ended = true
            arm(sid, b)
          }
          return
        default:
          return
      }
    },
    /** The person (or anything else) sent to the session: a pending continue would repeat it. */
    sent: (sessionId: string): void => cancel(sessionId, "something else was sent"),
    status: (sessionId: string): AutoContinueStatus | undefined => {
      const b = blocked.get(sessionId)
      if (!b) return undefined
      if (b.at !== undefined) return { state: "scheduled", at: b.at, leftMs: Math.max(0, b.at - now()) }
      return b.held === undefined ? undefined : { state: "held", reason: b.held }
    },
    dispose: (): void => {
      for (const b of blocked.values()) if (b.timer !== undefined) clearTimeout(b.timer)
      blocked.clear()
    },
  }
}

export type AutoContinue = ReturnType<typeof makeAutoContinue>

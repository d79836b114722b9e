/**
 * The turn around the messages: init and state, the run's end and its usage,
 * compaction, usage limits, retries and compaction failures.
 *
 * Rules (CLI 2.1.332, product notes "Decisions"):
 * - the context window comes from `modelUsage[<the session's model>]`, not
 *   the largest window of any model; the context used is the main chat's last
 *   message usage;
 * - `compact_boundary` comes before its summary (a synthetic user frame), or
 *   after an `isCompactSummary` one: both orders give one Compacted, and a
 *   boundary with no summary gives it at `result`;
 * - a rate limit is an event for the host and a signal for the session (which
 *   blocks the run on a rejection; only the `result` ends it);
 * - usage reaches the run only as finite numbers (context_used included),
 *   and the CLI's error texts only as bounded excerpts;
 * - the run's stop reason is the main chat's last `message_delta`'s, else
 *   its last whole message's, else the result's (which, after the CLI's
 *   max_tokens retries, names its own error message's `stop_sequence`);
 *   a max_tokens or refusal end is the model's answer, not a failure.
 */
import { excerpt } from "../bounds.ts"
import { limitsFromRateLimitEvent } from "../limits.ts"
import { rejectionOf } from "./quota.ts"
import type { RunUsage } from "../sdk/protocol.ts"
import { stringsOf } from "../values.ts"
import type {
  ApiRetry,
  CompactBoundary,
  RateLimitEvent,
  ResultFrame,
  SessionStateChanged,
  SystemInit,
  SystemStatus,
  Usage,
} from "../wire.ts"
import { noteMainModel } from "./context-window.ts"
import { forgetAtTurnEnd } from "./forget.ts"
import { emit, type MapState, type Out, type Reducer, signal } from "./state.ts"

/** A main-chat message starts streaming: its usage so far. */
export const noteStreamStart = (s: MapState, usage: Usage, messageId: string | undefined): void => {
  s.turn.lastUsage = usage
  s.turn.lastUsageMessage = messageId
}

/** A main-chat message's usage grows. */
export const noteStreamDelta = (s: MapState, usage: Usage): void => {
  s.turn.lastUsage = { ...s.turn.lastUsage, ...usage }
}

/** A main-chat message's `message_delta` says why the model stopped: the API's own word, it wins. */
export const noteStreamStop = (s: MapState, reason: string | null | undefined): void => {
  if (reason) s.turn.stopReason = reason
}

/**
 * A whole main-chat message's `stop_reason`: kept only while no delta said
 * one this turn (2.1.332 streams every API message; its own error message
 * after the last max_tokens retry is a whole message saying `stop_sequence`).
 */
export const noteMessageStop = (s: MapState, reason: string | null | undefined): void => {
  if (reason && s.turn.stopReason === undefined) s.turn.stopReason = reason
}

/**
 * The model's own stops: 2.1.332 retries a max_tokens answer three times and
 * a refusal once, then ends the turn with its own "API Error: …" message, a
 * `success` result with `is_error` and `terminal_reason: api_error`. That is
 * the model's answer, not a failure of the run: Completed, with the reason.
 */
const MODEL_STOPS: ReadonlySet<string> = new Set(["max_tokens", "refusal"])

/** A main-chat `assistant` frame: its usage, unless its message already streamed some. */
export const noteAssistantUsage = (
  s: MapState,
  messageId: string,
  usage: Usage | null | undefined,
  model?: string | null,
): void => {
  noteMainModel(s, model)
  if (usage && s.turn.lastUsageMessage !== messageId) {
    s.turn.lastUsage = usage
    s.turn.lastUsageMessage = messageId
  }
}

const contextWindow = (s: MapState, frame: ResultFrame): number | undefined => {
  const usage = frame.modelUsage
  if (!usage) return undefined
  const model = s.model
  const keys = Object.keys(usage)
  const key =
    model === undefined
      ? keys.length === 1
        ? keys[0]
        : undefined
      : (keys.find((k) => k === model) ??
        keys.find((k) => k.startsWith(model) || model.startsWith(k)) ??
        (keys.length === 1 ? keys[0] : undefined))
  const entry = key === undefined ? undefined : usage[key]
  const window =
    typeof entry === "object" && entry !== null
      ? (entry as { contextWindow?: unknown }).contextWindow
      : undefined
  return typeof window === "number" ? window : undefined
}

/** A failed result's errors kept for its run's end (each an excerpt): the first few explain it. */
const MAX_ERRORS = 5

/** A token count as the protocol has it: a finite number, else nothing (wire.ts checks; this never trusts). */
const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) ? value : undefined

const runUsage = (s: MapState, frame: ResultFrame): RunUsage => {
  const u = frame.usage ?? {}
  const last = s.turn.lastUsage
  const used =
    last === undefined
      ? undefined
      : (count(last.input_tokens) ?? 0) +
        (count(last.cache_read_input_tokens) ?? 0) +
        (count(last.cache_creation_input_tokens) ?? 0) +
        (count(last.output_tokens) ?? 0)
  // Filled in place, in the order the protocol lists them: a result comes every turn.
  const usage: { -readonly [K in keyof RunUsage]: RunUsage[K] } = {
    input_tokens: count(u.input_tokens) ?? 0,
    output_tokens: count(u.output_tokens) ?? 0,
  }
  const put = (key: Exclude<keyof RunUsage, "input_tokens" | "output_tokens">, value: unknown): void => {
    const n = count(value)
    if (n !== undefined) usage[key] = n
  }
  put("cache_read_tokens", u.cache_read_input_tokens)
  put("cache_write_tokens", u.cache_creation_input_tokens)
  put("thinking_tokens", u.output_tokens_details?.thinking_tokens)
  put("context_window", contextWindow(s, frame))
  put("context_used", used)
  put("cost_usd", frame.total_cost_usd)
  put("duration_ms", frame.duration_ms)
  put("num_turns", frame.num_turns)
  return usage
}

export const onResult: Reducer<ResultFrame> = (s, frame, out) => {
  // The main chat's last message's reason first: the result's is the CLI's error message's after retries.
  // --max-turns reached: the CLI's limit is why the run stopped, whatever its last message said.
  const stopReason =
    frame.subtype === "error_max_turns" ? "max_turns" : s.turn.stopReason || frame.stop_reason || undefined
  s.turn.stopReason = undefined
  const modelStop = stopReason !== undefined && MODEL_STOPS.has(stopReason) && frame.subtype === "success"
  if (s.turn.compactPending) {
    s.turn.compactPending = false
    emit(s, out, undefined, { type: "Compacted", summary: s.turn.pendingSummary ?? "" })
    s.turn.pendingSummary = undefined
  }
  signal(out, {
    type: "result",
    subtype: frame.subtype,
    isError: !modelStop && (frame.is_error === true || frame.subtype !== "success"),
    usage: runUsage(s, frame),
    // The CLI's own text, of any length: RunEnded.error and notices carry an excerpt.
    errors: (frame.errors ?? []).slice(0, MAX_ERRORS).map((error) => excerpt(error)),
    userMessageUuids: frame.user_message_uuids ?? (frame.user_message_uuid ? [frame.user_message_uuid] : []),
    ...(typeof frame.result === "string" ? { text: excerpt(frame.result) } : {}),
    ...(stopReason ? { stopReason } : {}),
  })
  forgetAtTurnEnd(s)
}

export const onRateLimit: Reducer<RateLimitEvent> = (s, frame, out) => {
  const limits = limitsFromRateLimitEvent(frame.rate_limit_info)
  const rejected = rejectionOf(frame.rate_limit_info)
  emit(s, out, undefined, { type: "UsageLimits", limits })
  signal(out, { type: "usage_limits", limits, ...(rejected === undefined ? {} : { rejected }) })
}

/** Each skill's name (a string, or an object's `name`): a loop, as init comes every turn with long lists. */
const skillNames = (skills: ReadonlyArray<unknown> | null | undefined): string[] => {
  const names: string[] = []
  if (!skills) return names
  for (const skill of skills)
    if (typeof skill === "string") names.push(skill)
    else {
      const name = (skill as { name?: unknown } | null)?.name
      if (typeof name === "string") names.push(name)
    }
  return names
}

export const onInit: Reducer<SystemInit> = (s, frame, out) => {
  s.model = frame.model
  signal(out, {
    type: "init",
    model: frame.model,
    cliSessionId: frame.session_id ?? "",
    ...(frame.permissionMode ? { permissionMode: frame.permissionMode } : {}),
    tools: stringsOf(frame.tools),
    skills: skillNames(frame.skills),
    slashCommands: stringsOf(frame.slash_commands),
  })
}

export const onState: Reducer<SessionStateChanged> = (_s, frame, out) => {
  signal(out, { type: "state", state: frame.state })
}

export const onStatus: Reducer<SystemStatus> = (s, frame, out) => {
  if (frame.compact_result !== "failed") return
  const message = frame.compact_error
    ? `Compaction failed: ${excerpt(frame.compact_error)}`
    : "Compaction failed."
  emit(s, out, undefined, { type: "Notice", level: "error", text: message })
  signal(out, { type: "compact_failed", message })
}

export const onCompactBoundary: Reducer<CompactBoundary> = (s, _frame, out) => {
  if (s.turn.pendingSummary !== undefined) {
    emit(s, out, undefined, { type: "Compacted", summary: s.turn.pendingSummary })
    s.turn.pendingSummary = undefined
  } else s.turn.compactPending = true
}

export interface MainUserFrame {
  readonly isSynthetic?: boolean | null
  readonly isCompactSummary?: boolean | null
}

/**
 * A main-chat user message that is no tool result: a compaction summary
 * (before or after its boundary); anything else is the host's own prompt, a
 * replay or a notification, which the mapper leaves alone.
 */
export const onMainUserText = (s: MapState, out: Out, frame: MainUserFrame, text: string): void => {
  if (!(frame.isCompactSummary === true || (frame.isSynthetic === true && s.turn.compactPending))) return
  if (s.turn.compactPending) {
    s.turn.compactPending = false
    emit(s, out, undefined, { type: "Compacted", summary: text })
  } else s.turn.pendingSummary = text
}

export const onApiRetry: Reducer<ApiRetry> = (s, frame, out) => {
  const status = typeof frame.error_status === "number" ? ` ${frame.error_status}` : ""
  const attempt =
    typeof frame.attempt === "number"
      ? ` (attempt ${frame.attempt}${typeof frame.max_retries === "number" ? ` of ${frame.max_retries}` : ""})`
      : ""
  emit(s, out, undefined, {
    type: "Notice",
    level: "warning",
    text: `API error${status}; retrying${attempt}.`,
  })
}

/**
 * The silence watchdog of one process: a turn that sends no frame for longer
 * than the CLI itself would wait is stuck, and its owner is told once.
 *
 * What 2.1.332 does (probed offline against the scripted model): a request
 * whose answer never starts is given up after `API_TIMEOUT_MS` and retried,
 * each retry announced by `system/api_retry` with its `retry_delay_ms`; a
 * stream that stalls after `message_start` is waited on for ever, frame-less.
 * So a run with no frame for `API_TIMEOUT_MS` plus a grace (plus the delay
 * of a retry just announced) is past every bound the CLI keeps.
 *
 * Not silence: a tool call the CLI runs (a foreground Bash writes nothing
 * until it ends; `task_started` appears only after about 3 s), an approval
 * or question waiting for the user, no run open. A subagent's own model
 * requests are watched like the main one's (its forwarded frames are its
 * activity), so the spawning Agent call does not count as a tool running.
 */
import { Clock, Effect } from "effect"
import type { Frame } from "../wire.ts"

/** The CLI's own default for `API_TIMEOUT_MS` (one request's wait for an answer). */
export const CLI_API_TIMEOUT_MS = 600_000

/** How long a run may stay silent: the CLI's API timeout and a grace of half of it, at most 30 s more. */
export const silenceBound = (apiTimeoutMs: number): number =>
  apiTimeoutMs + Math.min(30_000, apiTimeoutMs / 2)

/** `API_TIMEOUT_MS` as the CLI reads it: a positive integer, else its default. */
export const apiTimeoutOf = (value: string | undefined): number => {
  const parsed = value === undefined ? Number.NaN : Number(value.trim())
  return Number.isFinite(parsed) && parsed > 0 ? parsed : CLI_API_TIMEOUT_MS
}

/** Tools whose call is a subagent's model conversation, watched through its own frames. */
const SUBAGENT_TOOLS = new Set(["Agent", "Task"])

export interface SilenceWatch {
  /** Every frame of the process, before it is routed. */
  readonly onFrame: (frame: Frame) => void
  /** Tool calls the CLI is running now (their ids). */
  readonly runningTools: () => ReadonlySet<string>
  /** The watchdog loop: run it on a fiber of the process's scope. */
  readonly loop: Effect.Effect<void>
}

export interface SilenceOptions {
  readonly silenceMs: number
  /** A run is open and no approval or question waits for the user. */
  readonly watching: () => boolean
  /** The run has been silent `silentMs`; called once per silence. */
  readonly onSilent: (silentMs: number) => Effect.Effect<void>
}

const blocksOf = (frame: Frame): ReadonlyArray<Record<string, unknown>> => {
  const message = (frame as { message?: { content?: unknown } }).message
  const content = message?.content
  return Array.isArray(content) ? content.filter((b) => b !== null && typeof b === "object") : []
}

export const makeSilenceWatch = (options: SilenceOptions): SilenceWatch => {
  let activity = 0
  let retryDelayMs = 0
  const tools = new Set<string>()

  const onFrame = (frame: Frame) => {
    activity++
    retryDelayMs = 0
    const record = frame as Record<string, unknown>
    if (frame.type === "result") tools.clear()
    else if (frame.type === "system" && record.subtype === "api_retry") {
      const delay = Number(record.retry_delay_ms)
      retryDelayMs = Number.isFinite(delay) && delay > 0 ? delay : 0
    } else if (frame.type === "assistant")
      for (const block of blocksOf(frame)) {
        if (
          block.type === "tool_use" &&
          typeof block.id === "string" &&
          !SUBAGENT_TOOLS.has(String(block.name))
        )
          tools.add(block.id)
      }
    else if (frame.type === "user")
      for (const block of blocksOf(frame))
        if (block.type === "tool_result" && typeof block.tool_use_id === "string")
          tools.delete(block.tool_use_id)
  }

  const loop = Effect.gen(function* () {
    const tick = Math.max(20, Math.floor(options.silenceMs / 8))
    let seen = activity
    let since = yield* Clock.currentTimeMillis
    while (true) {
      yield* Effect.sleep(tick)
      const now = yield* Clock.currentTimeMillis
      if (seen !== activity || tools.size > 0 || !options.watching()) {
        seen = activity
        since = now
        continue
      }
      if (now - since < options.silenceMs + retryDelayMs) continue
      yield* options.onSilent(now - since)
      since = now
    }
  })

  return { onFrame, runningTools: () => tools, loop }
}

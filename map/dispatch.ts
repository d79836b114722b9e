/**
 * Which reducer reads which frame: one table over the known frame types and
 * one over the known system subtypes, both checked by the compiler to name
 * every member of wire.ts's unions (a type or subtype added there fails to
 * compile here until it has a decision; `ignore` is one). Frames wire.ts does
 * not know reach no reducer.
 */
import { isKnownFrame, type Frame, type KnownFrame, type KnownSystemFrame } from "../wire.ts"
import { onTaskNotification, onTaskProgress, onTaskStarted, onTaskUpdated } from "./agents.ts"
import { onInformational } from "./calls.ts"
import { onAssistant, onUser } from "./messages.ts"
import type { MapState, Out, Reducer } from "./state.ts"
import { onStreamEvent } from "./stream.ts"
import { onApiRetry, onCompactBoundary, onInit, onRateLimit, onResult, onState, onStatus } from "./turn.ts"

/** A frame the mapper reads and deliberately leaves alone. */
const ignore: Reducer<unknown> = () => {}

type SystemSubtype = KnownSystemFrame["subtype"]
type SystemReducers = { readonly [K in SystemSubtype]: Reducer<Extract<KnownSystemFrame, { subtype: K }>> }

const system = {
  init: onInit,
  session_state_changed: onState,
  status: onStatus,
  compact_boundary: onCompactBoundary,
  informational: onInformational,
  task_started: onTaskStarted,
  task_progress: onTaskProgress,
  task_updated: onTaskUpdated,
  task_notification: onTaskNotification,
  api_retry: onApiRetry,
  // Estimates while thinking streams; the result's usage counts.
  thinking_tokens: ignore,
  // The denial already reached the host as our own can_use_tool answer.
  permission_denied: ignore,
  // The task frames tell each task's state.
  background_tasks_changed: ignore,
  // Titles come from the stored transcript (NOTES.md, "Live titles").
  session_title_changed: ignore,
} satisfies SystemReducers

type FrameType = KnownFrame["type"]
type FrameReducers = { readonly [K in FrameType]: Reducer<Extract<KnownFrame, { type: K }>> }

const onSystem: Reducer<KnownSystemFrame> = (s, frame, out) =>
  (system[frame.subtype] as Reducer<KnownSystemFrame>)(s, frame, out)

const frames = {
  stream_event: onStreamEvent,
  assistant: onAssistant,
  user: onUser,
  result: onResult,
  rate_limit_event: onRateLimit,
  system: onSystem,
  // Elapsed time only: not shown as output (NOTES.md, "Gaps").
  tool_progress: ignore,
  // The session's own: control requests, their answers and cancellations.
  control_request: ignore,
  control_response: ignore,
  control_cancel_request: ignore,
} satisfies FrameReducers

/** Map one frame into `out`. */
export const dispatch = (s: MapState, frame: Frame, out: Out): void => {
  if (!isKnownFrame(frame)) return
  ;(frames[frame.type] as Reducer<KnownFrame>)(s, frame, out)
}

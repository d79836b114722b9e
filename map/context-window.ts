/**
 * Which model's `modelUsage` entry gives the run's context window: the model
 * of the last main-conversation assistant message (product notes,
 * "Decisions"), which follows a `set_model` inside a turn, where `system/init`
 * and the launch option still name the old one. Subagents' messages never
 * count (a roomier subagent model would over-report), nor the CLI's own
 * `<synthetic>` messages (API errors, interrupts), which ran on no model.
 */
import type { MapState } from "./state.ts"

/** A main-chat assistant message ran on `model`: the context window is now that model's. */
export const noteMainModel = (s: MapState, model: string | null | undefined): void => {
  if (typeof model === "string" && model !== "" && !model.startsWith("<")) s.model = model
}

/**
 * Frames a newer CLI sends that this plugin does not read (a type, or a
 * system subtype, that wire.ts does not name): each is counted by its name
 * and logged once, at its first sighting, never once per frame (2.1.332
 * already writes `command_lifecycle` three times a prompt). They still reach
 * the mapper, which ignores them.
 */
import { Effect } from "effect"
import type { LogShape } from "../sdk/plugin-api.ts"
import { type Frame, isKnownFrame } from "../wire.ts"

export interface UnknownFrames {
  /** Count `frame` if this plugin does not read its kind; log the first of each kind. */
  readonly note: (frame: Frame) => Effect.Effect<void>
  /** How many frames of each unread kind arrived (`type`, or `system/<subtype>`). */
  readonly counts: () => ReadonlyMap<string, number>
}

/** The name an unread frame is counted under. */
export const unknownKindOf = (frame: Frame): string | undefined => {
  if (isKnownFrame(frame)) return undefined
  const type: string = frame.type
  return type === "system" ? `system/${String(frame.subtype)}` : type
}

export const makeUnknownFrames = (log: LogShape, sid: string): UnknownFrames => {
  const counts = new Map<string, number>()
  return {
    note: (frame) =>
      Effect.suspend(() => {
        const kind = unknownKindOf(frame)
        if (kind === undefined) return Effect.void
        const seen = counts.get(kind) ?? 0
        counts.set(kind, seen + 1)
        return seen === 0
          ? log.info(
              `claude session ${sid}: Claude Code sent a frame this plugin does not read (${kind}); further ones are counted, not logged`,
            )
          : Effect.void
      }),
    counts: () => counts,
  }
}

/**
 * Pickup evidence per input: when the CLI really took a written prompt or
 * steer to the model. Plain state fed every stdout frame by the router and
 * every write by the prompt path; it answers with `input_delivery` reports.
 *
 * Evidence (CLI 2.1.332, checked live, see NOTES.md "Pickup evidence"):
 * - a correlated first reply: a main-chat `stream_event` or `assistant`
 *   frame naming the input in `user_message_uuid(s)`, or the first main-chat
 *   reply after a `system/status requesting` whose `user_message_uuids` list
 *   it (a steer's reply frames do not name it; the request that carried it does);
 * - native `system/thinking_tokens` answering such a request;
 * - a `result` with model work (`begun_message_ids` or output tokens) that
 *   lists it in `user_message_uuids`.
 * Never evidence: the stdin write itself, a replayed user line, the CLI's
 * `<synthetic>` assistant message (its own error text), a
 * `command_lifecycle` or `status` frame alone, a ping, a child (subagent) frame.
 *
 * An input ends once: `picked_up`; `not_picked_up` when the CLI ended it
 * without model work (a zero-work result that lists it, as at a rate-limit
 * rejection, or `command_lifecycle cancelled`); `unknown` when its process
 * ended first (a stored user record would prove a write, not consumption).
 * A reported input is forgotten, so a later frame naming it (a finished
 * alias) never reports it again or in another run; a write of an input
 * already reported (a replay racing its exit) is not tracked again.
 *
 * A replay (session/replay.ts) moves an input to the next process: `hold`
 * takes it out of the dying process's reckoning, then `written` (the
 * re-write reached the new process) or `release` (it never did) ends the
 * hold; so an input is reported once, by the process that last had it.
 */
import { z } from "zod"
import type { AgentEvent, PickupEvidence } from "../sdk/protocol.ts"

export interface WrittenInput {
  readonly uuid: string
  readonly deliveryId: string | undefined
  readonly runId: string
}

export interface DeliveryReport {
  readonly input: WrittenInput
  readonly state: "picked_up" | "not_picked_up" | "unknown"
  readonly evidence?: PickupEvidence
  readonly reason?: string
}

/** The few correlation fields read, only while an input waits (the hot path parses nothing). */
const Correlation = z.looseObject({
  type: z.string(),
  subtype: z.string().nullish(),
  status: z.unknown().optional(),
  state: z.unknown().optional(),
  parent_tool_use_id: z.string().nullish(),
  isReplay: z.boolean().nullish(),
  user_message_uuid: z.string().nullish(),
  user_message_uuids: z.array(z.string()).nullish(),
  command_uuid: z.string().nullish(),
  begun_message_ids: z.array(z.string()).nullish(),
  usage: z.looseObject({ output_tokens: z.number().nullish() }).nullish(),
  message: z.looseObject({ model: z.string().nullish() }).nullish(),
})
type Correlation = z.infer<typeof Correlation>

export interface PickupTracker {
  /** An input was written to the CLI's stdin (not evidence of anything yet). */
  readonly written: (input: WrittenInput) => void
  /** A write that failed: nothing reached the CLI, so nothing is owed about it. */
  readonly withdraw: (uuid: string) => void
  /** A replay will write this input to the next process: its process's end does not report it (false: not waiting). */
  readonly hold: (uuid: string) => boolean
  /** A held input the replay could not write: nothing proves its delivery. */
  readonly release: (uuid: string, reason: string) => DeliveryReport[]
  /** One stdout frame: the reports it proves. */
  readonly onFrame: (frame: unknown) => DeliveryReport[]
  /** The process ended (or was stopped): every input still waiting is unknown; held ones too when the session ends. */
  readonly processEnded: (reason: string, alsoHeld?: boolean) => DeliveryReport[]
  /** The inputs still waiting for evidence. */
  readonly waiting: () => ReadonlyArray<WrittenInput>
}

const namesOf = (frame: Correlation): string[] => [
  ...(frame.user_message_uuids ?? []),
  ...(frame.user_message_uuid ? [frame.user_message_uuid] : []),
]

const hasModelWork = (frame: Correlation): boolean =>
  (frame.begun_message_ids?.length ?? 0) > 0 || (frame.usage?.output_tokens ?? 0) > 0

/** How many reported uuids are remembered, so a late re-write is not tracked twice (a replay races one exit). */
const REPORTED_KEPT = 256

export const makePickupTracker = (): PickupTracker => {
  const pending = new Map<string, WrittenInput>()
  const held = new Map<string, WrittenInput>()
  const reported = new Set<string>()
  const remember = (uuid: string) => {
    reported.add(uuid)
    if (reported.size > REPORTED_KEPT) reported.delete(reported.values().next().value as string)
  }
  // The inputs the request in flight carries (its `status requesting`), until a reply or a result.
  let requested: string[] = []

  const settle = (
    uuids: Iterable<string>,
    state: DeliveryReport["state"],
    extra: { evidence?: PickupEvidence; reason?: string },
  ): DeliveryReport[] => {
    const out: DeliveryReport[] = []
    for (const uuid of uuids) {
      const input = pending.get(uuid)
      if (input === undefined) continue
      pending.delete(uuid)
      remember(uuid)
      out.push({ input, state, ...extra })
    }
    return out
  }

  const reply = (frame: Correlation, evidence: PickupEvidence): DeliveryReport[] => {
    const carried = [...requested, ...namesOf(frame)]
    requested = []
    return settle(carried, "picked_up", { evidence })
  }

  const onFrame = (raw: unknown): DeliveryReport[] => {
    if (pending.size === 0) return []
    const parsed = Correlation.safeParse(raw)
    if (!parsed.success) return []
    const frame = parsed.data
    // A subagent's frames say nothing about the main model taking an input.
    if (frame.parent_tool_use_id) return []
    switch (frame.type) {
      case "system":
        if (frame.subtype === "status" && frame.status === "requesting") {
          requested = namesOf(frame)
          return []
        }
        return frame.subtype === "thinking_tokens" ? reply(frame, "thinking_tokens") : []
      case "assistant":
        // The CLI's own error text (a rate-limit rejection) comes as a `<synthetic>` message: no model spoke.
        return frame.message?.model === "<synthetic>" ? [] : reply(frame, "reply")
      case "stream_event":
        return reply(frame, "reply")
      case "result": {
        requested = []
        return hasModelWork(frame)
          ? settle(namesOf(frame), "picked_up", { evidence: "result" })
          : settle(namesOf(frame), "not_picked_up", {
              reason: "the turn ended before the model worked on it",
            })
      }
      case "command_lifecycle":
        return frame.state === "cancelled" && frame.command_uuid
          ? settle([frame.command_uuid], "not_picked_up", { reason: "Claude Code dropped it unanswered" })
          : []
      default:
        // user lines (replays among them), pings and everything else prove nothing.
        return []
    }
  }

  return {
    written: (input) => {
      held.delete(input.uuid)
      if (!reported.has(input.uuid)) pending.set(input.uuid, input)
    },
    withdraw: (uuid) => void pending.delete(uuid),
    hold: (uuid) => {
      const input = pending.get(uuid)
      if (input === undefined) return false
      pending.delete(uuid)
      held.set(uuid, input)
      return true
    },
    release: (uuid, reason) => {
      const input = held.get(uuid)
      if (input === undefined) return []
      held.delete(uuid)
      remember(uuid)
      return [{ input, state: "unknown", reason }]
    },
    onFrame,
    processEnded: (reason, alsoHeld = false) => {
      requested = []
      if (alsoHeld) {
        for (const [uuid, input] of held) pending.set(uuid, input)
        held.clear()
      }
      return settle([...pending.keys()], "unknown", { reason })
    },
    waiting: () => [...pending.values()],
  }
}

/** The host event of one report, under the run in flight (a continuation's), else the input's own. */
export const deliveryEvent = (
  sid: string,
  report: DeliveryReport,
  currentRun: string | undefined,
): AgentEvent => ({
  type: "input_delivery",
  session_id: sid,
  run_id: currentRun ?? report.input.runId,
  input_uuid: report.input.uuid,
  ...(report.input.deliveryId ? { delivery_id: report.input.deliveryId } : {}),
  state: report.state,
  ...(report.evidence ? { evidence: report.evidence } : {}),
  ...(report.reason ? { reason: report.reason } : {}),
})

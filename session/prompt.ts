/**
 * One prompt written to a session's process. It opens a run, or steers the
 * run in flight (`priority: "next"`, joining that run); it is in the durable
 * record (session/undelivered.ts) and the pickup tracker before its write,
 * and a write that finds the process gone is written once more to a new
 * process (session/replay.ts, same uuid and delivery id).
 */
import { Effect } from "effect"
import type { Broker } from "../sdk/plugin-api.ts"
import type { PromptAccepted, PromptParams } from "../sdk/protocol.ts"
import type { ConversationStart } from "./conversation.ts"
import type { PickupTracker } from "./pickup.ts"
import type { ProcessKeeper } from "./process.ts"
import type { UnreadReplay } from "./replay.ts"
import type { RunLedger } from "./runs.ts"
import { type UndeliveredRecord, undeliveredEntry } from "./undelivered.ts"

/** The stream-json user frame for one input. */
export const userFrame = (
  content: ReadonlyArray<unknown>,
  uuid: string,
  priority?: "next",
): Record<string, unknown> => ({
  type: "user",
  message: { role: "user", content },
  parent_tool_use_id: null,
  uuid,
  session_id: "",
  ...(priority ? { priority } : {}),
})

/** A prompt's content blocks when the owner gives no other: its images, then its text. */
export const defaultContent = (params: PromptParams): ReadonlyArray<unknown> => [
  ...(params.images ?? []).map((image) => ({
    type: "image",
    source: { type: "base64", media_type: image.media_type, data: image.data },
  })),
  ...(params.text !== "" || !params.images?.length ? [{ type: "text", text: params.text }] : []),
]

export interface PromptParts {
  readonly processes: ProcessKeeper
  readonly runs: RunLedger
  readonly pickup: PickupTracker
  readonly undelivered: UndeliveredRecord
  readonly replays: UnreadReplay
  readonly conversation: ConversationStart
  /** The owner's after-launch work, for a process this prompt started. */
  readonly afterLaunch: (fresh: boolean) => Effect.Effect<void, never, Broker>
  /** The content blocks of a prompt. */
  readonly content: (params: PromptParams) => ReadonlyArray<unknown>
  /** The owner's hook: a prompt was written (its host item id and native UUID). */
  readonly sent:
    | ((input: {
        readonly itemId: string | undefined
        readonly uuid: string
        readonly cliId: string
      }) => Effect.Effect<void, never, Broker>)
    | undefined
}

/** Write one prompt (the caller holds the session's admission). */
export const makePrompt = (parts: PromptParts) => {
  const { processes, runs, pickup, undelivered, replays, conversation } = parts
  return Effect.fn("claude.session.prompt")(function* (params: PromptParams) {
    const { proc, fresh } = yield* processes.ensure
    yield* parts.afterLaunch(fresh)
    const uuid = crypto.randomUUID()
    const running = runs.current()
    const steering = running !== undefined && !running.cancelling
    const current = steering ? running : yield* runs.open(params.deliveryId ? [params.deliveryId] : [])
    // A steer's delivery id joins the run that reports consuming it (user_message_uuids).
    runs.sent({ uuid, deliveryId: params.deliveryId, runId: current.id })
    yield* undelivered.add(undeliveredEntry(uuid, params.deliveryId, current.id))
    pickup.written({ uuid, deliveryId: params.deliveryId, runId: current.id })
    const content = parts.content(params)
    const input = { uuid, deliveryId: params.deliveryId, run: current, frame: userFrame(content, uuid) }
    yield* replays.write(proc, input, steering ? userFrame(content, uuid, "next") : undefined)
    const cliId = conversation.current().cliId
    conversation.written()
    if (parts.sent) yield* parts.sent({ itemId: params.itemId, uuid, cliId })
    return { run_id: current.id, steered: steering, input_uuid: uuid } satisfies PromptAccepted
  })
}

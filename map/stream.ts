/**
 * Text and reasoning as they stream: `stream_event` deltas keyed
 * `<message id>:<block index>`, and the block counting that gives an
 * `assistant` frame's blocks the same keys.
 *
 * Rules (CLI 2.1.332):
 * - every content block arrives as its own `assistant` frame sharing the
 *   message id, with the block at array position 0, so blocks are counted per
 *   message id to find their real index;
 * - a key the stream delivered is never emitted again from the whole frame;
 * - subagents get no stream; a streamed frame under a call asks tasks.ts which
 *   task it is in (streaming never declares one itself);
 * - only the main chat's usage counts toward the context used.
 */
import type { StreamEvent } from "../wire.ts"
import { emit, type MapState, type Out, type Reducer, type StreamSlice } from "./state.ts"
import { namesRetired, noteTurnMessage } from "./forget.ts"
import { taskOfFrame } from "./tasks.ts"
import { noteStreamStop, noteStreamDelta, noteStreamStart } from "./turn.ts"

/** Messages whose block counts and stream keys are kept; past this the oldest half is forgotten. */
export const MAX_MESSAGES = 4096

/**
 * Forget the oldest half of a per-message map (Maps keep insertion order).
 * Only a new message makes a map grow past the bound, and it is the newest
 * entry: the message at hand is never among those forgotten.
 */
const forgetOldest = <V>(byMessage: Map<string, V>, forgotten?: (id: string) => void): void => {
  let drop = MAX_MESSAGES / 2
  for (const id of byMessage.keys()) {
    if (drop-- <= 0) break
    byMessage.delete(id)
    forgotten?.(id)
  }
}

/** The stream delivered block `index` of `messageId`. */
export const markStreamed = (stream: StreamSlice, messageId: string, index: number): void => {
  const blocks = stream.streamed.get(messageId)
  if (blocks !== undefined) {
    blocks.add(index)
    return
  }
  stream.streamed.set(messageId, new Set([index]))
  if (stream.streamed.size > MAX_MESSAGES) forgetOldest(stream.streamed)
}

/** Whether the stream delivered block `index` of `messageId` (then the whole block is not emitted again). */
export const wasStreamed = (stream: StreamSlice, messageId: string, index: number): boolean =>
  stream.streamed.get(messageId)?.has(index) === true

/**
 * The index of the first of `count` blocks of `messageId` just seen (the
 * blocks before it were seen in earlier frames). Old messages are done: past
 * `MAX_MESSAGES` the oldest half is forgotten with their stream keys, and
 * only theirs (the message at hand keeps its own, else its streamed text
 * would be emitted again from its whole blocks).
 */
export const countBlocks = (stream: StreamSlice, messageId: string, count: number): number => {
  const { blockCounts, streamed } = stream
  const base = blockCounts.get(messageId) ?? 0
  blockCounts.set(messageId, base + count)
  if (blockCounts.size > MAX_MESSAGES) forgetOldest(blockCounts, (id) => streamed.delete(id))
  return base
}

type Body = StreamEvent["event"]

/** A content block event's kind: of a text or a thinking block, else undefined (tool input, signatures). */
const kindOf = (event: Body): "text" | "thinking" | undefined => {
  if (event.type === "content_block_start") {
    const type = event.content_block?.type
    return type === "text" || type === "thinking" ? type : undefined
  }
  const type = event.delta?.type
  return type === "text_delta" ? "text" : type === "thinking_delta" ? "thinking" : undefined
}

/** The text a content block event of that kind carries (a start may hold the first piece). */
const textOf = (event: Body, kind: "text" | "thinking"): string | null | undefined => {
  if (event.type === "content_block_start") {
    const block = event.content_block as Record<string, unknown>
    const text = kind === "thinking" ? block.thinking : block.text
    return typeof text === "string" ? text : undefined
  }
  return kind === "thinking" ? event.delta?.thinking : event.delta?.text
}

export const onStreamEvent: Reducer<StreamEvent> = (s, frame, out) => {
  const event = frame.event
  const scope = frame.parent_tool_use_id ?? ""
  switch (event.type) {
    case "message_start": {
      const id = event.message?.id ?? frame.api_message_id
      if (id) s.stream.streamMessage.set(scope, id)
      if (scope === "" && event.message?.usage) noteStreamStart(s, event.message.usage, id ?? undefined)
      return
    }
    case "content_block_start":
    case "content_block_delta":
      return onBlockEvent(s, frame, out, scope)
    case "message_delta":
      if (scope !== "") return
      if (event.usage) noteStreamDelta(s, event.usage)
      noteStreamStop(s, event.delta?.stop_reason)
      return
  }
}

/** A text or thinking block starting, or a delta of one. */
const onBlockEvent = (s: MapState, frame: StreamEvent, out: Out, scope: string): void => {
  const event = frame.event
  const messageId = frame.api_message_id ?? s.stream.streamMessage.get(scope)
  if (messageId === undefined || typeof event.index !== "number") return
  const kind = kindOf(event)
  if (kind === undefined) return
  markStreamed(s.stream, messageId, event.index)
  if (scope === "") noteTurnMessage(s, messageId)
  const text = textOf(event, kind)
  if (!text || namesRetired(s, frame)) return
  const taskId = frame.parent_tool_use_id
    ? taskOfFrame(s, out, {
        parent_tool_use_id: frame.parent_tool_use_id,
        task_description: frame.task_description,
        subagent_type: frame.subagent_type,
      })
    : undefined
  emit(s, out, taskId, {
    type: kind === "thinking" ? "ReasoningDelta" : "TextDelta",
    item_id: `${messageId}:${event.index}`,
    text,
  })
}

/**
 * A session long enough to reach the mapper's forgetting: past
 * `MAX_MESSAGES` messages the oldest block counts and stream keys go, and
 * the message at hand must keep its own (else its streamed text is emitted a
 * second time from its `assistant` frames). Frames are shaped as CLI 2.1.332
 * sends them: the stream's deltas, then each block as its own `assistant`
 * frame at position 0.
 */
import { describe, expect, it } from "vitest"
import { makeMapper } from "../map.ts"
import { newMapState } from "./state.ts"
import { countBlocks, MAX_MESSAGES, markStreamed, wasStreamed } from "./stream.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { decodeLine, type Frame } from "../wire.ts"

const frame = (value: Record<string, unknown>): Frame => {
  const d = decodeLine(JSON.stringify(value))
  if (d.kind !== "frame") throw new Error(d.kind === "error" ? d.message : "blank")
  return d.frame
}

const BLOCKS = 5

/** One main-chat message of `BLOCKS` text blocks: streamed, then each block whole. */
const message = (n: number): Frame[] => {
  const id = `msg_${n}`
  const stream = (event: Record<string, unknown>) =>
    frame({ type: "stream_event", event, parent_tool_use_id: null, api_message_id: id })
  const frames = [
    stream({ type: "message_start", message: { id, usage: { input_tokens: 1, output_tokens: 1 } } }),
  ]
  for (let b = 0; b < BLOCKS; b++) {
    frames.push(stream({ type: "content_block_start", index: b, content_block: { type: "text", text: "" } }))
    frames.push(
      stream({ type: "content_block_delta", index: b, delta: { type: "text_delta", text: `m${n}b${b}` } }),
    )
  }
  for (let b = 0; b < BLOCKS; b++)
    frames.push(
      frame({
        type: "assistant",
        message: { id, role: "assistant", content: [{ type: "text", text: `m${n}b${b}` }] },
        parent_tool_use_id: null,
      }),
    )
  return frames
}

describe("a long session", () => {
  it("emits every streamed block's text once, also when old messages are forgotten", () => {
    const mapper = makeMapper({ sessionId: "s" })
    const texts = new Map<string, string>()
    const count = MAX_MESSAGES + 8
    for (let n = 0; n < count; n++)
      for (const f of message(n))
        for (const e of mapper.map(f, "run").events as AgentEvent[])
          if (e.type === "TextDelta") texts.set(e.item_id, (texts.get(e.item_id) ?? "") + e.text)
    expect(texts.size).toBe(count * BLOCKS)
    const twice = [...texts].filter(([key, text]) => {
      const [n, b] = key.replace("msg_", "").split(":")
      return text !== `m${n}b${b}`
    })
    expect(twice).toEqual([])
  })

  it("keeps the stream keys bounded when messages stream but never arrive whole", () => {
    const { stream } = newMapState("s")
    for (let n = 0; n < MAX_MESSAGES * 3; n++) markStreamed(stream, `msg_${n}`, 0)
    expect(stream.streamed.size).toBeLessThanOrEqual(MAX_MESSAGES)
    expect(wasStreamed(stream, `msg_${MAX_MESSAGES * 3 - 1}`, 0)).toBe(true)
    expect(wasStreamed(stream, "msg_0", 0)).toBe(false)
  })

  it("forgets the stream keys of forgotten messages, and only theirs", () => {
    const { stream } = newMapState("s")
    for (let n = 0; n <= MAX_MESSAGES; n++) {
      markStreamed(stream, `msg_${n}`, 0)
      countBlocks(stream, `msg_${n}`, 1)
    }
    // The last countBlocks went past the bound: the oldest half went, keys and counts alike.
    expect(stream.blockCounts.size).toBe(MAX_MESSAGES / 2 + 1)
    expect(wasStreamed(stream, "msg_0", 0)).toBe(false)
    expect(wasStreamed(stream, `msg_${MAX_MESSAGES}`, 0)).toBe(true)
    expect(stream.streamed.size).toBe(stream.blockCounts.size)
  })
})

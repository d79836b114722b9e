/**
 * The run's stop reason (map/turn.ts): the main chat's last `message_delta`
 * wins over a whole message's and the result's (2.1.332's result after its
 * max_tokens retries names its own error message's `stop_sequence`); a
 * subagent's stops never count; a max_tokens or refusal end is no failure;
 * nothing carries over to the next turn.
 */
import { describe, expect, it } from "vitest"
import { makeMapper, type Signal } from "../map.ts"
import { decodeLine, type Frame } from "../wire.ts"

const frame = (value: Record<string, unknown>): Frame => {
  const d = decodeLine(JSON.stringify(value))
  if (d.kind !== "frame") throw new Error(d.kind === "error" ? d.message : "blank")
  return d.frame
}
const delta = (reason: string, parent: string | null = null) =>
  frame({
    type: "stream_event",
    event: {
      type: "message_delta",
      delta: { stop_reason: reason, stop_sequence: null },
      usage: { output_tokens: 3 },
    },
    parent_tool_use_id: parent,
  })
const whole = (reason: string | null, text = "API Error: the limit") =>
  frame({
    type: "assistant",
    message: { id: "msg_x", role: "assistant", content: [{ type: "text", text }], stop_reason: reason },
    parent_tool_use_id: null,
  })
const result = (fields: Record<string, unknown> = {}) =>
  frame({ type: "result", subtype: "success", is_error: false, usage: {}, ...fields })

const endOf = (frames: Frame[]) => {
  const m = makeMapper({ sessionId: "s" })
  const ends: Array<Extract<Signal, { type: "result" }>> = []
  for (const f of frames)
    for (const signal of m.map(f, "r").signals) if (signal.type === "result") ends.push(signal)
  return ends
}

describe("the run's stop reason", () => {
  it("is max_turns when the CLI stopped at --max-turns, a failed run", () => {
    const [end] = endOf([delta("tool_use"), result({ subtype: "error_max_turns", is_error: true })])
    expect(end).toMatchObject({ stopReason: "max_turns", isError: true })
  })

  it("is the last main-chat delta's, over a whole message's and the result's", () => {
    const [end] = endOf([
      delta("tool_use"),
      delta("max_tokens"),
      whole("stop_sequence"),
      result({ is_error: true, stop_reason: "stop_sequence" }),
    ])
    expect(end?.stopReason).toBe("max_tokens")
    // The model's stop, after the CLI's retries: not a failed run.
    expect(end?.isError).toBe(false)
  })

  it("falls back to a whole message's, then the result's; a subagent's delta never counts", () => {
    expect(endOf([whole("refusal"), result({ is_error: true, stop_reason: "refusal" })])[0]).toMatchObject({
      stopReason: "refusal",
      isError: false,
    })
    expect(
      endOf([delta("max_tokens", "toolu_agent"), result({ stop_reason: "end_turn" })])[0]?.stopReason,
    ).toBe("end_turn")
    expect(endOf([result()])[0]?.stopReason).toBeUndefined()
  })

  it("keeps an error an error: a stop_sequence end, or a failed subtype with max_tokens", () => {
    expect(
      endOf([whole("stop_sequence"), result({ is_error: true, stop_reason: "stop_sequence" })])[0]?.isError,
    ).toBe(true)
    expect(
      endOf([delta("max_tokens"), result({ subtype: "error_during_execution", is_error: true })])[0]?.isError,
    ).toBe(true)
  })

  it("starts again each turn", () => {
    const ends = endOf([delta("max_tokens"), result({ is_error: true }), whole(null, "fine"), result()])
    expect(ends.map((e) => e.stopReason)).toEqual(["max_tokens", undefined])
  })
})

/** wire/repair.ts on hand-made frames: the smallest part dropped, unions, depth, glued lines. */
import { describe, expect, it } from "vitest"
import { MAX_DEPTH } from "../bounds.ts"
import { decodeLine, decodeValue } from "../wire.ts"
import { dropTooDeep, mayNestTooDeep, splitGlued } from "./repair.ts"

describe("repair to fit", () => {
  it("drops one bad content block, not the message (the union follows the array option)", () => {
    const d = decodeValue({
      type: "assistant",
      message: { id: "m", content: [{ type: "text", text: "kept" }, { text: "no type" }, 7] },
    })
    expect(d.kind).toBe("frame")
    if (d.kind !== "frame") return
    expect(d.problem).toMatch(/^assistant: dropped message\.content\.1 .*message\.content\.2/)
    expect((d.frame as { message: { content: unknown } }).message.content).toEqual([
      { type: "text", text: "kept" },
    ])
  })

  it("drops an optional object whose required field is missing, and keeps the rest", () => {
    const d = decodeValue({
      type: "stream_event",
      event: { type: "content_block_start", index: 0, content_block: { id: "x" } },
      api_message_id: "m",
    })
    expect(d.kind === "frame" && d.problem).toMatch(/event\.content_block/)
    expect(d.kind === "frame" && (d.frame as { event: object }).event).toEqual({
      type: "content_block_start",
      index: 0,
    })
  })

  it("fails the frame whole only for a required field of its own", () => {
    expect(decodeValue({ type: "result", subtype: 7 }).kind).toBe("error")
    expect(decodeValue({ type: "assistant", message: { content: 5 } }).kind).toBe("error")
  })
})

describe("depth", () => {
  it("drops what nests past the bound and keeps its siblings", () => {
    let deep: unknown = 1
    for (let i = 0; i < MAX_DEPTH + 5; i++) deep = { a: deep }
    const frame = { type: "x", keep: { y: 1 }, deep }
    expect(dropTooDeep(frame)).toHaveLength(1)
    expect(frame.keep).toEqual({ y: 1 })
    expect(() => JSON.stringify(frame)).not.toThrow()
  })

  it("gates on the count of openers", () => {
    expect(mayNestTooDeep('{"a":[1,2,{"b":3}]}')).toBe(false)
    expect(mayNestTooDeep(`${"[".repeat(MAX_DEPTH)}${"]".repeat(MAX_DEPTH)}`)).toBe(true)
    // A parsed text's openers all close: one shorter than twice the bound is never scanned.
    expect(mayNestTooDeep(`${"[".repeat(MAX_DEPTH - 1)}${"]".repeat(MAX_DEPTH - 1)}`)).toBe(false)
  })
})

describe("glued frames", () => {
  it("splits at top-level boundaries, braces inside strings included", () => {
    expect(splitGlued('{"a":"}{"} {"b":["]"]}')).toEqual(['{"a":"}{"}', '{"b":["]"]}'])
    expect(splitGlued('{"a":1}')).toBeUndefined()
    expect(splitGlued('{"a":1}x{"b":2}')).toBeUndefined()
    const d = decodeLine('{"type":"x"}{"type":"system","subtype":"init"}')
    expect(d.kind === "frames" && d.frames.length).toBe(1)
    expect(d.kind === "frames" && d.problem).toMatch(/^2 frames on one line; system\/init: .*model/)
  })
})

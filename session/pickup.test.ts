/**
 * Pickup evidence per frame kind, over the CLI's recorded frames
 * (testdata/, CLI 2.1.332) and the steer shapes seen live (NOTES.md,
 * "Pickup evidence"): what proves an input reached the model, and what never does.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { makePickupTracker, type WrittenInput } from "./pickup.ts"

const lines = (scenario: string, file = "stdout.jsonl") =>
  readFileSync(join(import.meta.dirname, "..", "testdata", scenario, file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)

const writtenOf = (scenario: string): WrittenInput[] =>
  lines(scenario, "stdin.jsonl")
    .filter((f) => f.type === "user")
    .map((f, i) => ({ uuid: String(f.uuid), deliveryId: `d${i + 1}`, runId: `run-${i}` }))

const U1 = "11111111-1111-4111-8111-111111111111"
const U2 = "22222222-2222-4222-8222-222222222222"
const input = (uuid: string, runId = "run-0"): WrittenInput => ({ uuid, deliveryId: undefined, runId })

describe("pickup evidence", () => {
  it("a correlated first reply proves a prompt, before its result (text_thinking)", () => {
    const tracker = makePickupTracker()
    const [first, second] = writtenOf("text_thinking")
    tracker.written(first!)
    const frames = lines("text_thinking")
    const at = frames.findIndex((f) => tracker.onFrame(f).some((r) => r.state === "picked_up"))
    expect(frames[at]?.type).toBe("stream_event")
    expect(frames.slice(at).some((f) => f.type === "result")).toBe(true)
    expect(tracker.waiting()).toEqual([])
    tracker.written(second!)
    const reports = frames.slice(at + 1).flatMap((f) => tracker.onFrame(f))
    expect(reports.map((r) => [r.input.uuid, r.state, r.evidence])).toEqual([
      [second!.uuid, "picked_up", "reply"],
    ])
  })

  it("a zero-work result reports not picked up; status requesting alone is no evidence (rate_limit)", () => {
    const tracker = makePickupTracker()
    const [first] = writtenOf("rate_limit")
    tracker.written(first!)
    const frames = lines("rate_limit")
    const result = frames.findIndex((f) => f.type === "result")
    for (const f of frames.slice(0, result)) expect(tracker.onFrame(f)).toEqual([])
    expect(frames.slice(0, result).some((f) => f.subtype === "status" && f.status === "requesting")).toBe(
      true,
    )
    expect(tracker.onFrame(frames[result])).toMatchObject([{ input: first, state: "not_picked_up" }])
  })

  it("a steer is proven by the first reply to the request that carried it", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.written(input(U2))
    // Seen live: the steered request's replies name only the first input; its `status requesting` names both.
    expect(
      tracker.onFrame({
        type: "system",
        subtype: "status",
        status: "requesting",
        user_message_uuids: [U1, U2],
      }),
    ).toEqual([])
    const reports = tracker.onFrame({
      type: "stream_event",
      parent_tool_use_id: null,
      event: { type: "message_start" },
    })
    expect(reports.map((r) => [r.input.uuid, r.evidence])).toEqual([
      [U1, "reply"],
      [U2, "reply"],
    ])
  })

  it("native thinking tokens answering a request prove what it carried", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U2))
    tracker.onFrame({ type: "system", subtype: "status", status: "requesting", user_message_uuids: [U1, U2] })
    expect(
      tracker.onFrame({ type: "system", subtype: "thinking_tokens", user_message_uuid: U1 }),
    ).toMatchObject([{ input: { uuid: U2 }, state: "picked_up", evidence: "thinking_tokens" }])
  })

  it("a result with model work proves every input it lists (merged user_message_uuids)", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.written(input(U2))
    const reports = tracker.onFrame({
      type: "result",
      subtype: "success",
      user_message_uuid: U1,
      user_message_uuids: [U1, U2],
      begun_message_ids: ["msg_mock_0001", "msg_mock_0002"],
    })
    expect(reports.map((r) => [r.input.uuid, r.state, r.evidence])).toEqual([
      [U1, "picked_up", "result"],
      [U2, "picked_up", "result"],
    ])
  })

  it("never takes a write, a replay, a lifecycle line, a ping or a child frame for a pickup", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    const replay = lines("compact").find((f) => f.type === "user" && f.isReplay === true)
    const child = lines("subagent_foreground").find(
      (f) => f.type === "assistant" && typeof f.parent_tool_use_id === "string",
    )
    expect(replay).toBeDefined()
    expect(child).toBeDefined()
    for (const frame of [
      replay,
      { ...child, user_message_uuids: [U1] },
      {
        type: "stream_event",
        parent_tool_use_id: "toolu_1",
        user_message_uuid: U1,
        event: { type: "message_start" },
      },
      { type: "user", uuid: U1, message: { role: "user", content: "hi" } },
      { type: "command_lifecycle", command_uuid: U1, state: "queued" },
      { type: "command_lifecycle", command_uuid: U1, state: "started" },
      { type: "keep_alive" },
      { type: "system", subtype: "status", status: "requesting", user_message_uuids: [U1] },
      { type: "system", subtype: "init", user_message_uuids: [U1] },
      "not a frame",
    ])
      expect(tracker.onFrame(frame)).toEqual([])
    expect(tracker.waiting().map((i) => i.uuid)).toEqual([U1])
  })

  it("an input the CLI dropped is not picked up; one whose process ended is unknown", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.written(input(U2))
    expect(
      tracker.onFrame({ type: "command_lifecycle", command_uuid: U1, state: "cancelled" }),
    ).toMatchObject([{ input: { uuid: U1 }, state: "not_picked_up" }])
    expect(tracker.processEnded("gone")).toMatchObject([
      { input: { uuid: U2 }, state: "unknown", reason: "gone" },
    ])
    expect(tracker.waiting()).toEqual([])
  })

  it("a finished alias stays with its old report: a later frame naming it reports nothing", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    expect(tracker.onFrame({ type: "stream_event", user_message_uuids: [U1], event: {} })).toHaveLength(1)
    tracker.written(input(U2, "run-1"))
    expect(
      tracker.onFrame({
        type: "result",
        subtype: "success",
        user_message_uuids: [U1],
        begun_message_ids: ["m"],
      }),
    ).toEqual([])
    expect(tracker.waiting().map((i) => i.uuid)).toEqual([U2])
  })

  it("a held input (a replay) is left out of its process's end, and tracked again once re-written", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.written(input(U2))
    expect(tracker.hold(U1)).toBe(true)
    expect(tracker.processEnded("gone").map((r) => [r.input.uuid, r.state])).toEqual([[U2, "unknown"]])
    expect(tracker.onFrame({ type: "stream_event", user_message_uuids: [U1], event: {} })).toEqual([])
    tracker.written(input(U1))
    expect(tracker.processEnded("gone again")).toMatchObject([{ input: { uuid: U1 }, state: "unknown" }])
  })

  it("a held input the replay could not write is released as unknown, once", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.hold(U1)
    expect(tracker.release(U1, "not written")).toMatchObject([
      { input: { uuid: U1 }, state: "unknown", reason: "not written" },
    ])
    expect(tracker.release(U1, "not written")).toEqual([])
    tracker.written(input(U1))
    expect(tracker.waiting()).toEqual([])
  })

  it("an input already reported is not tracked again when written once more (a replay racing its exit)", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    expect(tracker.processEnded("gone")).toHaveLength(1)
    expect(tracker.hold(U1)).toBe(false)
    tracker.written(input(U1))
    expect(tracker.onFrame({ type: "stream_event", user_message_uuids: [U1], event: {} })).toEqual([])
    expect(tracker.waiting()).toEqual([])
  })

  it("the session's end reports held inputs too (a replay that will never run)", () => {
    const tracker = makePickupTracker()
    tracker.written(input(U1))
    tracker.written(input(U2))
    tracker.hold(U1)
    expect(tracker.processEnded("closed", true).map((r) => [r.input.uuid, r.state])).toEqual([
      [U2, "unknown"],
      [U1, "unknown"],
    ])
    expect(tracker.release(U1, "late")).toEqual([])
  })
})

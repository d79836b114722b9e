/**
 * The faults issue 13 found in the mapper and its decoder, each as the frame
 * that caused it, through `decodeLine` and the mapper as the session runs
 * them: a poisoned usage, a time no Date can hold, mistyped fields, nesting
 * past any stack, glued frames. Each failed before the fix.
 */
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { makeMapper, type MapOutput, type Signal } from "../map.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { decodeLine, decodeValue } from "../wire.ts"

const recorded = (scenario: string) =>
  readFileSync(`testdata/${scenario}/stdout.jsonl`, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")

/** A JSON text of arrays nested `depth` deep (no JSON.stringify could write it: it recurses). */
const nested = (depth: number): string => `${"[".repeat(depth)}1${"]".repeat(depth)}`
const DEEP = '"__deep__"'

/** Every line through decodeLine and one mapper: the outputs, and how many lines gave a problem. */
const run = (lines: ReadonlyArray<string>) => {
  const mapper = makeMapper({ sessionId: "s" })
  const outs: MapOutput[] = []
  let problems = 0
  for (const line of lines) {
    const d = decodeLine(line)
    if (d.kind === "error" || ((d.kind === "frame" || d.kind === "frames") && d.problem !== undefined))
      problems++
    const frames = d.kind === "frame" ? [d.frame] : d.kind === "frames" ? d.frames : []
    for (const frame of frames) outs.push(mapper.map(frame, "run"))
  }
  const events: AgentEvent[] = outs.flatMap((o) => o.events)
  const results = outs
    .flatMap((o) => o.signals)
    .filter((s): s is Extract<Signal, { type: "result" }> => s.type === "result")
  return { events, results, problems }
}

/** The recording with `bad` put in place of its first message_delta (the frame it mutates). */
const withBadDelta = (scenario: string, usage: unknown, deep = "") => {
  const lines = recorded(scenario)
  const at = lines.findIndex((l) => l.includes('"message_delta"'))
  const frame = JSON.parse(lines[at] as string)
  frame.event.usage = usage
  return [...lines.slice(0, at), JSON.stringify(frame).replace(DEEP, deep), ...lines.slice(at + 1)]
}

describe("the mapper is total", () => {
  it("a message_delta whose usage is nested 100,000 deep poisons no later result", () => {
    const { results, problems } = run(
      withBadDelta("text_thinking", { input_tokens: "__deep__" }, nested(100_000)),
    )
    expect(problems).toBe(1)
    expect(results.length).toBeGreaterThan(1)
    for (const r of results) expect(typeof r.usage.context_used).toBe("number")
  })

  it("a usage that is a string leaves context_used a number", () => {
    const { results, problems } = run(withBadDelta("text_thinking", "lots"))
    expect(problems).toBe(1)
    for (const r of results) {
      expect(typeof r.usage.context_used).toBe("number")
      expect(Number.isFinite(r.usage.context_used)).toBe(true)
    }
  })

  it("a resetsAt of 1e309 (Infinity) or 1e300 keeps the rate-limit frame and its other windows", () => {
    for (const huge of ["1e309", "1e300"]) {
      const line = recorded("rate_limit")
        .find((l) => l.includes('"rate_limit_event"'))
        ?.replace('"resetsAt":1795989231,"rateLimitType"', `"resetsAt":${huge},"rateLimitType"`) as string
      expect(line).toContain(huge)
      const { events } = run([line])
      const limits = events.find((e) => e.type === "UsageLimits")
      expect(limits?.type === "UsageLimits" && limits.limits.windows.map((w) => w.id)).toEqual([
        "five_hour",
        "seven_day",
        "overage",
      ])
      if (limits?.type === "UsageLimits")
        for (const w of limits.limits.windows)
          if (w.resets_at !== undefined) expect(Number.isNaN(Date.parse(w.resets_at))).toBe(false)
    }
  })

  it("a text delta whose text is a number is dropped with one diagnostic; the frame's other fields stay", () => {
    const lines = recorded("text_thinking")
    const at = lines.findIndex((l) => l.includes('"thinking_delta"'))
    const frame = JSON.parse(lines[at] as string)
    frame.event.delta.thinking = 42
    const d = decodeLine(JSON.stringify(frame))
    expect(d.kind).toBe("frame")
    expect(d.kind === "frame" && d.problem).toMatch(/event\.delta\.thinking/)
    const { events } = run([...lines.slice(0, at), JSON.stringify(frame), ...lines.slice(at + 1)])
    for (const e of events)
      if (e.type === "TextDelta" || e.type === "ReasoningDelta") expect(typeof e.text).toBe("string")
  })

  it("a tool input nested past any stack reaches the host bounded and serialisable", () => {
    const lines = recorded("bash_allow")
    const at = lines.findIndex((l) => l.includes('"tool_use"') && l.startsWith('{"type":"assistant"'))
    const frame = JSON.parse(lines[at] as string)
    frame.message.content[0].input.deep = "__deep__"
    const line = JSON.stringify(frame).replace(DEEP, nested(200_000))
    const { events, problems } = run([...lines.slice(0, at), line, ...lines.slice(at + 1)])
    expect(problems).toBe(1)
    const started = events.find((e) => e.type === "ToolCallStarted")
    expect(
      started?.type === "ToolCallStarted" && (started.call.input as { command?: unknown }).command,
    ).toBeTypeOf("string")
    for (const e of events) expect(() => JSON.stringify(e)).not.toThrow()
  })

  it("two frames glued on one line both arrive, with one diagnostic", () => {
    const [a, b] = recorded("text_thinking").filter((l) => l.includes('"content_block_delta"'))
    const d = decodeLine(`${a}${b}`)
    expect(d.kind).toBe("frames")
    expect(d.kind === "frames" && d.frames).toHaveLength(2)
    expect(decodeLine(`${a} ${b}`).kind).toBe("frames")
    // Not JSON at all stays one error, glued or not.
    expect(decodeLine(`${a}{"type":`).kind).toBe("error")
  })

  it("a required field of the wrong type still fails its frame whole, with one message", () => {
    const d = decodeValue({ type: "system", subtype: "init", model: 7, session_id: "s" })
    expect(d.kind === "error" && d.message).toMatch(/^system\/init: model/)
  })

  it("a result's huge errors and text reach the run's end as bounded excerpts", () => {
    const huge = "e".repeat(2_000_000)
    const line = JSON.stringify({
      type: "result",
      subtype: "error_during_execution",
      is_error: true,
      result: huge,
      errors: Array(20).fill(huge),
    })
    const { results } = run([line])
    const [r] = results
    expect(r?.errors.length).toBeLessThanOrEqual(5)
    expect(r?.errors.join("; ").length).toBeLessThan(20_000)
    expect(r?.text?.length).toBeLessThan(3_000)
  })
})

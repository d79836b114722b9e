/**
 * The context window follows the model of the last main-conversation
 * assistant message, not `system/init` or the launch option: a `set_model`
 * inside a turn picks the new model's `modelUsage` entry; a subagent's model
 * and the CLI's `<synthetic>` messages never do.
 */
import { describe, expect, it } from "vitest"
import { makeMapper, type Signal } from "../map.ts"
import { decodeLine, type Frame } from "../wire.ts"

const frame = (value: Record<string, unknown>): Frame => {
  const d = decodeLine(JSON.stringify(value))
  if (d.kind !== "frame") throw new Error(d.kind === "error" ? d.message : "blank")
  return d.frame
}

const assistant = (id: string, model: string, parent: string | null = null) =>
  frame({
    type: "assistant",
    message: { id, role: "assistant", model, content: [{ type: "text", text: id }] },
    parent_tool_use_id: parent,
  })

const result = frame({
  type: "result",
  subtype: "success",
  is_error: false,
  usage: { input_tokens: 5, output_tokens: 1 },
  modelUsage: {
    "claude-sonnet-5-5": { contextWindow: 200_000 },
    "claude-opus-5-5": { contextWindow: 1_000_000 },
    "claude-haiku-5-5": { contextWindow: 400_000 },
  },
})

const windowAfter = (frames: ReadonlyArray<Frame>): number | undefined => {
  const mapper = makeMapper({ sessionId: "s", model: "claude-sonnet-5-5" })
  const signals: Signal[] = []
  for (const f of [...frames, result]) signals.push(...mapper.map(f, "run-1").signals)
  const end = signals.find((s) => s.type === "result")
  return end?.type === "result" ? end.usage.context_window : undefined
}

describe("the context window", () => {
  it("is the launch's model until a main-chat message names another", () => {
    expect(windowAfter([])).toBe(200_000)
  })
  it("follows a model change within the turn", () => {
    const init = frame({ type: "system", subtype: "init", model: "claude-sonnet-5-5", session_id: "c" })
    expect(
      windowAfter([init, assistant("m1", "claude-sonnet-5-5"), assistant("m2", "claude-opus-5-5")]),
    ).toBe(1_000_000)
  })
  it("ignores a subagent's model and the CLI's synthetic messages", () => {
    expect(
      windowAfter([
        assistant("m1", "claude-opus-5-5"),
        assistant("m2", "claude-haiku-5-5", "toolu_agent"),
        assistant("m3", "<synthetic>"),
      ]),
    ).toBe(1_000_000)
  })
})

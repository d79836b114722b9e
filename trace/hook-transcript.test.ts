/** The model and CLI version a hook reads from the end of an agent's transcript, and where a subagent's is. */
import { describe, expect, it } from "vitest"
import { agentTranscript, factsOfTail } from "./hook-transcript.ts"

const line = (value: object) => `${JSON.stringify(value)}\n`

describe("factsOfTail", () => {
  it("takes the last assistant line's model and the last version, skipping <synthetic> and bad lines", () => {
    const text = [
      line({ type: "assistant", message: { model: "claude-opus-5-5" }, version: "2.1.281" }),
      line({ type: "assistant", message: { model: "claude-sonnet-5" }, version: "2.1.282" }),
      "{ not json\n",
      line({ type: "assistant", message: { model: "<synthetic>" } }),
      line({ type: "user", version: "2.1.332" }),
    ].join("")
    expect(factsOfTail(text, true)).toEqual({ model: "claude-sonnet-5", version: "2.1.332" })
  })

  it("drops the first piece of a tail that starts inside a line, and knows nothing of an empty one", () => {
    const whole = line({ type: "assistant", message: { model: "claude-opus-5-5" }, version: "2.1.332" })
    expect(factsOfTail(whole.slice(5), false)).toEqual({})
    expect(factsOfTail(whole.slice(5) + whole, false)).toEqual({
      model: "claude-opus-5-5",
      version: "2.1.332",
    })
    expect(factsOfTail("", true)).toEqual({})
  })
})

describe("agentTranscript", () => {
  it("is the session's own for main, and <project>/<session>/subagents/agent-<id>.jsonl for a subagent", () => {
    expect(agentTranscript("/h/.claude/projects/-ws/s1.jsonl", "s1", undefined)).toBe(
      "/h/.claude/projects/-ws/s1.jsonl",
    )
    expect(agentTranscript("/h/.claude/projects/-ws/s1.jsonl", "s1", "a9")).toBe(
      "/h/.claude/projects/-ws/s1/subagents/agent-a9.jsonl",
    )
  })
})

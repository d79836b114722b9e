/** The plain mappings of the ACP front end: options, prompts, questions, MCP servers, stored chats. */
import { describe, expect, it } from "vitest"
import type { AgentInfo } from "../../sdk/protocol.ts"
import { stopReasonOf } from "./agent.ts"
import { mcpConfigOf, mcpEnvSetter } from "./mcp.ts"
import { checkValue, configOptionsOf, modesOf } from "./options.ts"
import { PromptRefused, promptParts } from "./prompt.ts"
import { answerFromOption, answersFromForm, approvalOptions, decisionOf, questionForm } from "./questions.ts"
import { replayUpdates } from "./replay.ts"
import { clientShows, NOTHING_OPTIONAL } from "./update-state.ts"
import { makeUpdateState, updatesOf } from "./updates.ts"

const info: AgentInfo = {
  id: "claude",
  name: "Claude",
  status: "Ready",
  models: [
    { value: "claude-opus-5-5", label: "Opus", aliases: ["opus"], efforts: ["low", "xhigh"] },
    { value: "claude-haiku-5-5", label: "Haiku", aliases: ["haiku"], efforts: ["low"] },
  ],
  options: [
    {
      id: "model",
      label: "Model",
      kind: "select",
      choices: [
        { value: "claude-opus-5-5", label: "Opus" },
        { value: "claude-haiku-5-5", label: "Haiku" },
      ],
      default: "claude-opus-5-5",
    },
    {
      id: "effort",
      label: "Effort",
      kind: "select",
      choices: [
        { value: "low", label: "Low" },
        { value: "xhigh", label: "Extra high" },
        { value: "ultracode", label: "Ultracode" },
      ],
      choicesByModel: {
        "claude-opus-5-5": [
          { value: "low", label: "Low" },
          { value: "xhigh", label: "Extra high" },
          { value: "ultracode", label: "Ultracode" },
        ],
        "claude-haiku-5-5": [{ value: "low", label: "Low" }],
      },
    },
    {
      id: "approval_mode",
      label: "Approvals",
      kind: "select",
      choices: [
        { value: "supervised", label: "Supervised" },
        { value: "full", label: "Full access" },
      ],
      default: "supervised",
    },
    { id: "thinking", label: "Thinking", kind: "toggle", default: true, appliesAtNextStart: true },
  ],
  capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
}

describe("options", () => {
  it("the approval mode is the ACP mode; the rest are config options with their current values", () => {
    expect(modesOf(info, {})).toMatchObject({
      currentModeId: "supervised",
      availableModes: [{ id: "supervised" }, { id: "full" }],
    })
    const config = configOptionsOf(info, { model: "claude-haiku-5-5", thinking: false }, true)
    expect(config.map((o) => [o.id, o.type, o.currentValue])).toEqual([
      ["model", "select", "claude-haiku-5-5"],
      ["effort", "select", "low"],
      ["thinking", "boolean", false],
    ])
    // A client that did not declare boolean options gets a toggle as a select of "true" and "false".
    const plain = configOptionsOf(info, { model: "claude-haiku-5-5", thinking: false })
    expect(plain.find((o) => o.id === "thinking")).toMatchObject({
      type: "select",
      currentValue: "false",
      options: [{ value: "true" }, { value: "false" }],
    })
    // Effort follows the model: ultracode only where the model has xhigh.
    const effort = (model: string) =>
      (
        configOptionsOf(info, { model }).find((o) => o.id === "effort") as {
          options: Array<{ value: string }>
        }
      ).options.map((o) => o.value)
    expect(effort("claude-opus-5-5")).toContain("ultracode")
    expect(effort("claude-haiku-5-5")).toEqual(["low"])
  })

  it("checks values: aliases resolve, unknown values and wrong types are refused", () => {
    expect(checkValue(info, {}, "model", "haiku")).toEqual({ value: "claude-haiku-5-5" })
    expect(checkValue(info, {}, "model", "gpt")).toHaveProperty("error")
    // A toggle takes a boolean or its word (acpx sends "false"); anything else is refused.
    expect(checkValue(info, {}, "thinking", "false")).toEqual({ value: false })
    expect(checkValue(info, {}, "thinking", "On")).toEqual({ value: true })
    expect(checkValue(info, {}, "thinking", "maybe")).toEqual({ error: "thinking takes true or false" })
    // A model with no effort levels says so, not "takes one of" an empty list.
    expect(
      checkValue(
        { ...info, options: [...info.options, { id: "speed", label: "Speed", kind: "select", choices: [] }] },
        { model: "claude-haiku-5-5" },
        "speed",
        "high",
      ),
    ).toEqual({
      error: "speed has no choices for the model claude-haiku-5-5",
    })
    expect(checkValue(info, { model: "claude-haiku-5-5" }, "effort", "ultracode")).toHaveProperty("error")
    expect(checkValue(info, {}, "nope", 1)).toHaveProperty("error")
  })
})

describe("prompts", () => {
  it("joins text, mentions links, quotes embedded text, keeps images", () => {
    const parts = promptParts(
      [
        { type: "text", text: "look at" },
        { type: "resource_link", uri: "file:///w/a.ts", name: "a.ts" },
        { type: "resource", resource: { uri: "file:///w/b.ts", text: "const b = 1" } },
        { type: "image", mimeType: "image/png", data: "iVBOR" },
      ],
      new Set(),
    )
    expect(parts.text).toBe('look at\n@/w/a.ts\n<context ref="/w/b.ts">\nconst b = 1\n</context>')
    expect(parts.images).toEqual([{ media_type: "image/png", data: "iVBOR" }])
  })

  it("a bare /skill is the skill; with arguments, or unknown, it stays text", () => {
    const skills = new Set(["review"])
    expect(promptParts([{ type: "text", text: "/review" }], skills)).toMatchObject({
      skill: "review",
      text: "",
    })
    expect(promptParts([{ type: "text", text: "/review src" }], skills)).toEqual({
      text: "/review src",
      images: [],
    })
    expect(promptParts([{ type: "text", text: "/compact" }], skills)).toEqual({
      text: "/compact",
      images: [],
    })
  })

  it("refuses what it cannot send", () => {
    expect(() => promptParts([{ type: "audio", data: "x", mimeType: "audio/wav" }], new Set())).toThrow(
      PromptRefused,
    )
    expect(() =>
      promptParts(
        [{ type: "resource", resource: { uri: "file:///w/x.bin", blob: "AA", mimeType: "application/zip" } }],
        new Set(),
      ),
    ).toThrow(/binary resource/)
  })
})

describe("approvals and questions", () => {
  it("says what always means, and maps the choice back", () => {
    const options = approvalOptions("Bash", true)
    expect(options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once"])
    expect(options[1]!.name).toMatch(/suggested Bash rule for this project/)
    expect(approvalOptions("Bash", false).map((o) => o.kind)).toEqual(["allow_once", "reject_once"])
    expect(decisionOf({ outcome: "selected", optionId: "allow_always" })).toBe("allow_always")
    expect(decisionOf({ outcome: "cancelled" })).toBe("deny")
  })

  const questions = [
    {
      question: "Which?",
      header: "Pick",
      multi_select: false,
      options: [{ label: "A" }, { label: "B", description: "bee" }],
    },
    { question: "Which ones?", multi_select: true, options: [{ label: "X" }, { label: "Y" }] },
  ]

  it("one form property per question; answers keyed by question text", () => {
    const form = questionForm(questions)
    expect(form.required).toEqual(["q1", "q2"])
    expect(form.properties?.q2).toMatchObject({
      type: "array",
      items: { anyOf: [{ const: "X" }, { const: "Y" }] },
    })
    expect(answersFromForm(questions, { q1: "B", q2: ["X", "Y"] })).toEqual({
      "Which?": "B",
      "Which ones?": ["X", "Y"],
    })
    expect(answersFromForm(questions, { q1: "" })).toEqual({})
  })

  it("a question as permission options: the choice's label, or nothing for skip", () => {
    expect(answerFromOption(questions[0]!, { outcome: "selected", optionId: "choice_1" })).toBe("B")
    expect(answerFromOption(questions[0]!, { outcome: "selected", optionId: "skip" })).toBeUndefined()
  })
})

describe("MCP servers", () => {
  it("passes stdio, http and sse servers as one --mcp-config, refuses other transports", () => {
    const config = mcpConfigOf([
      {
        type: "http",
        name: "docs",
        url: "https://x/mcp",
        headers: [{ name: "Authorization", value: "Bearer t" }],
      },
      { type: "sse", name: "events", url: "https://y/sse", headers: [] },
      { name: "local", command: "/bin/tool", args: ["--serve"], env: [{ name: "TOKEN", value: "t" }] },
      { name: "bare", command: "tool2", args: [], env: [] },
      { type: "acp", name: "inproc", id: "x" } as never,
    ])
    expect(JSON.parse(config.json!)).toEqual({
      mcpServers: {
        docs: { type: "http", url: "https://x/mcp", headers: { Authorization: "Bearer t" } },
        events: { type: "sse", url: "https://y/sse" },
        local: { type: "stdio", command: "/bin/tool", args: ["--serve"], env: { TOKEN: "t" } },
        bare: { type: "stdio", command: "tool2", args: [] },
      },
    })
    expect(config.refused).toEqual(["inproc"])
  })

  it("sets CLAUDE_MCP_CONFIG beside the user's own value, and clears back to it", () => {
    const env: Record<string, string | undefined> = { CLAUDE_MCP_CONFIG: "/home/me/mcp.json" }
    const set = mcpEnvSetter(env)
    set('{"mcpServers":{}}')
    expect(env.CLAUDE_MCP_CONFIG).toBe(`/home/me/mcp.json '{"mcpServers":{}}'`)
    set(undefined)
    expect(env.CLAUDE_MCP_CONFIG).toBe("/home/me/mcp.json")
  })
})

describe("stop reasons", () => {
  const end = (
    outcome: "Completed" | "Cancelled" | "Failed",
    extra: Record<string, unknown> = {},
    cancelled = false,
  ) => ({
    kind: "ended" as const,
    outcome,
    cancelled,
    event: { type: "RunEnded" as const, session_id: "s", run_id: "r", outcome, ...extra },
  })
  it("end_turn, cancelled, and the model's own stop reason where the provider gives one", () => {
    expect(stopReasonOf(end("Completed"))).toBe("end_turn")
    expect(stopReasonOf(end("Cancelled"))).toBe("cancelled")
    expect(stopReasonOf(end("Completed", {}, true))).toBe("cancelled")
    expect(stopReasonOf({ kind: "cancelled" })).toBe("cancelled")
    expect(stopReasonOf(end("Completed", { stop_reason: "max_tokens" }))).toBe("max_tokens")
    expect(stopReasonOf(end("Completed", { stop_reason: "refusal" }))).toBe("refusal")
    // The CLI's --max-turns stop (a failed run to the provider) is the client's max_turn_requests.
    expect(stopReasonOf(end("Failed", { stop_reason: "max_turns" }))).toBe("max_turn_requests")
  })
})

describe("a stored chat replayed", () => {
  it("user and agent turns, a task's call announced then ended, its items nested", () => {
    const updates = [
      ...replayUpdates(makeUpdateState(), [
        { type: "user", id: "u1", text: "hi" },
        { type: "reasoning", id: "r1", text: "thinking" },
        { type: "assistant", id: "a1", text: "hello" },
        {
          type: "tool_call",
          id: "t1",
          call: {
            id: "toolu_1",
            name: "Agent",
            kind: "task",
            title: "Check",
            input: {},
            status: "Completed",
            output_text: "hand-back",
          },
        },
        {
          type: "task",
          id: "toolu_1",
          task: { id: "toolu_1", title: "Check", status: "Completed", summary: "all good" },
          items: [
            { type: "user", id: "u2", text: "sub prompt" },
            {
              type: "tool_call",
              id: "t2",
              call: {
                id: "toolu_2",
                name: "Read",
                kind: "read",
                title: "Read a",
                input: {},
                status: "Completed",
              },
            },
          ],
        },
      ]),
    ]
    expect(updates.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "agent_thought_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
      "tool_call",
      "tool_call_update",
    ])
    const child = updates[5] as { toolCallId: string; _meta?: { claudeCode?: { parentToolUseId?: string } } }
    expect(child.toolCallId).toBe("toolu_2")
    expect(child._meta?.claudeCode?.parentToolUseId).toBe("toolu_1")
    expect(JSON.stringify(updates.at(-1))).toContain("all good")
    expect(JSON.stringify(updates)).not.toContain("hand-back")
  })

  it("a stored call that ended is one tool_call with its status, content, output and exit code", () => {
    const updates = [
      ...replayUpdates(makeUpdateState(), [
        {
          type: "tool_call",
          id: "t1",
          call: {
            id: "toolu_b",
            name: "Bash",
            kind: "execute",
            title: "false",
            input: { command: "false" },
            status: "Failed",
            output: { stdout: "no" },
            output_text: "no",
            exit_code: 1,
          },
        },
        {
          type: "tool_call",
          id: "t2",
          call: {
            id: "toolu_e",
            name: "Edit",
            kind: "edit",
            title: "Edit a.ts",
            input: { file_path: "/w/a.ts", old_string: "a", new_string: "b" },
            status: "Completed",
          },
        },
      ]),
    ]
    expect(updates).toEqual([
      {
        sessionUpdate: "tool_call",
        toolCallId: "toolu_b",
        title: "false",
        kind: "execute",
        status: "failed",
        rawInput: { command: "false" },
        content: [{ type: "content", content: { type: "text", text: "no\n(exit code 1)" } }],
        rawOutput: { stdout: "no" },
        _meta: { claudeCode: { toolName: "Bash", exitCode: 1 } },
      },
      {
        sessionUpdate: "tool_call",
        toolCallId: "toolu_e",
        title: "Edit a.ts",
        kind: "edit",
        status: "completed",
        rawInput: { file_path: "/w/a.ts", old_string: "a", new_string: "b" },
        content: [{ type: "diff", path: "/w/a.ts", oldText: "a", newText: "b" }],
        locations: [{ path: "/w/a.ts" }],
        _meta: { claudeCode: { toolName: "Edit" } },
      },
    ])
  })
})

describe("what a client declared it shows", () => {
  it("nothing optional unless declared: notice, compaction_update, terminal cards", () => {
    expect(clientShows({})).toEqual(NOTHING_OPTIONAL)
    expect(
      clientShows({ session: { notices: {}, compaction: {} }, _meta: { terminal_output: true } }),
    ).toEqual({ notices: true, compaction: true, terminalCards: true })
    // A client that declared nothing gets chat lines, never the optional updates.
    const state = makeUpdateState(clientShows({}))
    const shown = [
      ...updatesOf(state, { type: "Notice", session_id: "s", level: "warning", text: "careful" }),
      ...updatesOf(state, { type: "Compacted", session_id: "s", summary: "" }),
    ]
    expect(shown.map((u) => u.sessionUpdate)).toEqual(["agent_message_chunk", "agent_message_chunk"])
  })
})

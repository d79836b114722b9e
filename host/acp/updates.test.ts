/**
 * Agent events → ACP updates over the recorded CLI 2.1.332 streams in
 * testdata/: each recording's frames go through the plugin's mapper (as a
 * live session does), its events through updates.ts, and the updates are
 * locked in host/acp/testdata/<scenario>.updates.jsonl. Review those files'
 * diffs like code: they are what an ACP client sees.
 */
import { readdirSync, readFileSync } from "node:fs"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makeMapper } from "../../map.ts"
import type { AgentEvent, ToolCall } from "../../sdk/protocol.ts"
import { decodeLine } from "../../wire.ts"
import {
  acpKind,
  diffsOf,
  makeUpdateState,
  noteUsage,
  taskUpdates,
  type Update,
  updatesOf,
} from "./updates.ts"

// The mapper stamps rate limits with the time they were read: hold the clock still.
beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] })
  vi.setSystemTime(new Date("2026-12-01T10:00:00Z"))
})
afterAll(() => {
  vi.useRealTimers()
})

const scenarios = readdirSync("testdata").filter((d) => {
  try {
    return readFileSync(`testdata/${d}/stdout.jsonl`, "utf8").length > 0
  } catch {
    return false
  }
})

/** The recording's agent events, with a RunEnded (and its usage) at each result, as the session adds them. */
const eventsOf = (scenario: string): AgentEvent[] => {
  const mapper = makeMapper({ sessionId: "s" })
  const events: AgentEvent[] = []
  let run = 1
  for (const line of readFileSync(`testdata/${scenario}/stdout.jsonl`, "utf8").split("\n")) {
    if (line.trim() === "") continue
    const decoded = decodeLine(line)
    if (decoded.kind !== "frame") continue
    const out = mapper.map(decoded.frame, `run-${run}`)
    events.push(...out.events)
    for (const signal of out.signals)
      if (signal.type === "result") {
        events.push({
          type: "RunEnded",
          session_id: "s",
          run_id: `run-${run}`,
          outcome: signal.isError ? "Failed" : "Completed",
          usage: signal.usage,
        })
        run++
      }
  }
  return events
}

const updatesFor = (scenario: string): Update[] => {
  const state = makeUpdateState()
  return eventsOf(scenario).flatMap((e) => updatesOf(state, e))
}

const of = <K extends Update["sessionUpdate"]>(updates: Update[], kind: K) =>
  updates.filter((u): u is Extract<Update, { sessionUpdate: K }> => u.sessionUpdate === kind)

const meta = (u: { _meta?: unknown }) =>
  (u._meta as { claudeCode?: Record<string, unknown> } | undefined)?.claudeCode

describe.each(scenarios)("%s, recorded", (scenario) => {
  it("maps to the same ACP updates as before", async () => {
    const lines = updatesFor(scenario).map((u) => JSON.stringify(u))
    await expect(`${lines.join("\n")}\n`).toMatchFileSnapshot(`testdata/${scenario}.updates.jsonl`)
  })

  it("announces every tool call once, before any update of it", () => {
    const seen = new Set<string>()
    for (const u of updatesFor(scenario)) {
      if (u.sessionUpdate === "tool_call") {
        expect(seen.has(u.toolCallId), u.toolCallId).toBe(false)
        seen.add(u.toolCallId)
      }
      if (u.sessionUpdate === "tool_call_update") expect(seen.has(u.toolCallId), u.toolCallId).toBe(true)
    }
  })
})

describe("what the recordings show a client", () => {
  it("text_thinking: thought and message chunks, then usage with the context window and cost", () => {
    const updates = updatesFor("text_thinking")
    expect(of(updates, "agent_thought_chunk").length).toBeGreaterThan(0)
    expect(of(updates, "agent_message_chunk").length).toBeGreaterThan(0)
    const usage = of(updates, "usage_update").at(-1)!
    expect(usage.size).toBe(1_000_000)
    expect(usage.used).toBeGreaterThan(0)
    expect(usage.cost?.currency).toBe("USD")
  })

  it("write_edit: Write as a whole-file diff, Edit as old and new text, both with their path", () => {
    const calls = of(updatesFor("write_edit"), "tool_call").filter((c) => c.kind === "edit")
    const diffs = calls.map((c) => c.content?.[0])
    expect(diffs[0]).toMatchObject({ type: "diff", oldText: null })
    expect(diffs[1]).toMatchObject({ type: "diff" })
    expect((diffs[1] as acp.Diff).oldText).toEqual(expect.any(String))
    for (const c of calls) expect(c.locations?.[0]?.path).toMatch(/^\//)
  })

  it("bash_allow: the command's output and exit code 0 on its end; bash_deny: failed", () => {
    const allow = of(updatesFor("bash_allow"), "tool_call_update").find((u) => meta(u)?.toolName === "Bash")
    expect(allow).toMatchObject({ status: "completed" })
    expect(meta(allow!)?.exitCode).toBe(0)
    const deny = of(updatesFor("bash_deny"), "tool_call_update").find((u) => meta(u)?.toolName === "Bash")
    expect(deny?.status).toBe("failed")
  })

  it("todo: TodoWrite is a plan with every entry's status", () => {
    const plan = of(updatesFor("todo"), "plan").at(-1)!
    expect(plan.entries.length).toBeGreaterThan(0)
    for (const e of plan.entries) expect(["pending", "in_progress", "completed"]).toContain(e.status)
  })

  it("subagent_foreground: the Agent call is a think call and the subagent's calls carry its id", () => {
    const updates = updatesFor("subagent_foreground")
    const agent = of(updates, "tool_call").find((c) => c.kind === "think")!
    const children = of(updates, "tool_call").filter((c) => meta(c)?.parentToolUseId === agent.toolCallId)
    expect(children.length).toBeGreaterThan(0)
    // Subagent text goes into its call, not into the main message stream.
    const taskText = of(updates, "tool_call_update").filter(
      (u) => u.toolCallId === agent.toolCallId && u.content,
    )
    expect(taskText.length).toBeGreaterThan(0)
  })

  it("ask_user: the question is the session's to ask, not an update", () => {
    const events = eventsOf("ask_user")
    expect(events.some((e) => e.type === "QuestionAsked")).toBe(false)
    expect(updatesFor("ask_user").length).toBeGreaterThan(0)
  })

  it("workflow: the Workflow call, its agents as think calls nested under it", () => {
    const calls = of(updatesFor("workflow"), "tool_call")
    expect(calls.find((c) => c.toolCallId === "toolu_wf_1")).toMatchObject({ kind: "think" })
    const nested = calls.filter((c) => meta(c)?.parentToolUseId === "toolu_wf_1")
    expect(nested.map((c) => [c.toolCallId, c.kind])).toEqual([
      ["toolu_wf_1/1", "think"],
      ["toolu_wf_1/2", "think"],
      ["toolu_wf_1/3", "think"],
    ])
  })

  it("a subagent's final call update keeps its own content, not the CLI's hand-back frame", () => {
    const updates = updatesFor("subagent_foreground")
    const agent = of(updates, "tool_call").find((c) => c.kind === "think")!
    for (const u of of(updates, "tool_call_update").filter((u) => u.toolCallId === agent.toolCallId))
      expect(JSON.stringify(u.content ?? [])).not.toContain("[Subagent hand-back]")
  })
})

describe("mapping pieces", () => {
  const call = (over: Partial<ToolCall>): ToolCall => ({
    id: "t1",
    name: "Edit",
    kind: "edit",
    title: "Edit a.txt",
    input: {},
    status: "Running",
    ...over,
  })

  it("diffs: MultiEdit gives one diff per edit; NotebookEdit its new source; Bash none", () => {
    expect(
      diffsOf(
        call({
          name: "MultiEdit",
          input: {
            file_path: "/w/a.txt",
            edits: [
              { old_string: "a", new_string: "b" },
              { old_string: "c", new_string: "d" },
            ],
          },
        }),
      ),
    ).toEqual([
      { path: "/w/a.txt", oldText: "a", newText: "b" },
      { path: "/w/a.txt", oldText: "c", newText: "d" },
    ])
    expect(
      diffsOf(call({ name: "NotebookEdit", input: { notebook_path: "/w/n.ipynb", new_source: "x" } })),
    ).toEqual([{ path: "/w/n.ipynb", oldText: null, newText: "x" }])
    expect(diffsOf(call({ name: "Bash", kind: "execute", input: { command: "ls" } }))).toEqual([])
  })

  it("kinds: a task is think, MCP is other, the rest as they are", () => {
    expect(acpKind("task")).toBe("think")
    expect(acpKind("mcp")).toBe("other")
    expect(acpKind("search")).toBe("search")
  })

  it("a failed command shows its exit code; output streamed before the end is kept", () => {
    const state = makeUpdateState()
    updatesOf(state, {
      type: "ToolCallStarted",
      session_id: "s",
      call: call({ name: "Bash", kind: "execute" }),
    })
    const delta = updatesOf(state, {
      type: "output_delta",
      session_id: "s",
      tool_call_id: "t1",
      text: "line 1\n",
    })
    expect(delta[0]).toMatchObject({ content: [{ type: "content", content: { text: "line 1\n" } }] })
    const [end] = updatesOf(state, {
      type: "ToolCallFinished",
      session_id: "s",
      call: call({ name: "Bash", kind: "execute", status: "Failed", exit_code: 2 }),
    })
    expect(end).toMatchObject({
      status: "failed",
      content: [{ content: { text: "line 1\n\n(exit code 2)" } }],
    })
  })

  it("cost adds up across processes (the CLI's figure restarts with each process)", () => {
    const state = makeUpdateState()
    noteUsage(state, { input_tokens: 1, output_tokens: 1, cost_usd: 0.1 })
    noteUsage(state, { input_tokens: 1, output_tokens: 1, cost_usd: 0.3 })
    noteUsage(state, { input_tokens: 1, output_tokens: 1, cost_usd: 0.05 })
    expect(state.cost).toBeCloseTo(0.35)
  })

  it("a workflow agent with no call of its own is announced as one, under its parent", () => {
    const state = makeUpdateState()
    const [first] = taskUpdates(state, {
      id: "wf/1",
      parent_task_id: "wf",
      title: "alpha",
      status: "Running",
    })
    expect(first).toMatchObject({ sessionUpdate: "tool_call", toolCallId: "wf/1", kind: "think" })
    expect(meta(first as { _meta?: unknown })?.parentToolUseId).toBe("wf")
    const [next] = taskUpdates(state, {
      id: "wf/1",
      parent_task_id: "wf",
      title: "alpha",
      status: "Completed",
      summary: "done",
    })
    expect(next).toMatchObject({ sessionUpdate: "tool_call_update", status: "completed" })
  })
})

describe("recovery facts ride in session metadata (ACP v1 has no field for them)", () => {
  it("input_delivery: a session_info_update whose _meta.claudeCode.inputDelivery names the run and the input", () => {
    const updates = updatesOf(makeUpdateState(), {
      type: "input_delivery",
      session_id: "s",
      run_id: "run-1",
      input_uuid: "u1",
      delivery_id: "d1",
      state: "unknown",
      reason: "the process ended",
    })
    expect(updates).toEqual([
      {
        sessionUpdate: "session_info_update",
        _meta: {
          claudeCode: {
            inputDelivery: {
              runId: "run-1",
              inputUuid: "u1",
              deliveryId: "d1",
              state: "unknown",
              reason: "the process ended",
            },
          },
        },
      },
    ])
  })

  it("recovery_identity: identified or not, in _meta.claudeCode.recoveryIdentity, camelCase like every claudeCode key", () => {
    const state = makeUpdateState()
    const [identified] = updatesOf(state, {
      type: "recovery_identity",
      session_id: "s",
      run_id: "run-1",
      identity: {
        identified: true,
        key: "k",
        email: "dev@example.com",
        organization_id: "org",
        config_dir: "/home/u/.claude",
      },
    })
    expect(identified).toEqual({
      sessionUpdate: "session_info_update",
      _meta: {
        claudeCode: {
          recoveryIdentity: {
            runId: "run-1",
            identified: true,
            key: "k",
            email: "dev@example.com",
            organizationId: "org",
            configDir: "/home/u/.claude",
          },
        },
      },
    })
    const [held] = updatesOf(state, {
      type: "recovery_identity",
      session_id: "s",
      run_id: "run-2",
      identity: { identified: false, reason: "an external token" },
    })
    expect(meta(held as { _meta?: unknown })).toEqual({
      recoveryIdentity: { runId: "run-2", identified: false, reason: "an external token" },
    })
  })
})

import { readdirSync } from "node:fs"
import { Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import { NodeFsLayer } from "./testkit/node-fs.ts"
import { readSession } from "./history.ts"
import { Fs } from "./sdk/plugin-api.ts"
import type { TranscriptItem } from "./sdk/protocol.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import { placeAgents, type StoredAgent } from "./subagents.ts"
import { parseTaskNotifications } from "./history/task-notifications.ts"

type TaskItem = Extract<TranscriptItem, { type: "task" }>

const recorded = async (scenario: string) => {
  const dir = `testdata/${scenario}/projects/-home-dev-ws`
  const id = (readdirSync(dir).find((f) => f.endsWith(".jsonl")) ?? "").replace(".jsonl", "")
  return Effect.runPromise(
    readSession(`testdata/${scenario}`, "/home/dev/ws", id).pipe(Effect.provide(NodeFsLayer)),
  )
}

const tasksIn = (items: ReadonlyArray<TranscriptItem>): TaskItem[] =>
  items.flatMap((i) => (i.type === "task" ? [i, ...tasksIn(i.items)] : []))

describe("stored subagents from recordings", () => {
  it("a foreground agent: a task right after its spawning call, with the call's answer", async () => {
    const transcript = await recorded("subagent_foreground")
    const items = transcript?.items ?? []
    const at = items.findIndex((i) => i.type === "task")
    const call = items[at - 1]
    expect(call?.type === "tool_call" && call.call.name).toBe("Agent")
    const task = items[at] as TaskItem
    expect(task.id).toBe(call?.type === "tool_call" ? call.call.id : "")
    expect(task.task).toMatchObject({
      id: task.id,
      title: "Count workspace files",
      name: "general-purpose",
      status: "Completed",
      summary: "There are 1 files.",
    })
    // Its own conversation, the opening prompt removed, tagged with the task.
    expect(task.items[0]?.type).not.toBe("user")
    expect(
      task.items.some((i) => i.type === "tool_call" && i.call.name === "Bash" && i.call.exit_code === 0),
    ).toBe(true)
    for (const item of task.items) expect("task_id" in item && item.task_id).toBe(task.id)
  })

  it("a background agent: background, ended by its task notification", async () => {
    const transcript = await recorded("subagent_background")
    const [task] = tasksIn(transcript?.items ?? [])
    expect(task?.task).toMatchObject({ background: true, status: "Completed", summary: "The answer is 42." })
    // The notification record itself is not shown in the main conversation.
    expect(transcript?.items.some((i) => i.type === "user" && i.text.includes("task-notification"))).toBe(
      false,
    )
  })

  it("a dynamic workflow run: its task and one child task per agent", async () => {
    const transcript = await recorded("dynamic_workflow")
    const [workflow, ...agents] = tasksIn(transcript?.items ?? [])
    expect(workflow?.task.workflow?.phases.length).toBeGreaterThan(0)
    expect(agents.length).toBeGreaterThan(0)
    for (const agent of agents) {
      expect(agent.id.startsWith(`${workflow?.id}/`)).toBe(true)
      expect(agent.task.parent_task_id).toBe(workflow?.id)
      expect(agent.items.length).toBeGreaterThan(0)
    }
  })
})

// Hand-written trees shaped like 2.1.332's (see the facts file, "Stored subagents").
const HOME = "/home/user"
const PROJECT = `${HOME}/.claude/projects/-w`
const SID = "11111111-1111-4111-8111-111111111111"
const jsonl = (records: ReadonlyArray<unknown>) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`

const user = (
  uuid: string,
  parent: string | null,
  content: unknown,
  extra: Record<string, unknown> = {},
) => ({
  parentUuid: parent,
  isSidechain: extra.isSidechain ?? false,
  type: "user",
  message: { role: "user", content },
  uuid,
  ...extra,
})
const assistant = (uuid: string, parent: string, block: unknown, sidechain = false) => ({
  parentUuid: parent,
  isSidechain: sidechain,
  message: { role: "assistant", model: "claude-opus-5-5", content: [block] },
  type: "assistant",
  uuid,
})
const agentCall = (id: string, description: string, prompt: string, background = false) => ({
  type: "tool_use",
  id,
  name: "Agent",
  input: { description, prompt, subagent_type: "general-purpose", run_in_background: background },
})
const result = (id: string, text: string, isError = false) => [
  { type: "tool_result", tool_use_id: id, content: [{ type: "text", text }], is_error: isError },
]
const agentFile = (prefix: string, prompt: string, body: ReadonlyArray<unknown>) =>
  jsonl([user(`${prefix}0`, null, prompt, { isSidechain: true }), ...body])

const read = async (files: Record<string, string>) => {
  const broker = makeMemoryBroker({ home: HOME, files })
  const transcript = await Effect.runPromise(
    Effect.provide(readSession(`${HOME}/.claude`, "/w", SID), Layer.succeed(Fs, broker.api.fs)),
  )
  return transcript?.items ?? []
}

describe("stored subagents, hand-written", () => {
  it("nests an agent spawned by an agent (depth 2) inside its parent's task", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "nest please"),
        assistant("m2", "m1", agentCall("toolu_outer", "Outer agent", "OUTER do it")),
        user("m3", "m2", result("toolu_outer", "Outer answer."), {
          toolUseResult: {
            status: "completed",
            content: [{ type: "text", text: "Outer answer." }],
            totalTokens: 99,
          },
        }),
        assistant("m4", "m3", { type: "text", text: "All done." }),
      ]),
      [`${dir}/agent-aOuter.jsonl`]: agentFile("o", "OUTER do it", [
        assistant("o1", "o0", agentCall("toolu_inner", "Inner agent", "INNER deeper"), true),
        user("o2", "o1", result("toolu_inner", "Inner answer."), {
          isSidechain: true,
          toolUseResult: { status: "completed", content: [{ type: "text", text: "Inner answer." }] },
        }),
        assistant("o3", "o2", { type: "text", text: "Outer answer." }, true),
      ]),
      [`${dir}/agent-aOuter.meta.json`]: JSON.stringify({
        agentType: "general-purpose",
        description: "Outer agent",
        toolUseId: "toolu_outer",
        spawnDepth: 1,
      }),
      [`${dir}/agent-aInner.jsonl`]: agentFile("i", "INNER deeper", [
        assistant("i1", "i0", { type: "text", text: "Inner answer." }, true),
      ]),
      [`${dir}/agent-aInner.meta.json`]: JSON.stringify({
        agentType: "general-purpose",
        description: "Inner agent",
        toolUseId: "toolu_inner",
        parentAgentId: "aOuter",
        spawnDepth: 2,
      }),
    })
    expect(items.map((i) => i.type)).toEqual(["user", "tool_call", "task", "assistant"])
    const outer = items[2] as TaskItem
    expect(outer.task).toMatchObject({
      id: "toolu_outer",
      title: "Outer agent",
      summary: "Outer answer.",
      usage: { used_tokens: 99 },
    })
    expect(outer.task.parent_task_id).toBeUndefined()
    expect(outer.items.map((i) => i.type)).toEqual(["tool_call", "task", "assistant"])
    const inner = outer.items[1] as TaskItem
    expect(inner.task).toMatchObject({
      id: "toolu_inner",
      parent_task_id: "toolu_outer",
      title: "Inner agent",
    })
    expect(inner.items).toEqual([
      { type: "assistant", id: "i1", text: "Inner answer.", task_id: "toolu_inner" },
    ])
  })

  it.each([
    ["without parentAgentId", {}],
    ["with an unknown parentAgentId", { parentAgentId: "aGone" }],
  ])("nests a depth-2 agent %s by the file its spawning call is in", async (_, parent) => {
    const dir = `${PROJECT}/${SID}/subagents`
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "nest please"),
        assistant("m2", "m1", agentCall("toolu_outer", "Outer agent", "OUTER do it")),
        user("m3", "m2", result("toolu_outer", "Outer answer.")),
      ]),
      [`${dir}/agent-aOuter.jsonl`]: agentFile("o", "OUTER do it", [
        assistant("o1", "o0", agentCall("toolu_inner", "Inner agent", "INNER deeper"), true),
        user("o2", "o1", result("toolu_inner", "Inner answer."), { isSidechain: true }),
      ]),
      [`${dir}/agent-aOuter.meta.json`]: JSON.stringify({
        description: "Outer agent",
        toolUseId: "toolu_outer",
      }),
      [`${dir}/agent-aInner.jsonl`]: agentFile("i", "INNER deeper", [
        assistant("i1", "i0", { type: "text", text: "Inner answer." }, true),
      ]),
      [`${dir}/agent-aInner.meta.json`]: JSON.stringify({
        description: "Inner agent",
        toolUseId: "toolu_inner",
        ...parent,
      }),
    })
    expect(items.map((i) => i.type)).toEqual(["user", "tool_call", "task"])
    const outer = items[2] as TaskItem
    expect(outer.items.map((i) => i.type)).toEqual(["tool_call", "task"])
    expect((outer.items[1] as TaskItem).task).toMatchObject({
      id: "toolu_inner",
      parent_task_id: "toolu_outer",
    })
  })

  it("skips an old CLI's inline sidechain records in the main file, even when they come last", async () => {
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "main prompt"),
        assistant("m2", "m1", { type: "text", text: "Main answer." }),
        user("s1", null, "SIDE prompt", { isSidechain: true }),
        assistant("s2", "s1", { type: "text", text: "Side answer." }, true),
      ]),
    })
    expect(items.map((i) => i.id)).toEqual(["m1", "m2"])
  })

  it("a failed agent, an unfinished one, a stopped background one; workflow folders skipped", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const meta = (toolUseId: string, description: string, shape = "foreground") =>
      JSON.stringify({ agentType: "Explore", description, toolUseId, requestShape: shape })
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "go"),
        assistant("m2", "m1", agentCall("toolu_fail", "Failing", "F")),
        user("m3", "m2", result("toolu_fail", "Agent crashed: out of tokens", true)),
        assistant("m4", "m3", agentCall("toolu_bg", "Background", "B", true)),
        user("m5", "m4", result("toolu_bg", "Async agent launched successfully."), {
          toolUseResult: { isAsync: true, status: "async_launched", agentId: "aBg" },
        }),
        user(
          "m6",
          "m5",
          '<task-notification>\n<task-id>aBg</task-id>\n<tool-use-id>toolu_bg</tool-use-id>\n<status>stopped</status>\n<summary>Agent "Background" was stopped</summary>\n<result>Partial result.</result>\n</task-notification>',
          { origin: { kind: "task-notification" } },
        ),
        assistant("m7", "m6", agentCall("toolu_cut", "Cut short", "C")),
      ]),
      [`${dir}/agent-aFail.jsonl`]: agentFile("f", "F", [
        assistant("f1", "f0", { type: "text", text: "trying" }, true),
      ]),
      [`${dir}/agent-aFail.meta.json`]: meta("toolu_fail", "Failing"),
      [`${dir}/agent-aBg.jsonl`]: agentFile("b", "B", [
        assistant("b1", "b0", { type: "text", text: "working" }, true),
      ]),
      [`${dir}/agent-aBg.meta.json`]: meta("toolu_bg", "Background", "background"),
      [`${dir}/agent-aCut.jsonl`]: agentFile("c", "C", [
        assistant("c1", "c0", { type: "text", text: "Last words." }, true),
      ]),
      [`${dir}/agent-aCut.meta.json`]: meta("toolu_cut", "Cut short"),
      [`${dir}/workflows/wf_1/agent-aWf.jsonl`]: agentFile("w", "W", [
        assistant("w1", "w0", { type: "text", text: "wf" }, true),
      ]),
      [`${dir}/workflows/wf_1/agent-aWf.meta.json`]: meta("toolu_wf", "Workflow agent"),
    })
    const tasks = tasksIn(items)
    expect(tasks.map((t) => t.id)).toEqual(["toolu_fail", "toolu_bg", "toolu_cut"])
    // As live: a failed agent's summary is its last text, else the error.
    expect(tasks[0]?.task).toMatchObject({ status: "Failed", summary: "trying", name: "general-purpose" })
    expect(tasks[1]?.task).toMatchObject({
      status: "Cancelled",
      background: true,
      summary: "Partial result.",
    })
    expect(tasks[2]?.task).toMatchObject({ status: "Completed", summary: "Last words." })
    // The spawning call with no result reads back finished, not cut off.
    const cut = items.find((i) => i.type === "tool_call" && i.call.id === "toolu_cut")
    expect(cut?.type === "tool_call" && cut.call.status).toBe("Completed")
  })

  it("a foreground agent stopped by the user reads back Cancelled, as live (2.1.332's records)", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "sleep in a subagent"),
        assistant("m2", "m1", agentCall("toolu_sleep", "Sleeper", "SLEEP")),
        user(
          "m3",
          "m2",
          [
            {
              type: "tool_result",
              content: "[Request interrupted by user for tool use]",
              is_error: true,
              tool_use_id: "toolu_sleep",
            },
          ],
          {
            toolUseResult: "Error: [Request interrupted by user for tool use]",
            toolDenialKind: "interrupted",
          },
        ),
        assistant("m4", "m3", { type: "text", text: "After the stop." }),
      ]),
      [`${dir}/agent-aSleep.jsonl`]: agentFile("s", "SLEEP", [
        assistant(
          "s1",
          "s0",
          { type: "tool_use", id: "toolu_bash", name: "Bash", input: { command: "sleep 20" } },
          true,
        ),
        user(
          "s2",
          "s1",
          [
            {
              type: "tool_result",
              content: "The user doesn't want to proceed with this tool use.",
              is_error: true,
              tool_use_id: "toolu_bash",
            },
          ],
          { isSidechain: true, toolUseResult: "User rejected tool use" },
        ),
        user("s3", "s2", [{ type: "text", text: "[Request interrupted by user for tool use]" }], {
          isSidechain: true,
        }),
      ]),
      [`${dir}/agent-aSleep.meta.json`]: JSON.stringify({
        agentType: "general-purpose",
        description: "Sleeper",
        toolUseId: "toolu_sleep",
        spawnDepth: 1,
        requestShape: "foreground",
        stoppedByUser: true,
      }),
    })
    const [task] = tasksIn(items)
    expect(task?.task).toMatchObject({ id: "toolu_sleep", title: "Sleeper", status: "Cancelled" })
    // The interrupt is no answer: nothing the agent said, so no summary.
    expect(task?.task.summary).toBeUndefined()
    expect(task?.items.map((i) => i.type)).toEqual(["tool_call", "notice"])
  })

  it("a stopped agent whose spawning call has no result reads back Cancelled by its meta file", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "go"),
        assistant("m2", "m1", agentCall("toolu_s", "Stopped early", "S")),
      ]),
      [`${dir}/agent-aS.jsonl`]: agentFile("s", "S", [
        assistant("s1", "s0", { type: "text", text: "partial" }, true),
      ]),
      [`${dir}/agent-aS.meta.json`]: JSON.stringify({ toolUseId: "toolu_s", stoppedByUser: true }),
    })
    expect(tasksIn(items)[0]?.task).toMatchObject({ status: "Cancelled", summary: "partial" })
  })

  // 2.1.332 hands a depth-2 agent's report back to its parent framed by the
  // harness, with no structured toolUseResult (recorded from the real CLI in
  // e2e/tasks.e2e.test.ts). The answer is the report alone. Fails until
  // task.ts spawnAnswer unwraps the frame (see the tasks e2e report).
  it("a nested agent's summary is its report, without the CLI's hand-back frame", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const framed =
      "[Subagent hand-back] The text below is the final report of a subagent this session delegated to. It is model output, NOT a message from the user. The report follows:\n  Inner answer 7.\n  Second line.\nagentId: aInner (use SendMessage with to: 'aInner', summary: '<5-10 word recap>' to continue this agent)\n<usage>subagent_tokens: 2128\ntool_uses: 0\nduration_ms: 237</usage>"
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "nest"),
        assistant("m2", "m1", agentCall("toolu_outer", "Outer agent", "OUTER")),
        user("m3", "m2", result("toolu_outer", "relay"), {
          toolUseResult: { status: "completed", content: [{ type: "text", text: "relay" }] },
        }),
      ]),
      [`${dir}/agent-aOuter.jsonl`]: agentFile("o", "OUTER", [
        assistant("o1", "o0", agentCall("toolu_inner", "Inner agent", "INNER"), true),
        user("o2", "o1", result("toolu_inner", framed), { isSidechain: true }),
        assistant("o3", "o2", { type: "text", text: "relay" }, true),
      ]),
      [`${dir}/agent-aOuter.meta.json`]: JSON.stringify({
        toolUseId: "toolu_outer",
        description: "Outer agent",
      }),
      [`${dir}/agent-aInner.jsonl`]: agentFile("i", "INNER", [
        assistant("i1", "i0", { type: "text", text: "Inner answer 7.\nSecond line." }, true),
      ]),
      [`${dir}/agent-aInner.meta.json`]: JSON.stringify({
        toolUseId: "toolu_inner",
        description: "Inner agent",
        parentAgentId: "aOuter",
      }),
    })
    const inner = tasksIn(items).find((t) => t.id === "toolu_inner")
    expect(inner?.task.summary).toBe("Inner answer 7.\nSecond line.")
  })

  it("an agent of an abandoned branch (its call not in the conversation) is left out", async () => {
    const dir = `${PROJECT}/${SID}/subagents`
    const items = await read({
      [`${PROJECT}/${SID}.jsonl`]: jsonl([
        user("m1", null, "go"),
        assistant("m2", "m1", { type: "text", text: "ok" }),
      ]),
      [`${dir}/agent-aX.jsonl`]: agentFile("x", "X", [
        assistant("x1", "x0", { type: "text", text: "x" }, true),
      ]),
      [`${dir}/agent-aX.meta.json`]: JSON.stringify({ toolUseId: "toolu_gone" }),
    })
    expect(tasksIn(items)).toEqual([])
  })
})

describe("task notifications", () => {
  it("parses every notification in a record, with usage", () => {
    const text =
      "<task-notification><task-id>a1</task-id><status>completed</status><result>one</result><usage><subagent_tokens>12</subagent_tokens><tool_uses>2</tool_uses><duration_ms>5</duration_ms></usage></task-notification>\n<task-notification><task-id>a2</task-id><tool-use-id>t2</tool-use-id><status>failed</status></task-notification>"
    expect(parseTaskNotifications(text)).toEqual([
      {
        taskId: "a1",
        status: "completed",
        result: "one",
        usage: { used_tokens: 12, tool_uses: 2, duration_ms: 5 },
      },
      { taskId: "a2", toolUseId: "t2", status: "failed" },
    ])
  })
})

describe("placing many agents", () => {
  it("reads each item a bounded number of times, not once per agent (it was quadratic)", () => {
    const CALLS = 2000
    const AGENTS = 200
    let reads = 0
    /** An item whose `type` counts how often it is read. */
    const counted = (item: TranscriptItem): TranscriptItem =>
      new Proxy(item, {
        get: (target, key, receiver) => {
          if (key === "type") reads++
          return Reflect.get(target, key, receiver)
        },
      })
    const items = Array.from({ length: CALLS }, (_, i) =>
      counted({
        type: "tool_call",
        id: `u-${i}`,
        call: { id: `t-${i}`, name: "Agent", input: {}, kind: "other", title: "Agent", status: "Completed" },
      }),
    )
    const agents: StoredAgent[] = Array.from({ length: AGENTS }, (_, i) => ({
      agentId: `a${i}`,
      meta: { toolUseId: `t-${(i * 7919) % CALLS}` },
      records: [],
    }))
    const placed = placeAgents(items, [], agents)
    expect(placed.filter((i) => i.type === "task")).toHaveLength(AGENTS)
    // Each task right after its call.
    placed.forEach((item, at) => {
      if (item.type === "task") expect(placed[at - 1]).toMatchObject({ call: { id: item.id } })
    })
    // Before: three searches of the items per agent (805,400 reads here).
    expect(reads).toBeLessThan(10 * CALLS)
  })
})

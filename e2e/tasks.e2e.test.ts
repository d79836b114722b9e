/**
 * Subagents as nested tasks end to end: the plugin inside host/, the real
 * CLI under test, the scripted model. Each test then reads the same session back
 * from the CLI's transcripts (readSession) and checks that it rebuilds the
 * tasks the live run showed, field by field.
 */
import { describe, expect, it } from "vitest"
import type { AgentEvent, TaskInfo, TranscriptItem } from "../sdk/protocol.ts"
import { gate, text, thinking, toolUse } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  ofType,
  toolResultText,
  startWorld,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const agentCall = (description: string, prompt: string, background = false) =>
  toolUse("Agent", { description, prompt, subagent_type: "general-purpose", run_in_background: background })

/** Each task's last snapshot, as the host holds it after the live run. */
const liveTasks = (events: ReadonlyArray<AgentEvent>): Map<string, TaskInfo> => {
  const tasks = new Map<string, TaskInfo>()
  for (const e of ofType(events, "Task")) tasks.set(e.task.id, e.task)
  return tasks
}

/** The task items of a transcript, nested ones too, each with the id of the task item it sits in. */
const storedTasks = (
  items: ReadonlyArray<TranscriptItem>,
  inside?: string,
): Array<{ task: TaskInfo; inside: string | undefined; items: ReadonlyArray<TranscriptItem> }> =>
  items.flatMap((item) =>
    item.type === "task"
      ? [{ task: item.task, inside, items: item.items }, ...storedTasks(item.items, item.task.id)]
      : [],
  )

/** What the host shows of a task and must read back the same (usage and activity are live measures). */
const SHOWN = [
  "id",
  "parent_task_id",
  "title",
  "name",
  "model",
  "prompt",
  "status",
  "summary",
  "background",
] as const
type Shown = (typeof SHOWN)[number]
const shown = (task: TaskInfo | undefined, fields: ReadonlyArray<Shown> = SHOWN) =>
  Object.fromEntries(fields.map((f) => [f, task?.[f]]))

/** readSession of the session rebuilds every task the live run showed: same ids, fields and nesting. */
const expectStoredLikeLive = async (w: World, sessionId: string, fields: ReadonlyArray<Shown> = SHOWN) => {
  const live = liveTasks(w.events(sessionId))
  const read = await w.host.call(w.agentId, "readSession", { sessionId, cwd: w.sandbox.ws })
  const stored = storedTasks(read.items)
  expect(stored.map((s) => s.task.id).sort()).toEqual([...live.keys()].sort())
  for (const { task, inside } of stored) {
    expect(shown(task, fields), task.id).toEqual(shown(live.get(task.id), fields))
    // Nested by parent_task_id: the item sits inside its parent's task item.
    expect(inside).toBe(task.parent_task_id)
  }
  return { live, stored, read }
}

describe("subagents as tasks against the real CLI", () => {
  it("a foreground subagent's Bash approval lands in its task, which waits, then completes with its answer", async () => {
    world = await startWorld({
      main: [
        [text("Delegating."), agentCall("Count workspace files", "SUB-FG: count the files")],
        (req) => [text(`Reported: ${toolResultText(req).slice(0, 40)}`)],
      ],
      subagents: [
        {
          match: "SUB-FG",
          turns: [
            [
              thinking("I will run a command."),
              toolUse("Bash", { command: "touch made.txt && ls | wc -l", description: "Count files" }),
            ],
            (req) => [text(`There are ${toolResultText(req).trim()} files.`)],
          ],
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "count the files" })
    const approval = await w.waitFor(session_id, "ApprovalRequested")
    const spawn = ofType(w.events(session_id), "ToolCallStarted").find((e) => e.call.name === "Agent")
    expect(spawn?.call.id).toBeDefined()
    // The task id is the spawning Agent call's id; the approval carries it.
    expect(approval).toMatchObject({ tool_name: "Bash", task_id: spawn?.call.id, run_id: run.run_id })
    const bash = ofType(w.events(session_id), "ToolCallStarted").find((e) => e.call.name === "Bash")
    expect(bash?.task_id).toBe(spawn?.call.id)
    expect(approval.tool_call_id).toBe(bash?.call.id)
    // While the approval is open the task waits.
    expect(liveTasks(w.events(session_id)).get(spawn!.call.id)?.status).toBe("Waiting")
    await w.host.call(w.agentId, "answerApproval", {
      sessionId: session_id,
      approvalId: approval.approval_id,
      decision: "allow",
    })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended.outcome).toBe("Completed")
    const statuses = ofType(w.events(session_id), "Task").map((e) => e.task.status)
    expect(statuses.indexOf("Waiting")).toBeGreaterThan(-1)
    expect(statuses.slice(statuses.indexOf("Waiting") + 1)).toContain("Running")
    expect(liveTasks(w.events(session_id)).get(spawn!.call.id)).toMatchObject({
      title: "Count workspace files",
      name: "general-purpose",
      status: "Completed",
      summary: "There are 1 files.",
      background: false,
    })

    const { stored } = await expectStoredLikeLive(w, session_id)
    // The stored task holds the subagent's own items, the opening prompt left out.
    const items = stored[0]?.items ?? []
    expect(items.map((i) => i.type)).toEqual(["reasoning", "tool_call", "assistant"])
    expect(items.every((i) => "task_id" in i && i.task_id === spawn?.call.id)).toBe(true)
  })

  it("a background subagent finishing after the main result opens and closes a run of its own", async () => {
    const release = gate()
    world = await startWorld({
      main: [
        [agentCall("Background job", "SUB-BG: compute the answer", true)],
        [text("Started it in the background.")],
        [text("The background agent said 42.")],
      ],
      subagents: [
        {
          match: "SUB-BG",
          turns: [
            async () => {
              await release.wait
              return [thinking("Computing."), text("The answer is 42.")]
            },
          ],
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", {
      sessionId: session_id,
      text: "compute in the background",
      deliveryId: "d1",
    })
    const first = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(first.outcome).toBe("Completed")
    const spawn = ofType(w.events(session_id), "ToolCallStarted").find((e) => e.call.name === "Agent")
    const taskId = spawn!.call.id
    expect(liveTasks(w.events(session_id)).get(taskId)).toMatchObject({ status: "Running", background: true })
    const before = w.events(session_id).length

    // The subagent finishes now, after the main turn's result.
    release.open()
    const late = await w.waitFor(session_id, "RunStarted", (e) => e.run_id !== run.run_id)
    const lateEnd = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === late.run_id)
    expect(lateEnd.outcome).toBe("Completed")
    // No prompt started it: no delivery ids.
    expect(late.delivery_ids ?? []).toEqual([])
    expect(lateEnd.delivery_ids ?? []).toEqual([])
    const after = w.events(session_id).slice(before)
    const done = ofType(after, "Task").find((e) => e.task.id === taskId && e.task.status === "Completed")
    expect(done?.task.summary).toBe("The answer is 42.")
    // The CLI's own turn answering the notification streams inside the late run.
    const lateText = ofType(after, "TextDelta").filter((e) => e.run_id === late.run_id)
    expect(lateText.map((e) => e.text).join("")).toBe("The background agent said 42.")
    // The subagent's own messages stayed in its task, never in the main chat.
    const reasoning = ofType(w.events(session_id), "ReasoningDelta").filter((e) =>
      e.text.includes("Computing"),
    )
    expect(reasoning.every((e) => e.task_id === taskId)).toBe(true)
    expect(ofType(w.events(session_id), "RunStarted")).toHaveLength(2)

    await expectStoredLikeLive(w, session_id)
  })

  it("cancelTask stops a running subagent: its task ends Cancelled and the main run goes on", async () => {
    world = await startWorld({
      main: [
        [agentCall("Sleeper", "SUB-SLEEP: wait a long time")],
        (req) => [text(`After the stop: ${req.toolResults()[0]?.isError ? "error" : "ok"}`)],
      ],
      subagents: [
        {
          match: "SUB-SLEEP",
          turns: [
            [toolUse("Bash", { command: "echo started && sleep 20", description: "Sleep long" })],
            [text("woke up")],
          ],
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "sleep in a subagent" })
    const bash = await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    const taskId = bash.task_id
    expect(taskId).toBeDefined()
    const at = Date.now()
    await w.host.call(w.agentId, "cancelTask", { sessionId: session_id, taskId: taskId! })
    const cancelled = await w.waitFor(
      session_id,
      "Task",
      (e) => e.task.id === taskId && e.task.status === "Cancelled",
      10_000,
    )
    expect(cancelled.task.title).toBe("Sleeper")
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id, 15_000)
    // Well before the `sleep 20` would have ended; the run itself was not cancelled.
    expect(Date.now() - at).toBeLessThan(10_000)
    expect(ended.outcome).toBe("Completed")
    const finished = ofType(w.events(session_id), "ToolCallFinished").find((e) => e.call.id === bash.call.id)
    expect(finished?.call.status).toBe("Cancelled")
    // The spawning call's error result (the interrupt) must not turn the stopped task
    // into a failure. Soft: a known mapper bug (map.ts finishAgentCall), the rest still checked.
    expect.soft(liveTasks(w.events(session_id)).get(taskId!)?.status).toBe("Cancelled")

    // A stopped foreground agent's only summary live is the CLI's status line
    // (task_notification), which the transcript does not keep: summary left out here.
    await expectStoredLikeLive(
      w,
      session_id,
      SHOWN.filter((f) => f !== "summary"),
    )
  })

  it("a subagent that spawns a subagent (depth 2) nests it by parent_task_id", async () => {
    world = await startWorld({
      main: [[agentCall("Outer agent", "SUB-OUTER: delegate again")], [text("Main is done.")]],
      subagents: [
        {
          match: "SUB-OUTER",
          turns: [[agentCall("Inner agent", "SUB-INNER: answer")], [text("Outer relays the inner answer.")]],
        },
        { match: "SUB-INNER", turns: [[text("Inner answer 7.")]] },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "nest two agents" })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended.outcome).toBe("Completed")
    const spawns = ofType(w.events(session_id), "ToolCallStarted").filter((e) => e.call.name === "Agent")
    const [outer, inner] = spawns
    expect(spawns).toHaveLength(2)
    // The inner Agent call ran inside the outer task.
    expect(inner?.task_id).toBe(outer?.call.id)
    const tasks = liveTasks(w.events(session_id))
    expect(tasks.get(outer!.call.id)).toMatchObject({ title: "Outer agent", status: "Completed" })
    expect(tasks.get(outer!.call.id)?.parent_task_id).toBeUndefined()
    expect(tasks.get(outer!.call.id)?.summary).toBe("Outer relays the inner answer.")
    expect(tasks.get(inner!.call.id)).toMatchObject({
      title: "Inner agent",
      parent_task_id: outer?.call.id,
      status: "Completed",
    })
    // The inner agent's answer, without the CLI's hand-back frame around it.
    // Soft: a known bug (task.ts spawnAnswer), the rest still checked.
    expect.soft(tasks.get(inner!.call.id)?.summary).toBe("Inner answer 7.")

    const { stored } = await expectStoredLikeLive(w, session_id)
    expect(stored.map((s) => [s.task.id, s.inside])).toEqual([
      [outer?.call.id, undefined],
      [inner?.call.id, outer?.call.id],
    ])
  })
})

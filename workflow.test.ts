/**
 * Workflow files through the broker: the agents' transcripts followed as they
 * grow, the run record (output_file, else the copy beside the session), and
 * stored runs rebuilt from the recorded run in testdata/workflow (CLI 2.1.332).
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { Fs, type FsShape } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import {
  agentStatus,
  parseWorkflowLaunch,
  parseWorkflowProgress,
  readStoredRun,
  readWorkflowRecord,
  sessionDirOf,
  storedRecordPath,
  storedWorkflowTasks,
  Tail,
  WorkflowTail,
} from "./workflow.ts"
import { AgentMeta, WorkflowAgentEntry } from "./wire.ts"

const run = <A>(fs: FsShape, effect: Effect.Effect<A, never, Fs>): Promise<A> =>
  Effect.runPromise(Effect.provideService(effect, Fs, fs))

// The recording, mounted where the CLI wrote it (`/sandbox` stands for the sandbox root).
const recorded = (() => {
  const files: Record<string, string> = {}
  const walk = (dir: string, into: string) => {
    for (const name of readdirSync(dir)) {
      const path = `${dir}/${name}`
      if (statSync(path).isDirectory()) walk(path, `${into}/${name}`)
      else files[`${into}/${name}`] = readFileSync(path, "utf8")
    }
  }
  walk("testdata/workflow/projects", "/sandbox/home/.claude/projects")
  const projects = "/sandbox/home/.claude/projects/-sandbox-ws"
  const sessionId = readdirSync("testdata/workflow/projects/-sandbox-ws").find(
    (n) => !n.endsWith(".jsonl"),
  ) as string
  const sessionDir = `${projects}/${sessionId}`
  const runId = readdirSync(
    `testdata/workflow/projects/-sandbox-ws/${sessionId}/subagents/workflows`,
  )[0] as string
  return { files, sessionDir, runId, transcriptDir: `${sessionDir}/subagents/workflows/${runId}` }
})()

describe("Tail", () => {
  it("returns only whole lines and keeps the byte offset after the last newline", async () => {
    const broker = makeMemoryBroker({ files: { "/h/a.jsonl": '{"n":1}\n{"n":2' } })
    const tail = new Tail("/h/a.jsonl")
    expect(await run(broker.api.fs, tail.read)).toEqual([{ n: 1 }])
    expect(tail.offset).toBe(8)
    expect(await run(broker.api.fs, tail.read)).toEqual([])
    broker.files.set("/h/a.jsonl", '{"n":1}\n{"n":2}\n{"é":"ü"}\nnot json\n')
    expect(await run(broker.api.fs, tail.read)).toEqual([{ n: 2 }, { é: "ü" }])
    expect(tail.offset).toBe(new TextEncoder().encode('{"n":1}\n{"n":2}\n{"é":"ü"}\nnot json\n').length)
  })

  it("starts over when the file shrank, and reads nothing from a missing file", async () => {
    const broker = makeMemoryBroker({ files: { "/h/a.jsonl": '{"n":1}\n{"n":2}\n' } })
    const tail = new Tail("/h/a.jsonl")
    await run(broker.api.fs, tail.read)
    broker.files.set("/h/a.jsonl", '{"m":1}\n')
    expect(await run(broker.api.fs, tail.read)).toEqual([])
    expect(await run(broker.api.fs, tail.read)).toEqual([{ m: 1 }])
    expect(await run(broker.api.fs, new Tail("/h/none.jsonl").read)).toEqual([])
  })
})

describe("WorkflowTail over the recorded run", () => {
  it("finds every agent's file and reads each once, then what it gains", async () => {
    const broker = makeMemoryBroker({ home: "/sandbox/home", files: recorded.files })
    const follow = new WorkflowTail(recorded.transcriptDir)
    const first = await run(broker.api.fs, follow.poll)
    expect(first.map((a) => a.agentId).sort()).toHaveLength(3)
    for (const agent of first)
      expect(agent.records[0]).toMatchObject({ type: "user", parentUuid: null, agentId: agent.agentId })
    expect(await run(broker.api.fs, follow.poll)).toEqual([])
    const path = `${recorded.transcriptDir}/agent-${first[0]?.agentId}.jsonl`
    broker.files.set(path, `${broker.files.get(path)}{"type":"assistant","late":true}\n`)
    expect(await run(broker.api.fs, follow.poll)).toEqual([
      { agentId: first[0]?.agentId, records: [{ type: "assistant", late: true }] },
    ])
  })
})

describe("the run record", () => {
  it("finds the copy beside the session from the transcriptDir", () => {
    expect(sessionDirOf(recorded.transcriptDir)).toBe(recorded.sessionDir)
    expect(storedRecordPath(recorded.transcriptDir)).toBe(
      `${recorded.sessionDir}/workflows/${recorded.runId}.json`,
    )
    expect(sessionDirOf("/somewhere/else")).toBeUndefined()
  })

  it("reads output_file, else the copy beside the session (output_file is outside every grant)", async () => {
    const broker = makeMemoryBroker({ home: "/sandbox/home", files: recorded.files })
    const record = await run(
      broker.api.fs,
      readWorkflowRecord(
        { outputFile: "/tmp/claude-0/x/tasks/w.output", transcriptDir: recorded.transcriptDir },
        { attempts: 1 },
      ),
    )
    expect(record).toMatchObject({
      status: "completed",
      agentCount: 3,
      logs: ["gathered 2"],
      result: { report: "gamma: report done" },
    })
  })

  it("retries while the CLI has not written it yet", async () => {
    const broker = makeMemoryBroker({ files: {} })
    let reads = 0
    const fs: FsShape = {
      ...broker.api.fs,
      read: (path) =>
        Effect.suspend(() => {
          reads++
          if (reads === 3) broker.files.set("/t/w.output", '{"summary":"s","result":"done","logs":[]}')
          return broker.api.fs.read(path)
        }),
    }
    const record = await run(
      fs,
      readWorkflowRecord({ outputFile: "/t/w.output" }, { attempts: 5, delayMs: 1 }),
    )
    expect(record).toMatchObject({ result: "done" })
    expect(reads).toBe(3) // two empty attempts, then the record
    expect(
      await run(broker.api.fs, readWorkflowRecord({ outputFile: "/t/none" }, { attempts: 2, delayMs: 1 })),
    ).toBeNull()
  })
})

describe("snapshots", () => {
  it("keeps phases and agents, drops entries that fail their schema, and queues a start without startedAt", () => {
    const snap = parseWorkflowProgress([
      { type: "workflow_phase", index: 1, title: "Gather" },
      { type: "workflow_phase", index: "x" },
      { type: "workflow_agent", index: 2, label: "beta", state: "start", queuedAt: 1, extra: "kept" },
      { type: "workflow_agent", label: "no index" },
      null,
    ])
    expect(snap.phases).toEqual([{ index: 1, title: "Gather" }])
    expect(snap.agents).toEqual([
      { type: "workflow_agent", index: 2, label: "beta", state: "start", queuedAt: 1, extra: "kept" },
    ])
    const entry = (fields: Record<string, unknown>) =>
      WorkflowAgentEntry.parse({ type: "workflow_agent", index: 1, ...fields })
    expect(agentStatus(entry({ state: "start" }))).toBe("Waiting")
    expect(agentStatus(entry({ state: "start", startedAt: 5 }))).toBe("Running")
    expect(agentStatus(entry({ state: "progress" }))).toBe("Running")
    expect(agentStatus(entry({ state: "done" }))).toBe("Completed")
    expect(agentStatus(entry({ state: "error" }))).toBe("Failed")
  })

  it("recognises the Workflow tool's launch result", () => {
    expect(
      parseWorkflowLaunch({
        status: "async_launched",
        taskType: "local_workflow",
        runId: "wf_1",
        transcriptDir: "/d",
      }),
    ).toMatchObject({
      runId: "wf_1",
      transcriptDir: "/d",
    })
    expect(parseWorkflowLaunch({ status: "completed", agentId: "a1" })).toBeUndefined()
    // Checked, not copied: the result as it came, every field kept; a mistyped field refuses it.
    const result = { status: "async_launched", runId: "wf_2", extra: { kept: true } }
    expect(parseWorkflowLaunch(result)).toBe(result)
    expect(parseWorkflowLaunch({ ...result, transcriptDir: 7 })).toBeUndefined()
    expect(parseWorkflowLaunch([result])).toBeUndefined()
  })
})

describe("stored runs", () => {
  it("rebuilds a finished run from workflows/<runId>.json as the live run showed it", async () => {
    const broker = makeMemoryBroker({ home: "/sandbox/home", files: recorded.files })
    const files = await run(broker.api.fs, readStoredRun(recorded.sessionDir, recorded.runId, "toolu_wf_1"))
    expect(files.records.size).toBe(3)
    const stored = storedWorkflowTasks(files.input)
    expect(stored.workflow).toMatchObject({
      id: "toolu_wf_1",
      title: "Gather facts then report",
      name: "probe-flow",
      status: "Completed",
      workflow: {
        name: "probe-flow",
        run_id: recorded.runId,
        phases: [
          { index: 1, title: "Gather" },
          { index: 2, title: "Report" },
        ],
        log: ["gathered 2"],
      },
    })
    expect(JSON.parse(stored.workflow.workflow?.result ?? "null")).toEqual({ report: "gamma: report done" })
    expect(
      stored.agents.map((a) => [a.task.id, a.task.title, a.task.phase, a.task.status, a.task.summary]),
    ).toEqual([
      ["toolu_wf_1/1", "alpha", "Gather", "Completed", "alpha: three files"],
      ["toolu_wf_1/2", "beta", "Gather", "Completed", "beta: 42 lines"],
      ["toolu_wf_1/3", "gamma", "Report", "Completed", "gamma: report done"],
    ])
    for (const agent of stored.agents) expect(files.records.has(agent.agentId as string)).toBe(true)
  })

  it("rebuilds a run the process left unfinished from journal.jsonl and the meta files", async () => {
    const files = { ...recorded.files }
    delete files[`${recorded.sessionDir}/workflows/${recorded.runId}.json`]
    // The process died before gamma finished: drop its result line.
    const journalPath = `${recorded.transcriptDir}/journal.jsonl`
    const journal = (files[journalPath] as string).split("\n").filter((l) => l !== "")
    const gammaResult = journal.findIndex((l) => l.includes('"result"') && l.includes("gamma"))
    files[journalPath] = `${journal.filter((_, i) => i !== gammaResult).join("\n")}\n`
    const broker = makeMemoryBroker({ home: "/sandbox/home", files })
    const read = await run(broker.api.fs, readStoredRun(recorded.sessionDir, recorded.runId, "toolu_wf_1"))
    expect(read.input.record).toBeUndefined()
    expect(read.input.metas?.size).toBe(3)
    const stored = storedWorkflowTasks(read.input)
    expect(stored.workflow).toMatchObject({
      status: "Cancelled",
      workflow: {
        phases: [
          { index: 1, title: "Gather" },
          { index: 2, title: "Report" },
        ],
      },
    })
    expect(stored.agents.map((a) => [a.task.title, a.task.phase, a.task.status, a.task.summary])).toEqual([
      ["alpha", "Gather", "Completed", "alpha: three files"],
      ["beta", "Gather", "Completed", "beta: 42 lines"],
      ["gamma", "Report", "Cancelled", undefined],
    ])
    expect(
      AgentMeta.parse(
        JSON.parse(files[`${recorded.transcriptDir}/agent-${stored.agents[0]?.agentId}.meta.json`] as string),
      ).agentType,
    ).toBe("workflow-subagent")
  })
})

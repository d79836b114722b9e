/**
 * The mapper's behaviour locked in files: every recording under testdata/ is
 * mapped frame by frame and every event and signal it gives is written, one
 * JSON line each, to `testdata/<scenario>/events.jsonl` (`events.<label>.jsonl`
 * for a recording's later processes, as `stdout.<label>.jsonl` names them).
 * An older CLI's recordings (`testdata/cli-<version>/<scenario>/`) get theirs
 * beside them, so both shapes are held.
 *
 * Rules the files keep:
 * - one mapper per recorded process (a restart makes a new one), session id "s";
 * - the clock is fixed (usage limits carry the time they were read);
 * - run ids are stable: `run-0` until the first `result` signal, then `run-1`…;
 * - a finished workflow is followed as the session follows it: each agent's
 *   stored transcript through `mapAgentRecords` (once the mapper knows the
 *   agent), then `finishWorkflow` with the stored run record; a `{"follow":…}`
 *   line marks each such call.
 *
 * A diff in these files is a change of behaviour: review it like code.
 * `npx vitest run events.golden.test.ts -u` rewrites them.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { makeMapper, type Mapper } from "../map.ts"
import { decodeLine, type Frame } from "../wire.ts"

/** The pinned CLI's scenarios, then an older CLI's (`cli-<version>/<scenario>`, the same shapes recorded on it). */
const scenariosIn = (root: string): string[] =>
  readdirSync(join("testdata", root))
    .map((d) => (root === "" ? d : `${root}/${d}`))
    .filter((scenario) => existsSync(`testdata/${scenario}/stdout.jsonl`))
    .sort()

const recordings = [
  ...scenariosIn(""),
  ...readdirSync("testdata")
    .filter((d) => /^cli-\d+\.\d+\.\d+$/.test(d))
    .sort()
    .flatMap(scenariosIn),
]

/** Each recorded process of a scenario: its stdout file and the golden file beside it. */
const processesOf = (scenario: string): Array<{ stdout: string; golden: string }> =>
  readdirSync(`testdata/${scenario}`)
    .map((f) => /^stdout(\.[a-z0-9_]+)?\.jsonl$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ stdout: m[0], golden: `events${m[1] ?? ""}.jsonl` }))
    .sort((a, b) =>
      a.stdout === "stdout.jsonl" ? -1 : b.stdout === "stdout.jsonl" ? 1 : a.stdout < b.stdout ? -1 : 1,
    )

const framesOf = (path: string): Frame[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((line) => {
      const d = decodeLine(line)
      if (d.kind !== "frame")
        throw new Error(`${path}: a line did not decode: ${d.kind === "error" ? d.message : d.kind}`)
      return d.frame
    })

/** Every folder under `dir` (itself included). */
const foldersUnder = (dir: string): string[] =>
  existsSync(dir)
    ? [
        dir,
        ...readdirSync(dir, { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .flatMap((e) => foldersUnder(join(dir, e.name))),
      ]
    : []

const jsonLines = (path: string): unknown[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as unknown)

/** The stored files of a workflow run: its agents' transcripts and its record, as the recording left them. */
const storedRun = (scenario: string, runId: string) => {
  const folders = foldersUnder(`testdata/${scenario}/projects`)
  const transcriptDir = folders.find((f) => f.endsWith(`/subagents/workflows/${runId}`))
  const agents = transcriptDir
    ? readdirSync(transcriptDir)
        .map((f) => /^agent-(.+)\.jsonl$/.exec(f))
        .filter((m): m is RegExpExecArray => m !== null)
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map((m) => ({ agentId: m[1] as string, records: jsonLines(join(transcriptDir, m[0])) }))
    : []
  const recordDir = folders.find((f) => existsSync(join(f, "workflows", `${runId}.json`)))
  const record = recordDir
    ? (JSON.parse(readFileSync(join(recordDir, "workflows", `${runId}.json`), "utf8")) as unknown)
    : null
  return { agents, record }
}

/** The golden lines of one recorded process. */
const goldenLines = (scenario: string, stdout: string): string[] => {
  const mapper: Mapper = makeMapper({ sessionId: "s" })
  const lines: string[] = []
  let run = 0
  const workflowRuns = new Map<string, string>()
  const follow = (taskId: string, runId: string | undefined) => {
    const stored = storedRun(scenario, runId ?? "")
    for (const agent of stored.agents) {
      const agentTask = mapper.taskForAgent(agent.agentId)
      if (agentTask === undefined) continue
      lines.push(JSON.stringify({ follow: { mapAgentRecords: agentTask, records: agent.records.length } }))
      for (const event of mapper.mapAgentRecords(agentTask, agent.records, `run-${run}`))
        lines.push(JSON.stringify(event))
    }
    lines.push(JSON.stringify({ follow: { finishWorkflow: taskId, record: stored.record !== null } }))
    for (const event of mapper.finishWorkflow(taskId, stored.record, `run-${run}`))
      lines.push(JSON.stringify(event))
  }
  for (const frame of framesOf(`testdata/${scenario}/${stdout}`)) {
    const out = mapper.map(frame, `run-${run}`)
    for (const event of out.events) lines.push(JSON.stringify(event))
    const finished: string[] = []
    for (const signal of out.signals) {
      lines.push(JSON.stringify({ signal }))
      if (signal.type === "workflow") {
        // As the session does: the run id of any of the workflow's signals.
        if (signal.runId) workflowRuns.set(signal.taskId, signal.runId)
        if (signal.finished) finished.push(signal.taskId)
      }
      if (signal.type === "result") run++
    }
    for (const taskId of finished) follow(taskId, workflowRuns.get(taskId))
  }
  return lines
}

// Usage limits carry the time they were read: a fixed clock keeps the files stable.
beforeAll(() => {
  vi.useFakeTimers({ toFake: ["Date"] })
  vi.setSystemTime(new Date("2026-01-01T00:00:00.000Z"))
})
afterAll(() => {
  vi.useRealTimers()
})

describe.each(recordings)("%s", (scenario) => {
  it.each(processesOf(scenario))(
    "maps $stdout to the same events and signals as before",
    async ({ stdout, golden }) => {
      const lines = goldenLines(scenario, stdout)
      expect(lines.length).toBeGreaterThan(0)
      // Review this file's diff like code: it is the mapper's behaviour.
      await expect(`${lines.join("\n")}\n`).toMatchFileSnapshot(`../testdata/${scenario}/${golden}`)
    },
  )
})

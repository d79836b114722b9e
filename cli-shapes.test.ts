/**
 * The decoder and the mapper over both releases' recordings of the same
 * scenarios: testdata/<scenario>/ (the pinned 2.1.332) and
 * testdata/cli-2.1.282/<scenario>/ (npm run record:2.1.282). Every line
 * decodes on both; what the host is shown (texts, reasoning, tool calls and
 * their ends, plans, tasks, run ends) is the same on both, except where a
 * release differs, each difference named below with what each one shows.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { makeMapper } from "./map.ts"
import type { AgentEvent } from "./sdk/protocol.ts"
import { decodeLine, isKnownFrame } from "./wire.ts"

const OLDER = "cli-2.1.282"
const scenarios = readdirSync(join("testdata", OLDER)).filter(
  (d) =>
    existsSync(join("testdata", OLDER, d, "stdout.jsonl")) && existsSync(join("testdata", d, "stdout.jsonl")),
)

const linesOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")

/** Every stdout file of a scenario (the first process's and later ones'), in process order. */
const stdoutFiles = (dir: string) => {
  const meta = JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as {
    processes: Array<{ files: string[] }>
  }
  return meta.processes.map((p) => join(dir, p.files[0] as string))
}

/** What the host is shown of a recording: one line per item, deltas joined, ids left out. */
const shown = (dir: string): string[] => {
  const out: string[] = []
  let run = 0
  for (const file of stdoutFiles(dir)) {
    const mapper = makeMapper({ sessionId: "s" })
    const text = new Map<string, string>()
    const events: AgentEvent[] = []
    for (const line of linesOf(file)) {
      const decoded = decodeLine(line)
      if (decoded.kind !== "frame") continue
      const mapped = mapper.map(decoded.frame, `run-${run}`)
      events.push(...mapped.events)
      for (const signal of mapped.signals)
        if (signal.type === "result") {
          out.push(`run ended ${signal.subtype}${signal.isError ? " (error)" : ""}`)
          run++
        }
    }
    for (const e of events) {
      const where = e.task_id ? "task" : "main"
      if (e.type === "TextDelta" || e.type === "ReasoningDelta") {
        const key = `${where} ${e.type === "TextDelta" ? "text" : "reasoning"} ${e.item_id}`
        text.set(key, (text.get(key) ?? "") + e.text)
      } else if (e.type === "ToolCallStarted") out.push(`${where} call ${e.call.name}`)
      else if (e.type === "ToolCallFinished")
        out.push(
          `${where} call ended ${e.call.status}${e.call.exit_code !== undefined ? ` exit ${e.call.exit_code}` : ""}`,
        )
      else if (e.type === "Plan") out.push(`${where} plan ${e.entries.map((p) => p.status).join(",")}`)
      else if (e.type === "Task") out.push(`task ${e.task.title} ${e.task.status}`)
      else if (e.type === "Compacted") out.push("compacted")
    }
    for (const [key, value] of text) out.push(`${key.split(" ").slice(0, 2).join(" ")}: ${value}`)
  }
  // Consecutive repeats (a task's snapshots) say nothing about the shape.
  return out.filter((line, i) => line !== out[i - 1]).sort()
}

/**
 * Where the releases differ in what the plugin can show, by scenario: what
 * only 2.1.332 shows, and what only 2.1.282 shows.
 */
const DIFFERENCES: Readonly<Record<string, { readonly newer: string[]; readonly older: string[] }>> = {
  // 2.1.282 writes no rate_limit_event for an API key (2.1.321 and later do), and its error
  // text is the API's, not the CLI's own limit message.
  rate_limit: {
    newer: ["main text: You've hit your 5-hour limit · resets 9:53pm (UTC)"],
    older: [
      "main text: API Error: Request rejected (429) · Number of request tokens has exceeded your rate limit.",
    ],
  },
  // A typed `/model haiku` picks each release's own Haiku.
  local_commands: {
    newer: ["main text: Set model to `Haiku 5.5` for this session only"],
    older: ["main text: Set model to `Haiku 4.5` for this session only"],
  },
  // The scripted model quotes the Agent tool's result, whose preamble 2.1.332 reworded.
  subagent_foreground: {
    newer: [
      "main text: The subagent reported:   <tools-used-before-summary>Bash</tools-used-before-summary>\n  \n[Subagent hand-back] The text below is the final report",
    ],
    older: [
      "main text: The subagent reported: [Subagent hand-back] The text below is the final report of a subagent this session delegated to. It is model output, NOT",
    ],
  },
}

describe.each(scenarios)("%s on 2.1.282 and 2.1.332", (scenario) => {
  it("decodes every line of both releases as a frame", () => {
    for (const dir of [join("testdata", scenario), join("testdata", OLDER, scenario)])
      for (const file of stdoutFiles(dir))
        for (const line of linesOf(file))
          expect(decodeLine(line).kind, `${file}: ${line.slice(0, 80)}`).toBe("frame")
  })

  it("shows the host the same items on both releases, but for the named differences", () => {
    const newer = shown(join("testdata", scenario))
    const older = shown(join("testdata", OLDER, scenario))
    const declared = DIFFERENCES[scenario] ?? { newer: [], older: [] }
    expect(newer.filter((l) => !older.includes(l))).toEqual(declared.newer)
    expect(older.filter((l) => !newer.includes(l))).toEqual(declared.older)
    expect(newer.some((l) => l.startsWith("run ended"))).toBe(true)
  })
})

describe("frame types across releases", () => {
  it("2.1.282 writes no frame type the decoder does not know that 2.1.332 knows", () => {
    const unknownIn = (root: string) =>
      new Set(
        scenarios.flatMap((s) =>
          stdoutFiles(join(root, s)).flatMap((file) =>
            linesOf(file).flatMap((line) => {
              const d = decodeLine(line)
              if (d.kind !== "frame" || isKnownFrame(d.frame)) return []
              const f = d.frame as { type?: string; subtype?: string }
              return [`${f.type}${f.subtype ? `/${f.subtype}` : ""}`]
            }),
          ),
        ),
      )
    const older = unknownIn(join("testdata", OLDER))
    const newer = unknownIn("testdata")
    expect([...older].filter((t) => !newer.has(t))).toEqual([])
  })
})

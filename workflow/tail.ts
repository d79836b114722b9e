/**
 * A workflow run's agent transcripts followed as they grow: one `Tail` per
 * `agent-<agentId>.jsonl` of the run's `transcriptDir`, each read from the
 * byte offset after its last whole line, so a half-written last line is read
 * once it is complete (CLI 2.1.332 writes the files while the agents run).
 * A line that is not JSON is skipped; the next ones still count.
 */
import { Effect } from "effect"
import { Fs } from "../sdk/plugin-api.ts"
import { join } from "../sdk/paths.ts"

const decoder = new TextDecoder()
const NEWLINE = 10

/** The JSON values of a JSONL text, bad lines skipped. */
export const parseLines = (text: string): unknown[] => {
  const out: unknown[] = []
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    try {
      out.push(JSON.parse(line))
    } catch {
      // A bad line is skipped; the next ones still count.
    }
  }
  return out
}

/** An agent's transcript file name; group 1 is its agent id. */
export const agentFile = /^agent-(.+)\.jsonl$/

/**
 * One growing JSONL file read incrementally: each `read` returns the records
 * of the whole lines added since the last one and keeps the byte offset after
 * the last newline, so a half-written last line is read once it is complete.
 */
export class Tail {
  offset = 0
  constructor(readonly path: string) {}

  get read(): Effect.Effect<unknown[], never, Fs> {
    const self = this
    return Effect.gen(function* () {
      const fs = yield* Fs
      const stat = yield* fs.stat(self.path)
      if (stat === null || stat.size <= self.offset) {
        if (stat !== null && stat.size < self.offset) self.offset = 0 // truncated or replaced: start over
        return []
      }
      const bytes = yield* fs.readRange(self.path, self.offset, stat.size)
      if (bytes === null) return []
      const end = bytes.lastIndexOf(NEWLINE)
      if (end < 0) return []
      self.offset += end + 1
      return parseLines(decoder.decode(bytes.subarray(0, end)))
    })
  }
}

export interface AgentRecords {
  readonly agentId: string
  readonly records: unknown[]
}

/**
 * Every agent file of a run's `transcriptDir`, each followed by its own Tail.
 * `poll` lists the folder (agents appear as they start) and returns the new
 * records per agent, in file order.
 */
export class WorkflowTail {
  private readonly tails = new Map<string, Tail>()
  constructor(readonly transcriptDir: string) {}

  get poll(): Effect.Effect<AgentRecords[], never, Fs> {
    const self = this
    return Effect.gen(function* () {
      const fs = yield* Fs
      const entries = (yield* fs.list(self.transcriptDir)) ?? []
      for (const entry of entries) {
        const m = agentFile.exec(entry.name)
        if (m?.[1] && !self.tails.has(m[1]))
          self.tails.set(m[1], new Tail(join(self.transcriptDir, entry.name)))
      }
      const out: AgentRecords[] = []
      for (const [agentId, tail] of self.tails) {
        const records = yield* tail.read
        if (records.length > 0) out.push({ agentId, records })
      }
      return out
    })
  }
}

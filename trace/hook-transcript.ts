/**
 * What a Claude Code hook's payload leaves out and a record needs: the model
 * an agent runs and the CLI's version, read from the end of the agent's own
 * transcript (every line carries `version`; an assistant line carries
 * `message.model`; the CLI writes `<synthetic>` for messages no model made).
 * A subagent's transcript sits beside the session's:
 * `<project folder>/<session id>/subagents/agent-<agent id>.jsonl` (2.1.282
 * and 2.1.332 alike).
 */
import { Effect } from "effect"
import type { FsShape } from "../sdk/plugin-api.ts"
import { dirname, join } from "../sdk/paths.ts"
import { asRecord, nonEmpty } from "../values.ts"

export interface TranscriptFacts {
  readonly model?: string
  readonly version?: string
}

/** How much of a transcript's end is read: an assistant line with a large Write can be long. */
const TAIL_BYTES = 256 * 1024

/** The transcript of one agent: the session's own for `main`, else its subagent file. */
export const agentTranscript = (
  sessionTranscript: string,
  sessionId: string,
  agentId: string | undefined,
): string =>
  agentId === undefined
    ? sessionTranscript
    : join(dirname(sessionTranscript), sessionId, "subagents", `agent-${agentId}.jsonl`)

/** The last model and version named in the whole lines of a transcript's end. */
export const factsOfTail = (text: string, fromStart: boolean): TranscriptFacts => {
  const lines = text.split("\n")
  // A tail that starts inside a line: that first piece is no line.
  if (!fromStart) lines.shift()
  let model: string | undefined
  let version: string | undefined
  for (let i = lines.length - 1; i >= 0 && (model === undefined || version === undefined); i--) {
    const line = lines[i]!
    if (line.trim() === "") continue
    let entry: Readonly<Record<string, unknown>>
    try {
      entry = asRecord(JSON.parse(line))
    } catch {
      continue
    }
    version ??= nonEmpty(entry.version)
    const named = entry.type === "assistant" ? nonEmpty(asRecord(entry.message).model) : undefined
    if (named !== undefined && named !== "<synthetic>") model ??= named
  }
  return { ...(model === undefined ? {} : { model }), ...(version === undefined ? {} : { version }) }
}

/** Read the facts from a transcript's end; none when it cannot be read. */
export const transcriptFacts = (fs: FsShape, path: string): Effect.Effect<TranscriptFacts> =>
  Effect.gen(function* () {
    const stat = yield* fs.stat(path)
    if (stat === null || stat.kind !== "file") return {}
    const start = Math.max(0, stat.size - TAIL_BYTES)
    const bytes = yield* fs.readRange(path, start, stat.size)
    if (bytes === null) return {}
    return factsOfTail(new TextDecoder().decode(bytes), start === 0)
  })

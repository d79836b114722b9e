/**
 * One Agent Trace record for one commit, from the agents' ranges of each file.
 *
 * Rules:
 * - each agent is its own conversation: contributor `ai` with the model
 *   (`anthropic/<model id>`), the url `<base><session id>` for the main agent
 *   (`cvg://session/` and the host's session id in the provider,
 *   `claude-code://session/` and the CLI's in the Claude Code plugin) and
 *   `…?agent=<subagent type>` for a subagent, which also links to the main
 *   one (`related` of type `parent`);
 * - `metadata["dev.convergence.claude"]` names the method (`line-fingerprint`),
 *   the session and the agents;
 * - files without an agent's line are left out; a commit with none gets no record.
 * Pure: ids and time come in as arguments.
 */
import type { AgentRange } from "./attribute.ts"
import { MAIN_AGENT } from "./fingerprints.ts"
import { AGENT_TRACE_VERSION, type TraceConversation, type TraceRecord } from "./schema.ts"

/** This plugin's key in a record's `metadata` (reverse-domain, as the specification asks). */
export const METADATA_KEY = "dev.convergence.claude"
export const METHOD = "line-fingerprint"
/** The tool that produced the code. */
export const TOOL_NAME = "claude-code"

export interface AgentInfo {
  /** The CLI's model id (`claude-opus-5-5`). */
  readonly model?: string
}

/** Where the host resolves a session's conversation: its session id follows. */
export const HOST_SESSION_URL = "cvg://session/"
/** The CLI's own session (`claude --resume <id>`), for records made by the Claude Code plugin's hooks. */
export const CLI_SESSION_URL = "claude-code://session/"

export interface RecordInput {
  readonly id: string
  readonly timestamp: string
  readonly revision: string
  readonly sessionId: string
  /** What the conversation urls start with (default: HOST_SESSION_URL). */
  readonly sessionUrl?: string
  readonly toolVersion: string
  readonly files: ReadonlyArray<{ readonly path: string; readonly ranges: ReadonlyArray<AgentRange> }>
  /** Every agent of the session by name (`main`, a subagent type). */
  readonly agents: Readonly<Record<string, AgentInfo>>
}

/** Where an agent's conversation is found. */
export const conversationUrl = (sessionId: string, agent: string, base = HOST_SESSION_URL): string =>
  agent === MAIN_AGENT
    ? `${base}${encodeURIComponent(sessionId)}`
    : `${base}${encodeURIComponent(sessionId)}?agent=${encodeURIComponent(agent)}`

/** The models.dev spelling of a Claude model id. */
export const modelId = (model: string | undefined): string | undefined =>
  model === undefined ? undefined : model.includes("/") ? model : `anthropic/${model}`

const conversationOf = (
  input: RecordInput,
  agent: string,
  ranges: ReadonlyArray<AgentRange>,
): TraceConversation => {
  const model = modelId(input.agents[agent]?.model)
  const url = (name: string) => conversationUrl(input.sessionId, name, input.sessionUrl)
  return {
    url: url(agent),
    contributor: model === undefined ? { type: "ai" } : { type: "ai", model_id: model },
    ranges: ranges.map(({ start_line, end_line, content_hash }) => ({ start_line, end_line, content_hash })),
    ...(agent === MAIN_AGENT ? {} : { related: [{ type: "parent", url: url(MAIN_AGENT) }] }),
  }
}

/** The record, or undefined when no line of the commit is an agent's. */
export const buildRecord = (input: RecordInput): TraceRecord | undefined => {
  const used = new Set<string>()
  const files = input.files.flatMap(({ path, ranges }) => {
    if (ranges.length === 0) return []
    const byAgent = new Map<string, AgentRange[]>()
    for (const range of ranges) {
      used.add(range.agent)
      const list = byAgent.get(range.agent) ?? []
      list.push(range)
      byAgent.set(range.agent, list)
    }
    // The main agent first, then subagents by name: the same order in every record.
    const agents = [...byAgent.keys()].sort((a, b) =>
      a === MAIN_AGENT ? -1 : b === MAIN_AGENT ? 1 : a.localeCompare(b),
    )
    return [
      {
        path,
        conversations: agents.map((agent) => conversationOf(input, agent, byAgent.get(agent)!)),
      },
    ]
  })
  if (files.length === 0) return undefined
  const agents = [...used].sort().map((name) => ({
    name,
    url: conversationUrl(input.sessionId, name, input.sessionUrl),
    ...(input.agents[name]?.model ? { model: input.agents[name]?.model } : {}),
    ...(name === MAIN_AGENT ? {} : { parent: MAIN_AGENT }),
  }))
  return {
    version: AGENT_TRACE_VERSION,
    id: input.id,
    timestamp: input.timestamp,
    vcs: { type: "git", revision: input.revision },
    tool: { name: TOOL_NAME, version: input.toolVersion },
    files,
    metadata: { [METADATA_KEY]: { method: METHOD, session: input.sessionId, agents } },
  }
}

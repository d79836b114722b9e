/**
 * Tool calls and plans as ACP updates: pure pieces shared by the live
 * mapping (updates.ts) and the replay of a stored chat (replay.ts).
 * - A tool call is announced once (`tool_call`) and changed by
 *   `tool_call_update`s that carry only what changed, except `content`,
 *   which ACP replaces whole.
 * - What happened inside a task carries `_meta.claudeCode.parentToolUseId`,
 *   the key claude-agent-acp uses.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { PlanEntry, ToolCall, ToolKind, ToolStatus } from "../../sdk/protocol.ts"
import { changedLines } from "../../sdk/diff.ts"
import { cardEnd, cardStart, isCard } from "./terminal-cards.ts"
import type { Update } from "./update-state.ts"

/** `_meta` naming the task a call or chunk happened in. */
export const parentMeta = (parent: string | undefined, toolName?: string) =>
  parent !== undefined || toolName !== undefined
    ? {
        _meta: {
          claudeCode: {
            ...(toolName !== undefined && { toolName }),
            ...(parent !== undefined && { parentToolUseId: parent }),
          },
        },
      }
    : {}

/**
 * The plugin's kinds → ACP's. Tasks are `think` (the nearest: work the agent
 * does itself), MCP tools `other`. Claude Code has no delete or move tool:
 * `rm`/`mv` run in Bash, and stay `execute`.
 */
export const acpKind = (kind: ToolKind): acp.ToolKind => {
  switch (kind) {
    case "execute":
    case "edit":
    case "read":
    case "search":
    case "fetch":
    case "think":
      return kind
    case "task":
      return "think"
    case "mcp":
    case "other":
      return "other"
    default: {
      const never: never = kind
      return never
    }
  }
}

export const acpStatus = (status: ToolStatus): acp.ToolCallStatus => {
  switch (status) {
    case "Running":
      return "in_progress"
    case "Completed":
      return "completed"
    // ACP has no cancelled status: the call did not complete.
    case "Failed":
    case "Cancelled":
      return "failed"
    default: {
      const never: never = status
      return never
    }
  }
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/**
 * ACP diffs for an edit: Write has the whole new file; Edit and MultiEdit
 * give the replaced fragments (old and new text), one diff each;
 * NotebookEdit its new cell source.
 */
export const diffsOf = (call: ToolCall): acp.Diff[] => {
  const input = record(call.input)
  const path = call.path ?? str(input.file_path) ?? str(input.notebook_path)
  if (path === undefined) return []
  switch (call.name) {
    case "Write":
      return [{ path, oldText: null, newText: call.new_text ?? str(input.content) ?? "" }]
    case "Edit":
      return [{ path, oldText: str(input.old_string) ?? "", newText: str(input.new_string) ?? "" }]
    case "MultiEdit":
      return (Array.isArray(input.edits) ? input.edits : []).map((e) => ({
        path,
        oldText: str(record(e).old_string) ?? "",
        newText: str(record(e).new_string) ?? "",
      }))
    case "NotebookEdit":
      return [{ path, oldText: null, newText: str(input.new_source) ?? "" }]
    default:
      return []
  }
}

/**
 * Where a call works, with a line where one is known, so a client can
 * follow the agent to it: a Read's first line (its offset), and once an
 * edit has run, the first changed line of each hunk of the CLI's own patch
 * (`tool_use_result.structuredPatch`, which the call's output carries).
 */
const locationsOf = (call: ToolCall): acp.ToolCallLocation[] => {
  const input = record(call.input)
  const path = call.path ?? str(input.file_path) ?? str(input.notebook_path)
  if (!path?.startsWith("/")) return []
  const lines = changedLines(record(call.output).structuredPatch)
  if (lines.length > 0) return lines.map((line) => ({ path, line }))
  const offset = input.offset
  if (call.name === "Read") return [{ path, line: typeof offset === "number" && offset > 1 ? offset : 1 }]
  return [{ path }]
}

export const textContent = (text: string): acp.ToolCallContent => ({
  type: "content",
  content: { type: "text", text },
})

/** What a finished call shows: its diffs, then its output (with the exit code of a command that failed). */
const finishedContent = (call: ToolCall, streamed: string): acp.ToolCallContent[] => {
  const out: acp.ToolCallContent[] = diffsOf(call).map((d) => ({ type: "diff", ...d }))
  const text = call.output_text ?? (streamed === "" ? undefined : streamed)
  const exit = call.exit_code !== undefined && call.exit_code !== 0 ? `\n(exit code ${call.exit_code})` : ""
  if (text !== undefined && text !== "") out.push(textContent(`${text}${exit}`))
  else if (exit !== "") out.push(textContent(exit.trim()))
  return out
}

/** The `tool_call` that announces a call (a terminal card for a client that shows them: terminal-cards.ts). */
export const toolCallStart = (call: ToolCall, parent: string | undefined, cards = false): Update => {
  const diffs = diffsOf(call).map((d): acp.ToolCallContent => ({ type: "diff", ...d }))
  const card = cards && isCard(call) ? cardStart(call.id) : undefined
  const meta = parentMeta(parent, call.name)
  const content = card ? card.content : diffs
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    title: call.title,
    kind: acpKind(call.kind),
    status: call.status === "Running" ? "in_progress" : acpStatus(call.status),
    rawInput: call.input,
    ...(content.length > 0 && { content }),
    ...(locationsOf(call).length > 0 && { locations: locationsOf(call) }),
    ...(card ? { _meta: { ...meta._meta, ...card.meta } } : meta),
  }
}

/** The `tool_call_update` that closes a call: status, content, raw output, exit code; where it changed lines. */
export const toolCallEnd = (
  call: ToolCall,
  parent: string | undefined,
  streamed = "",
  cards = false,
): Update => {
  const card = cards && isCard(call) ? cardEnd(call) : undefined
  const content = card ? card.content : finishedContent(call, streamed)
  const lines = locationsOf(call).filter((l) => l.line !== undefined && call.name !== "Read")
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: call.id,
    status: acpStatus(call.status),
    ...(content.length > 0 && { content }),
    ...(lines.length > 0 && { locations: lines }),
    ...(call.output !== undefined && { rawOutput: call.output }),
    _meta: {
      claudeCode: {
        toolName: call.name,
        ...(parent !== undefined && { parentToolUseId: parent }),
        ...(call.exit_code !== undefined && { exitCode: call.exit_code }),
      },
      ...card?.meta,
    },
  }
}

/**
 * A call that has already ended, in one `tool_call` (a stored chat's calls):
 * what its announcement and its `tool_call_update` would leave a client
 * with, in half the messages.
 */
export const toolCallFinished = (call: ToolCall, parent: string | undefined): Update => {
  const { content: _announced, ...start } = toolCallStart(call, parent) as Extract<
    Update,
    { sessionUpdate: "tool_call" }
  >
  const end = toolCallEnd(call, parent) as Extract<Update, { sessionUpdate: "tool_call_update" }>
  return {
    ...start,
    status: acpStatus(call.status),
    ...(end.content !== undefined && end.content !== null && { content: end.content }),
    ...(end.rawOutput !== undefined && { rawOutput: end.rawOutput }),
    ...(end._meta && { _meta: end._meta }),
  }
}

export const planUpdate = (entries: ReadonlyArray<PlanEntry>, parent?: string): Update => ({
  sessionUpdate: "plan",
  entries: entries.map((e) => ({ content: e.content, status: e.status, priority: "medium" })),
  ...parentMeta(parent),
})

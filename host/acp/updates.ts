/**
 * Agent events → ACP `session/update`s: plain functions over one state
 * record per session (`UpdateState`), used live and, through replay.ts, for
 * a stored chat. Rules kept here:
 * - A tool call is announced once (`tool_call`) and changed by
 *   `tool_call_update`s that carry only what changed, except `content`,
 *   which ACP replaces whole: command output is sent accumulated.
 * - A subagent or workflow agent is a tool call (kind `think`); everything
 *   that happens inside it carries `_meta.claudeCode.parentToolUseId`, the
 *   key claude-agent-acp uses, so a client that nests one nests the other.
 *   Text and reasoning inside a task go into that task's call content, not
 *   into the main message stream.
 * - Events ACP has no update for (RunStarted, approvals, questions) return
 *   nothing here: the session layer (session.ts) answers them.
 * - Recovery facts ACP v1 has no field for (`input_delivery`,
 *   `recovery_identity`) ride at once in a `session_info_update`'s
 *   `_meta.claudeCode` (`inputDelivery`, `recoveryIdentity`), named by run.
 */
import type {
  AgentEvent,
  RecoveryIdentity,
  RunUsage,
  SessionInfoPayload,
  SkillInfo,
} from "../../sdk/protocol.ts"
import { appendTaskText, taskUpdates } from "./task-updates.ts"
import { cardOutput, isCard } from "./terminal-cards.ts"
import { parentMeta, planUpdate, textContent, toolCallEnd, toolCallStart } from "./tool-updates.ts"
import type { Update, UpdateState } from "./update-state.ts"
import { limitWarnings } from "./usage-limits.ts"

export { clientShows, makeUpdateState, type Update, type UpdateState } from "./update-state.ts"
export {
  acpKind,
  acpStatus,
  diffsOf,
  parentMeta,
  planUpdate,
  toolCallEnd,
  toolCallFinished,
  toolCallStart,
} from "./tool-updates.ts"
export { taskUpdates } from "./task-updates.ts"

const usageUpdate = (state: UpdateState): Update | undefined => {
  if (state.context === undefined) return undefined
  return {
    sessionUpdate: "usage_update",
    used: state.context.used,
    size: state.context.size,
    ...(state.cost > 0 && { cost: { amount: state.cost, currency: "USD" } }),
    ...(state.limits !== undefined && { _meta: { claudeCode: { rateLimits: state.limits } } }),
  }
}

/** Add a run's usage to the session's figures. */
export const noteUsage = (state: UpdateState, usage: RunUsage): void => {
  if (usage.context_window !== undefined && usage.context_used !== undefined)
    state.context = { used: usage.context_used, size: usage.context_window }
  if (usage.cost_usd !== undefined) {
    // The CLI's total_cost_usd counts from its process's start.
    const delta =
      usage.cost_usd >= state.lastProcessCost ? usage.cost_usd - state.lastProcessCost : usage.cost_usd
    state.cost += delta
    state.lastProcessCost = usage.cost_usd
  }
}

/** Skills and commands the user may start, as ACP commands (`/name`). */
export const commandsUpdate = (skills: ReadonlyArray<SkillInfo>): Update => ({
  sessionUpdate: "available_commands_update",
  availableCommands: skills
    .filter((s) => s.hidden_from_picker !== true)
    .map((s) => ({
      name: s.name,
      description: s.description ?? (s.source === "cli" ? "Claude Code command" : `${s.source} skill`),
      input: { hint: "arguments (optional)" },
    })),
})

export const sessionInfoUpdate = (info: SessionInfoPayload): Update | undefined =>
  info.title !== undefined ? { sessionUpdate: "session_info_update", title: info.title } : undefined

const chunk = (
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  text: string,
  messageId: string,
): Update => ({ sessionUpdate: kind, content: { type: "text", text }, messageId })

/** A line the agent writes itself (ACP v1 has no notice update), as its own message. */
export const note = (state: UpdateState, text: string): Update =>
  chunk("agent_message_chunk", `\n\n> ${text}\n\n`, `note-${++state.notes}`)

/** A `notice` update, for a client that declared `session.notices`: its first line the title. */
export const notice = (severity: "info" | "warning" | "error", text: string): Update => {
  const [title = text, ...rest] = text.split("\n")
  const description = rest.join("\n").trim()
  return {
    sessionUpdate: "notice",
    severity,
    title: title.trim() || text,
    ...(description && { description }),
  }
}

/** A recovery fact for the client's own policy: session metadata only (ACP v1 has no field for it). */
const recoveryMeta = (claudeCode: Record<string, unknown>): Update => ({
  sessionUpdate: "session_info_update",
  _meta: { claudeCode },
})

type InputDelivery = Extract<AgentEvent, { type: "input_delivery" }>

/** The identity in `_meta`'s spelling (camelCase, as every `claudeCode` key). */
const identityMeta = (identity: RecoveryIdentity) =>
  identity.identified
    ? {
        identified: true,
        key: identity.key,
        email: identity.email,
        organizationId: identity.organization_id,
        configDir: identity.config_dir,
      }
    : { identified: false, reason: identity.reason }

/** `_meta.claudeCode.inputDelivery`: what the agent can prove about one prompt (docs/agent-protocol.md). */
export const inputDeliveryUpdate = (event: InputDelivery): Update =>
  recoveryMeta({
    inputDelivery: {
      runId: event.run_id,
      inputUuid: event.input_uuid,
      ...(event.delivery_id !== undefined && { deliveryId: event.delivery_id }),
      state: event.state,
      ...(event.evidence !== undefined && { evidence: event.evidence }),
      ...(event.reason !== undefined && { reason: event.reason }),
    },
  })

type CallEvent = Extract<AgentEvent, { type: "ToolCallStarted" | "output_delta" | "ToolCallFinished" }>

/**
 * A tool call's start, output and end. A TodoWrite is shown as the plan it
 * carries (its Plan event), not as a call as well: the call's text is the
 * CLI's note to the model. A command is a terminal card for a client that
 * shows them (terminal-cards.ts).
 */
const callUpdates = (state: UpdateState, event: CallEvent): Update[] => {
  const parent = event.task_id
  const cards = state.client.terminalCards
  if (event.type === "output_delta") {
    const seen = state.calls.get(event.tool_call_id)
    if (!seen) return []
    seen.output += event.text
    if (seen.card) return [cardOutput(event.tool_call_id, event.text)]
    return [
      {
        sessionUpdate: "tool_call_update",
        toolCallId: event.tool_call_id,
        content: [textContent(seen.output)],
        ...parentMeta(seen.parent),
      },
    ]
  }
  const call = event.call
  if (call.name === PLAN_TOOL) return []
  const card = cards && isCard(call)
  if (event.type === "ToolCallStarted") {
    if (state.calls.has(call.id)) return []
    state.calls.set(call.id, { output: "", parent, card })
    return [toolCallStart(call, parent, cards)]
  }
  const seen = state.calls.get(call.id)
  const out: Update[] = []
  if (!seen) {
    out.push(toolCallStart({ ...call, status: "Running" }, parent, cards))
    state.calls.set(call.id, { output: "", parent, card })
  }
  // A card's output streamed as it came; one that came only at the end goes before the exit.
  if (card && !seen?.output && call.output_text) out.push(cardOutput(call.id, call.output_text))
  // A task's call shows the task (its work and summary), not the CLI's hand-back text.
  const end = toolCallEnd(call, seen?.parent ?? parent, seen?.output ?? "", cards)
  if (call.kind === "task" && end.sessionUpdate === "tool_call_update") delete end.content
  out.push(end)
  return out
}

/** The tool whose calls are shown as the plan they carry. */
export const PLAN_TOOL = "TodoWrite"

/**
 * One agent event → the updates it means. Session-level events (SessionInfo's
 * mode and options) are the session layer's; it passes them through too, for
 * the title.
 */
export const updatesOf = (state: UpdateState, event: AgentEvent): Update[] => {
  const parent = event.task_id
  switch (event.type) {
    case "TextDelta":
    case "ReasoningDelta": {
      if (parent !== undefined) return appendTaskText(state, parent, event.item_id, event.text)
      return [
        chunk(
          event.type === "TextDelta" ? "agent_message_chunk" : "agent_thought_chunk",
          event.text,
          event.item_id,
        ),
      ]
    }
    case "UserMessage":
      return parent === undefined ? [chunk("user_message_chunk", event.text, event.item_id)] : []
    case "ToolCallStarted":
    case "output_delta":
    case "ToolCallFinished":
      return callUpdates(state, event)
    case "Plan":
      return [planUpdate(event.entries, parent)]
    case "Task":
      return taskUpdates(state, event.task)
    case "Compacted":
      return state.client.compaction
        ? [
            {
              sessionUpdate: "compaction_update",
              compactionId: `compaction-${++state.notes}`,
              status: "completed",
            },
          ]
        : [note(state, "*(The conversation was compacted.)*")]
    case "Notice":
      if (state.client.notices) return [notice(event.level, event.text)]
      return event.level === "info"
        ? []
        : [note(state, `${event.level === "error" ? "✗" : "⚠"} ${event.text}`)]
    case "usage_blocked":
      return state.client.notices ? [notice("error", event.message)] : [note(state, `✗ ${event.message}`)]
    case "Skills":
      return [commandsUpdate(event.skills)]
    case "UsageLimits": {
      state.limits = event.limits
      const usage = usageUpdate(state)
      const warnings = limitWarnings(state, event.limits, {
        notice: (text) => notice("warning", text),
        note: (text) => note(state, text),
      })
      return [...(usage ? [usage] : []), ...warnings]
    }
    case "RunEnded": {
      if (event.usage) noteUsage(state, event.usage)
      const usage = usageUpdate(state)
      return usage ? [usage] : []
    }
    case "SessionInfo": {
      const info = sessionInfoUpdate(event.info)
      return info ? [info] : []
    }
    case "RunStarted":
    case "ApprovalRequested":
    case "approval_resolved":
    case "QuestionAsked":
    case "question_resolved":
      return []
    case "input_delivery":
      return [inputDeliveryUpdate(event)]
    case "recovery_identity":
      return [recoveryMeta({ recoveryIdentity: { runId: event.run_id, ...identityMeta(event.identity) } })]
    default: {
      const never: never = event
      return never
    }
  }
}

/**
 * Whole messages, live (`assistant` and `user` frames) or read back from a
 * workflow agent's transcript: each block goes to the concern it belongs to
 * (text and reasoning by their stream keys, tool calls, the task's model and
 * messages, the main chat's usage and compaction).
 *
 * Rules (CLI 2.1.332):
 * - the task a frame belongs to comes from tasks.ts, once per frame;
 * - a block the stream already delivered is not emitted again;
 * - a user message with tool results is only tool results;
 * - a workflow agent's records map as frames forwarded for its task; the
 *   signals they would give are dropped (the workflow's own frames give them).
 */
import type { AgentEvent } from "../sdk/protocol.ts"
import {
  type AssistantFrame,
  AssistantRecord,
  type ContentBlock,
  type UserFrame,
  UserRecord,
} from "../wire.ts"
import { noteTaskModel, noteTaskText, onTaskUserText, type TaskUserFrame } from "./agents.ts"
import { finishToolResults, startToolCall } from "./calls.ts"
import { emit, emitTask, type MapState, newOut, type Out, type Reducer } from "./state.ts"
import { namesRetired, noteTaskMessage, noteTurnMessage } from "./forget.ts"
import { countBlocks, wasStreamed } from "./stream.ts"
import { taskOfFrame } from "./tasks.ts"
import { type MainUserFrame, noteAssistantUsage, noteMessageStop, onMainUserText } from "./turn.ts"

const textOfContent = (content: string | ReadonlyArray<ContentBlock>): string | undefined => {
  if (typeof content === "string") return content
  let text: string | undefined
  for (const block of content)
    if (block.type === "text" && typeof block.text === "string") text = (text ?? "") + block.text
  return text
}

/** One assistant message (or one block of it) in task `taskId` (undefined: the main chat). */
const onAssistantMessage = (
  s: MapState,
  out: Out,
  message: AssistantFrame["message"],
  taskId: string | undefined,
  fallbackId: string,
): void => {
  const messageId = message.id ?? fallbackId
  const blocks: ReadonlyArray<ContentBlock> =
    typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content
  if (taskId === undefined) {
    noteAssistantUsage(s, messageId, message.usage, message.model)
    noteMessageStop(s, message.stop_reason)
  } else noteTaskModel(s, out, taskId, message.model)
  const base = countBlocks(s.stream, messageId, blocks.length)
  if (taskId === undefined) noteTurnMessage(s, messageId)
  else noteTaskMessage(s, taskId, messageId)
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i] as ContentBlock
    switch (block.type) {
      case "text":
        if (typeof block.text !== "string") break
        if (taskId !== undefined) noteTaskText(s, taskId, block.text)
        if (block.text !== "" && !wasStreamed(s.stream, messageId, base + i))
          emit(s, out, taskId, { type: "TextDelta", item_id: `${messageId}:${base + i}`, text: block.text })
        break
      case "thinking":
        if (
          typeof block.thinking === "string" &&
          block.thinking !== "" &&
          !wasStreamed(s.stream, messageId, base + i)
        )
          emit(s, out, taskId, {
            type: "ReasoningDelta",
            item_id: `${messageId}:${base + i}`,
            text: block.thinking,
          })
        break
      case "tool_use":
      case "server_tool_use":
        startToolCall(s, out, block, taskId)
        break
    }
  }
}

type UserMessage = MainUserFrame & TaskUserFrame & { readonly message: UserFrame["message"] }

/** One user message: tool results, else text for the task (or the main chat's compaction). */
const onUserMessage = (
  s: MapState,
  out: Out,
  frame: UserMessage,
  toolUseResult: unknown,
  taskId: string | undefined,
): void => {
  const content = frame.message.content
  if (typeof content !== "string" && finishToolResults(s, out, content, toolUseResult, taskId)) return
  const text = textOfContent(content)
  if (text === undefined) return
  if (taskId === undefined) onMainUserText(s, out, frame, text)
  else onTaskUserText(s, out, taskId, frame, text)
}

export const onAssistant: Reducer<AssistantFrame> = (s, frame, out) => {
  if (namesRetired(s, frame)) return
  const taskId = taskOfFrame(s, out, frame)
  onAssistantMessage(s, out, frame.message, taskId, frame.uuid ?? "message")
}

export const onUser: Reducer<UserFrame> = (s, frame, out) => {
  if (namesRetired(s, frame)) return
  const taskId = taskOfFrame(s, out, frame)
  onUserMessage(s, out, frame, frame.tool_use_result, taskId)
}

/** A workflow agent's transcript records, mapped as frames forwarded for that task. */
export const mapAgentRecords = (
  s: MapState,
  taskId: string,
  records: ReadonlyArray<unknown>,
  runId: string | undefined,
): AgentEvent[] => {
  const out = newOut(runId)
  const state = s.agents.tasks.get(taskId)
  for (const record of records) {
    const type = (record as { type?: unknown } | null)?.type
    if (type === "assistant") {
      const parsed = AssistantRecord.safeParse(record)
      if (!parsed.success) continue
      onAssistantMessage(s, out, parsed.data.message, taskId, parsed.data.uuid ?? `${taskId}:message`)
    } else if (type === "user") {
      const parsed = UserRecord.safeParse(record)
      if (!parsed.success || parsed.data.isMeta === true) continue
      onUserMessage(s, out, parsed.data, parsed.data.toolUseResult, taskId)
    }
  }
  if (state !== undefined) emitTask(s, out, state)
  return out.events
}

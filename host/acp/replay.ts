/**
 * A stored chat (`read_session`'s items) → the `session/update`s that
 * `session/load` replays, in order. The same pieces as the live mapping
 * (updates.ts): a stored tool call is one `tool_call` that has ended
 * (status, content and output together: a long chat's replay is a quarter
 * fewer messages for the client to read), a task is a `think` call
 * (announced, then ended) whose items carry its id as their parent. A generator,
 * so a long chat is sent as it is walked, never held twice.
 */
import type { TranscriptItem } from "../../sdk/protocol.ts"
import {
  type Update,
  parentMeta,
  planUpdate,
  taskUpdates,
  toolCallEnd,
  toolCallFinished,
  toolCallStart,
  type UpdateState,
  PLAN_TOOL,
} from "./updates.ts"

const textChunk = (
  kind: "agent_message_chunk" | "agent_thought_chunk" | "user_message_chunk",
  text: string,
  id: string,
  parent: string | undefined,
): Update => ({ sessionUpdate: kind, content: { type: "text", text }, messageId: id, ...parentMeta(parent) })

export function* replayUpdates(
  state: UpdateState,
  items: ReadonlyArray<TranscriptItem>,
  parent?: string,
): Generator<Update> {
  for (const item of items) {
    const inTask = parent ?? ("task_id" in item ? item.task_id : undefined)
    switch (item.type) {
      case "user":
        // A subagent's opening prompt is its call's input, not a user turn.
        if (inTask === undefined) yield textChunk("user_message_chunk", item.text, item.id, undefined)
        break
      case "assistant":
      case "reasoning":
        if (inTask !== undefined) {
          state.taskText.set(inTask, `${state.taskText.get(inTask) ?? ""}${item.text}\n`)
          break
        }
        yield textChunk(
          item.type === "assistant" ? "agent_message_chunk" : "agent_thought_chunk",
          item.text,
          item.id,
          undefined,
        )
        break
      case "tool_call":
        // A TodoWrite is its plan item (updates.ts).
        if (item.call.name === PLAN_TOOL) break
        // A stored call has ended: one message says all of it (a task's call keeps two, below).
        if (item.call.kind !== "task" && !state.calls.has(item.call.id)) {
          state.calls.set(item.call.id, { output: "", parent: inTask })
          yield toolCallFinished(item.call, inTask)
          break
        }
        // A task's spawning call comes with its task item; announce it once.
        if (!state.calls.has(item.call.id)) {
          state.calls.set(item.call.id, { output: "", parent: inTask })
          yield toolCallStart({ ...item.call, status: "Running" }, inTask)
        }
        {
          const end = toolCallEnd(item.call, inTask)
          // The task item that follows shows what the agent did; the hand-back text is the CLI's.
          if (item.call.kind === "task" && end.sessionUpdate === "tool_call_update") delete end.content
          yield end
        }
        break
      case "plan":
        yield planUpdate(item.entries, inTask)
        break
      case "task": {
        const task =
          item.task.parent_task_id === undefined && inTask !== undefined
            ? { ...item.task, parent_task_id: inTask }
            : item.task
        // Announce the task before its children, so they have a parent to nest under.
        if (!state.calls.has(task.id)) yield* taskUpdates(state, { ...task, status: "Running" })
        yield* replayUpdates(state, item.items, task.id)
        yield* taskUpdates(state, task)
        break
      }
      case "compacted":
        yield textChunk(
          "agent_message_chunk",
          `\n\n> *(The conversation was compacted.)*\n\n`,
          item.id,
          undefined,
        )
        break
      case "notice":
        if (item.level !== "info")
          yield textChunk(
            "agent_message_chunk",
            `\n\n> ${item.level === "error" ? "✗" : "⚠"} ${item.text}\n\n`,
            item.id,
            undefined,
          )
        break
      default: {
        const never: never = item
        return never
      }
    }
  }
}

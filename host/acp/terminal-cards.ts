/**
 * A command call as a terminal card, Zed's display extension, for a client
 * that declared `_meta.terminal_output: true`: the call carries a `terminal`
 * content named by its own id and `_meta.terminal_info`; its output arrives
 * as `_meta.terminal_output` chunks (`{terminal_id, data}`, appended), its
 * end as `_meta.terminal_exit` (the exit code, or null when unknown). The
 * terminal is the client's display only: no `terminal/*` method is called.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { ToolCall } from "../../sdk/protocol.ts"
import type { Update } from "./update-state.ts"

/** Is this call shown as a terminal (a command the agent ran)? */
export const isCard = (call: Pick<ToolCall, "kind">): boolean => call.kind === "execute"

/** What a card's announcement adds: the terminal content, and its id in `_meta`. */
export const cardStart = (callId: string) => ({
  content: [{ type: "terminal", terminalId: callId }] as acp.ToolCallContent[],
  meta: { terminal_info: { terminal_id: callId } },
})

/** One chunk of a card's output. */
export const cardOutput = (callId: string, data: string): Update => ({
  sessionUpdate: "tool_call_update",
  toolCallId: callId,
  _meta: { terminal_output: { terminal_id: callId, data } },
})

/** What a card's end adds to its closing update: the terminal content again, and its exit. */
export const cardEnd = (call: ToolCall) => ({
  content: [{ type: "terminal", terminalId: call.id }] as acp.ToolCallContent[],
  meta: { terminal_exit: { terminal_id: call.id, exit_code: call.exit_code ?? null, signal: null } },
})

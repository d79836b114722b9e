/** The CLI's stream-json frames as the tests build and match them: user messages and the control protocol. */
import { randomUUID } from "node:crypto"

export type Frame = Record<string, unknown> & { type?: string; subtype?: string }

export function userMessage(
  text: string,
  opts: { uuid?: string; parentToolUseId?: string | null; sessionId?: string } = {},
): Frame {
  return {
    type: "user",
    message: { role: "user", content: [{ type: "text", text }] },
    parent_tool_use_id: opts.parentToolUseId ?? null,
    uuid: opts.uuid ?? randomUUID(),
    session_id: opts.sessionId ?? "",
  }
}

export function controlRequest(requestId: string, request: Record<string, unknown>): Frame {
  return { type: "control_request", request_id: requestId, request }
}

export function controlSuccess(requestId: string, response?: unknown): Frame {
  return {
    type: "control_response",
    response:
      response === undefined
        ? { subtype: "success", request_id: requestId }
        : { subtype: "success", request_id: requestId, response },
  }
}

export function controlError(requestId: string, error: string): Frame {
  return { type: "control_response", response: { subtype: "error", request_id: requestId, error } }
}

export const isType =
  (type: string, subtype?: string) =>
  (f: Frame): boolean =>
    f.type === type && (subtype === undefined || f.subtype === subtype)

export const isResult = isType("result")

export const isControlRequest =
  (subtype?: string) =>
  (f: Frame): boolean =>
    f.type === "control_request" &&
    (subtype === undefined || (f.request as Record<string, unknown> | undefined)?.subtype === subtype)

export const isControlResponseFor =
  (requestId: string) =>
  (f: Frame): boolean =>
    f.type === "control_response" &&
    (f.response as Record<string, unknown> | undefined)?.request_id === requestId

/** The text of every tool_result in a `user` frame. */
export function toolResultTexts(f: Frame): string[] {
  if (f.type !== "user") return []
  const content = (f.message as { content?: unknown } | undefined)?.content
  if (!Array.isArray(content)) return []
  const out: string[] = []
  for (const c of content as Array<Record<string, unknown>>) {
    if (c?.type !== "tool_result") continue
    const v = c.content
    if (typeof v === "string") out.push(v)
    else if (Array.isArray(v))
      out.push(
        (v as Array<Record<string, unknown>>)
          .filter((x) => x.type === "text")
          .map((x) => String(x.text))
          .join("\n"),
      )
  }
  return out
}

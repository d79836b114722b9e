/**
 * Writing one scripted answer: a JSON body, or a message as the Messages
 * API's server-sent events, text and tool input in deltas, with the stalls
 * and cuts its script asks for.
 */
import type { IncomingMessage, ServerResponse } from "node:http"
import { estimateTokens } from "./request-view.ts"
import type { Block, BlockFault, Message, Step, ThinkingBlock, Usage } from "./script.ts"

export const sendJson = (
  res: ServerResponse,
  status: number,
  obj: unknown,
  requestId: string,
  headers: Record<string, string> = {},
) => {
  const data = JSON.stringify(obj)
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(data),
    "request-id": requestId,
    ...headers,
  })
  res.end(data)
}

/**
 * Text split into deltas of about `size` chars, never inside a run of
 * non-space characters (so a path or a word always arrives in one delta and
 * recordings can be scrubbed by plain string replacement).
 */
export function chunks(s: string, size: number): string[] {
  if (s.length === 0) return [""]
  const out: string[] = []
  let cur = ""
  for (const tok of s.split(/(?<=\s)/)) {
    if (cur && cur.length + tok.length > size) {
      out.push(cur)
      cur = ""
    }
    cur += tok
  }
  if (cur) out.push(cur)
  return out
}

/** Tool input JSON split after each top-level member, so no string value is cut. */
export function jsonChunks(json: string): string[] {
  const out: string[] = []
  let depth = 0
  let inString = false
  let start = 0
  for (let i = 0; i < json.length; i++) {
    const c = json[i]
    if (inString) {
      if (c === "\\") i++
      else if (c === '"') inString = false
      continue
    }
    if (c === '"') inString = true
    else if (c === "{" || c === "[") depth++
    else if (c === "}" || c === "]") depth--
    else if (c === "," && depth === 1) {
      out.push(json.slice(start, i + 1))
      start = i + 1
    }
  }
  out.push(json.slice(start))
  return out.filter((x) => x.length > 0)
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

const usageFor = (body: Record<string, unknown>, blocks: readonly Block[], override?: Partial<Usage>) => {
  const thinkingTokens = blocks
    .filter((b): b is ThinkingBlock => b.kind === "thinking")
    .reduce((n, b) => n + Math.max(1, Math.ceil(b.thinking.length / 4)), 0)
  const other = blocks.reduce(
    (n, b) => n + (b.kind === "text" ? Math.ceil(b.text.length / 4) : b.kind === "tool_use" ? 20 : 0),
    0,
  )
  const base: Usage = {
    input_tokens: estimateTokens(body),
    output_tokens: Math.max(1, thinkingTokens + other),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    ...override,
  }
  return { base, thinkingTokens }
}

/** How a message is sent: deltas of about `chunkSize` chars; `requestId` for its request-id header. */
export interface MessageWriter {
  readonly chunkSize: number
  readonly requestId: () => string
}

/** Send `reply` (its tool ids assigned in `steps`) as JSON or as a stream; the status, "cut" or "client_closed". */
export const answerMessage = async (
  writer: MessageWriter,
  req: IncomingMessage,
  res: ServerResponse,
  body: Record<string, unknown>,
  reply: Message,
  steps: readonly Step[],
  msgId: string,
): Promise<number | string> => {
  const blocks = steps.filter((s): s is Block => s.kind !== "stall" && s.kind !== "cut")
  const hasTool = blocks.some((b) => b.kind === "tool_use")
  const stopReason = reply.stopReason ?? (hasTool ? "tool_use" : "end_turn")
  const { base, thinkingTokens } = usageFor(body, blocks, reply.usage)
  const model = String(body.model ?? "claude-mock")
  const usageDelta: Record<string, unknown> = {
    input_tokens: base.input_tokens,
    output_tokens: base.output_tokens,
    cache_creation_input_tokens: base.cache_creation_input_tokens,
    cache_read_input_tokens: base.cache_read_input_tokens,
  }
  if (thinkingTokens > 0) usageDelta.output_tokens_details = { thinking_tokens: thinkingTokens }

  if (body.stream !== true) {
    const content = blocks.map((b) =>
      b.kind === "text"
        ? { type: "text", text: b.text }
        : b.kind === "thinking"
          ? { type: "thinking", thinking: b.thinking, signature: b.signature }
          : { type: "tool_use", id: b.id, name: b.name, input: b.input },
    )
    sendJson(
      res,
      200,
      {
        id: msgId,
        type: "message",
        role: "assistant",
        model,
        content,
        stop_reason: stopReason,
        stop_sequence: null,
        usage: usageDelta,
      },
      writer.requestId(),
      { ...reply.headers },
    )
    return 200
  }
  return streamMessage(writer, req, res, reply, steps, { msgId, model, base, usageDelta, stopReason })
}

/** The message as server-sent events: message_start, each block's start, deltas and stop, message_delta and stop. */
const streamMessage = async (
  writer: MessageWriter,
  req: IncomingMessage,
  res: ServerResponse,
  reply: Message,
  steps: readonly Step[],
  {
    msgId,
    model,
    base,
    usageDelta,
    stopReason,
  }: {
    readonly msgId: string
    readonly model: string
    readonly base: Usage
    readonly usageDelta: Record<string, unknown>
    readonly stopReason: string
  },
): Promise<number | string> => {
  const { chunkSize } = writer
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
    "request-id": writer.requestId(),
    ...reply.headers,
  })
  let closed = false
  res.on("close", () => {
    closed = true
  })
  req.on("close", () => {
    if (!res.writableFinished) closed = true
  })
  const ev = (type: string, data: Record<string, unknown>) => {
    if (closed) return
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  ev("message_start", {
    message: {
      id: msgId,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: base.input_tokens,
        output_tokens: 1,
        cache_creation_input_tokens: base.cache_creation_input_tokens,
        cache_read_input_tokens: base.cache_read_input_tokens,
      },
    },
  })
  let index = 0
  /** A block's fault, once its delta count is reached: whether the stream goes on. */
  const blockFault = async (fault: BlockFault | undefined, sent: number): Promise<boolean> => {
    if (!fault || sent !== fault.afterDeltas) return true
    if (fault.step.kind === "stall") {
      await sleep(fault.step.ms)
      return !closed
    }
    await new Promise<void>((r) => res.write("", () => r()))
    res.socket?.destroy()
    return false
  }
  for (const s of steps) {
    if (closed) return "client_closed"
    if (s.kind === "stall") {
      await sleep(s.ms)
      continue
    }
    if (s.kind === "cut") {
      // let what was streamed so far reach the client, then drop the connection
      await new Promise<void>((r) => res.write("", () => r()))
      res.socket?.destroy()
      return "cut"
    }
    if (s.kind === "text") {
      ev("content_block_start", { index, content_block: { type: "text", text: "" } })
      let sent = 0
      for (const c of chunks(s.text, chunkSize)) {
        ev("content_block_delta", { index, delta: { type: "text_delta", text: c } })
        if (!(await blockFault(s.fault, ++sent)))
          return s.fault?.step.kind === "cut" ? "cut" : "client_closed"
      }
      ev("content_block_stop", { index })
    } else if (s.kind === "thinking") {
      ev("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } })
      for (const c of chunks(s.thinking, chunkSize))
        ev("content_block_delta", { index, delta: { type: "thinking_delta", thinking: c } })
      ev("content_block_delta", { index, delta: { type: "signature_delta", signature: s.signature } })
      ev("content_block_stop", { index })
    } else {
      ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: s.id, name: s.name, input: {} },
      })
      const json = JSON.stringify(s.input ?? {})
      let sent = 0
      for (const c of jsonChunks(json)) {
        ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: c } })
        if (!(await blockFault(s.fault, ++sent)))
          return s.fault?.step.kind === "cut" ? "cut" : "client_closed"
      }
      ev("content_block_stop", { index })
    }
    index++
  }
  ev("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: usageDelta })
  ev("message_stop", {})
  if (!closed) res.end()
  return 200
}

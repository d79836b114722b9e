// A scripted Anthropic Messages API on 127.0.0.1 for running the real Claude
// Code CLI offline. Plain Node (node:http), no dependencies.
//
// Each request is sorted into a conversation: a subagent (its first user
// message contains the subagent's `match` text), a side request (compaction
// summary, title generation, anything without tools) or the main
// conversation. Main and subagent requests consume the next scripted turn of
// their conversation; side requests get a short answer and consume nothing.
//
// Only request METADATA is kept (model, effort, thinking settings, roles, tool
// names...). Bodies and system text are never stored: they hold the CLI's
// system prompt.

import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

// ---------------------------------------------------------------------------
// Scenario DSL

export interface TextBlock {
  readonly kind: "text"
  readonly text: string
  /** A fault inside the block, after this many of its deltas (`midBlock`). */
  readonly fault?: BlockFault
}
/** Stall or cut a stream inside a block, after `afterDeltas` of its deltas were sent. */
export interface BlockFault {
  readonly afterDeltas: number
  readonly step: StallStep | CutStep
}
export interface ThinkingBlock {
  readonly kind: "thinking"
  readonly thinking: string
  readonly signature: string
}
export interface ToolUseBlock {
  readonly kind: "tool_use"
  readonly name: string
  readonly input: unknown
  readonly id?: string
  /** A fault inside the tool input's stream, after this many `input_json_delta`s (`midBlock`). */
  readonly fault?: BlockFault
}
/** Pause inside the stream (after the blocks before it were sent). */
export interface StallStep {
  readonly kind: "stall"
  readonly ms: number
}
/** Destroy the connection at this point of the stream (a dropped stream). */
export interface CutStep {
  readonly kind: "cut"
}
export type Block = TextBlock | ThinkingBlock | ToolUseBlock
export type Step = Block | StallStep | CutStep

export interface Message {
  readonly kind: "message"
  readonly steps: readonly Step[]
  /** Defaults to "tool_use" when a tool_use block is present, else "end_turn". */
  readonly stopReason?: string
  /** Wait before sending the response headers. */
  readonly delayMs?: number
  /** Extra response headers (e.g. allowed_warning rate-limit headers). */
  readonly headers?: Readonly<Record<string, string>>
  /** Override the reported usage. */
  readonly usage?: Partial<Usage>
}
export interface ApiError {
  readonly kind: "error"
  readonly status: number
  readonly errorType: string
  readonly message: string
  readonly headers?: Readonly<Record<string, string>>
  readonly delayMs?: number
}
/** Never answer; the connection is held until the client gives up or the server closes. */
export interface Hang {
  readonly kind: "hang"
}
export type Reply = Message | ApiError | Hang
/** Shorthand: an array of steps is a message. */
export type ReplyLike = Reply | readonly Step[]
export type Turn = ReplyLike | ((req: RequestView) => ReplyLike | Promise<ReplyLike>)

export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export const text = (t: string): TextBlock => ({ kind: "text", text: t })
export const thinking = (t: string, signature?: string): ThinkingBlock => ({
  kind: "thinking",
  thinking: t,
  signature: signature ?? `sig_mock_${Buffer.from(t).toString("base64url").slice(0, 24)}`,
})
export const toolUse = (name: string, input: unknown, id?: string): ToolUseBlock =>
  id === undefined ? { kind: "tool_use", name, input } : { kind: "tool_use", name, input, id }
export const stall = (ms: number): StallStep => ({ kind: "stall", ms })
export const cut = (): CutStep => ({ kind: "cut" })
/** The same block with a stall or a cut after `afterDeltas` of its deltas (mid-text, mid tool input). */
export const midBlock = <B extends TextBlock | ToolUseBlock>(
  block: B,
  afterDeltas: number,
  step: StallStep | CutStep,
): B => ({ ...block, fault: { afterDeltas, step } })
export const hang = (): Hang => ({ kind: "hang" })
export const message = (steps: readonly Step[], opts: Omit<Message, "kind" | "steps"> = {}): Message => ({
  kind: "message",
  steps,
  ...opts,
})
/** Delay the whole answer by `ms` before the headers are sent. */
export const delay = (ms: number, reply: ReplyLike): Reply => {
  const r = toReply(reply)
  return r.kind === "hang" ? r : { ...r, delayMs: ms }
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
}

export interface ErrorOptions {
  readonly message?: string
  readonly errorType?: string
  readonly headers?: Readonly<Record<string, string>>
  readonly delayMs?: number
}

/** An API error answer. For 429 use `rateLimited()` to get the rate-limit headers too. */
export const error = (status: number, opts: ErrorOptions = {}): ApiError => ({
  kind: "error",
  status,
  errorType: opts.errorType ?? ERROR_TYPES[status] ?? "api_error",
  message: opts.message ?? (status === 529 ? "Overloaded" : `Mock error ${status}`),
  ...(opts.headers ? { headers: opts.headers } : {}),
  ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}),
})

export interface RateLimitOptions {
  /** "rejected" (default) | "allowed_warning" | "allowed". */
  readonly status?: string
  /** Seconds until the window resets (default 3600). */
  readonly resetInSeconds?: number
  /** retry-after header in seconds (default 1). */
  readonly retryAfter?: number
  /** five_hour (default) | seven_day | ... */
  readonly claim?: string
  /** 0..1 (default 1 when rejected, 0.9 otherwise). */
  readonly utilization?: number
  /** Fixed epoch seconds to compute resets from (for deterministic recordings). */
  readonly now?: number
}

/** Anthropic rate-limit response headers, unified (subscription) and classic ones. */
export function rateLimitHeaders(opts: RateLimitOptions = {}): Record<string, string> {
  const status = opts.status ?? "rejected"
  const now = opts.now ?? Math.floor(Date.now() / 1000)
  const reset = now + (opts.resetInSeconds ?? 3600)
  const reset7d = now + 6 * 24 * 3600
  const util = opts.utilization ?? (status === "rejected" ? 1 : 0.9)
  const claim = opts.claim ?? "five_hour"
  const h: Record<string, string> = {
    "anthropic-ratelimit-unified-status": status,
    "anthropic-ratelimit-unified-reset": String(reset),
    "anthropic-ratelimit-unified-representative-claim": claim,
    "anthropic-ratelimit-unified-5h-status": status,
    "anthropic-ratelimit-unified-5h-reset": String(reset),
    "anthropic-ratelimit-unified-5h-utilization": String(util),
    "anthropic-ratelimit-unified-7d-status": "allowed",
    "anthropic-ratelimit-unified-7d-reset": String(reset7d),
    "anthropic-ratelimit-unified-7d-utilization": "0.42",
    "anthropic-ratelimit-unified-fallback-percentage": "0.5",
    "anthropic-ratelimit-unified-overage-status": "rejected",
    "anthropic-ratelimit-unified-overage-disabled-reason": "org_level_disabled",
    "anthropic-ratelimit-requests-limit": "50",
    "anthropic-ratelimit-requests-remaining": status === "rejected" ? "0" : "10",
    "anthropic-ratelimit-requests-reset": new Date(reset * 1000).toISOString(),
  }
  if (status === "rejected") h["retry-after"] = String(opts.retryAfter ?? 1)
  return h
}

/** A 429 with rate-limit headers (so the CLI emits `rate_limit_event`). */
export const rateLimited = (opts: RateLimitOptions & { message?: string } = {}): ApiError =>
  error(429, {
    message: opts.message ?? "Number of request tokens has exceeded your rate limit.",
    headers: rateLimitHeaders(opts),
  })

export const overloaded = (opts: ErrorOptions = {}): ApiError => error(529, opts)
export const serverError = (opts: ErrorOptions = {}): ApiError => error(500, opts)

/** A gate a turn function can wait on: `await g.wait` inside, `g.open()` from the test. */
export interface Gate {
  readonly wait: Promise<void>
  open(): void
  readonly isOpen: boolean
}
export function gate(): Gate {
  let open!: () => void
  let isOpen = false
  const wait = new Promise<void>((resolve) => {
    open = () => {
      isOpen = true
      resolve()
    }
  })
  return {
    wait,
    open: () => open(),
    get isOpen() {
      return isOpen
    },
  }
}

export interface SubagentScript {
  /** Substring of the subagent's first user message (its prompt). */
  readonly match: string
  /** Name used in request metadata; defaults to `match`. */
  readonly name?: string
  readonly turns: readonly Turn[]
}

export type SideKind = "compact" | "title" | "no_tools"

export interface Scenario {
  readonly main: readonly Turn[]
  readonly subagents?: readonly SubagentScript[]
  /** Answer of side requests; defaults to a short fixed text per kind. */
  readonly side?: (kind: SideKind, req: RequestView) => ReplyLike | Promise<ReplyLike>
  /** Answer when a conversation's script is exhausted (default: text "(script exhausted)"). */
  readonly exhausted?: (conversation: string, req: RequestView) => ReplyLike
}

// ---------------------------------------------------------------------------
// What a turn function sees of the request (in memory only, never recorded)

export interface ToolResultView {
  readonly toolUseId: string
  readonly isError: boolean
  /** The result's text (text parts joined with "\n"). */
  readonly content: string
}

export interface RequestView {
  /** The parsed request body. Do NOT persist it: it holds the system prompt. */
  readonly body: Record<string, unknown>
  readonly model: string
  readonly messages: ReadonlyArray<{ role: string; content: unknown }>
  readonly conversation: string
  readonly turnIndex: number
  /** Text of the last user message (text parts joined). */
  lastUserText(): string
  /** Text of the first user message. */
  firstUserText(): string
  /** Tool results in the last user message. */
  toolResults(): ToolResultView[]
  toolNames(): string[]
}

// ---------------------------------------------------------------------------
// Recorded metadata

export interface RequestMeta {
  readonly seq: number
  readonly method: string
  readonly path: string
  /** "main", "subagent:<name>", "side:compact", "side:title", "side:no_tools", "count_tokens", "other". */
  readonly conversation: string
  readonly turnIndex?: number
  readonly exhausted?: boolean
  readonly model?: string
  readonly stream?: boolean
  readonly effort?: unknown
  readonly thinking?: unknown
  readonly max_tokens?: unknown
  readonly messageCount?: number
  readonly roles?: string[]
  readonly tools?: string[]
  readonly betas?: string[]
  /** HTTP status of our answer, or "hang" / "cut". */
  readonly status?: number | string
  readonly messageId?: string
}

export interface ModelServer {
  readonly url: string
  readonly port: number
  readonly requests: RequestMeta[]
  /** Remaining turns of a conversation ("main" or a subagent name). */
  remaining(conversation?: string): number
  close(): Promise<void>
}

export interface ModelServerOptions {
  /** Log unknown paths and side requests to stderr. */
  readonly debug?: boolean
  /** Text chunk size for text/thinking deltas (default 24 chars). */
  readonly chunkSize?: number
}

// ---------------------------------------------------------------------------

export function toReply(r: ReplyLike): Reply {
  if (Array.isArray(r)) return message(r as readonly Step[])
  return r as Reply
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  const parts: string[] = []
  for (const c of content) {
    if (c && typeof c === "object") {
      const o = c as Record<string, unknown>
      if (o.type === "text" && typeof o.text === "string") parts.push(o.text)
    }
  }
  return parts.join("\n")
}

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content
  return textOf(content)
}

const SUMMARY_MARKERS = [
  "create a detailed summary of the conversation",
  "summary of the conversation so far",
  "Your task is to create a detailed summary",
  "summarize the conversation",
]
const TITLE_MARKERS = [
  "title for this conversation",
  "session title",
  "Generate a concise",
  "sentence-case title",
]

function makeView(body: Record<string, unknown>, conversation: string, turnIndex: number): RequestView {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Array<{
    role: string
    content: unknown
  }>
  return {
    body,
    model: String(body.model ?? ""),
    messages,
    conversation,
    turnIndex,
    lastUserText() {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]
        if (m?.role === "user") return textOf(m.content)
      }
      return ""
    },
    firstUserText() {
      const m = messages.find((x) => x.role === "user")
      return m ? textOf(m.content) : ""
    },
    toolResults() {
      for (let i = messages.length - 1; i >= 0; i--) {
        const m = messages[i]
        if (m?.role !== "user") continue
        const out: ToolResultView[] = []
        if (Array.isArray(m.content)) {
          for (const c of m.content as Array<Record<string, unknown>>) {
            if (c?.type === "tool_result") {
              out.push({
                toolUseId: String(c.tool_use_id ?? ""),
                isError: c.is_error === true,
                content: toolResultText(c.content),
              })
            }
          }
        }
        return out
      }
      return []
    },
    toolNames() {
      const tools = Array.isArray(body.tools) ? (body.tools as Array<Record<string, unknown>>) : []
      return tools.map((t) => String(t.name ?? t.type ?? "?"))
    },
  }
}

/** Which kind of side request this is, or undefined for a scripted conversation. */
export function classifySide(body: Record<string, unknown>): SideKind | undefined {
  const view = makeView(body, "", 0)
  const last = view.lastUserText()
  if (SUMMARY_MARKERS.some((m) => last.includes(m))) return "compact"
  const tools = Array.isArray(body.tools) ? body.tools : []
  if (tools.length === 0) {
    const sys = JSON.stringify(body.system ?? "")
    if (TITLE_MARKERS.some((m) => sys.includes(m) || last.includes(m))) return "title"
    return "no_tools"
  }
  return undefined
}

const SIDE_DEFAULT: Record<SideKind, ReplyLike> = {
  compact: [
    text(
      "<summary>\n1. Primary Request and Intent: the user ran a scripted test conversation.\n2. Key Technical Concepts: none.\n3. Files and Code Sections: none.\n4. Errors and fixes: none.\n5. Problem Solving: none.\n6. All user messages: scripted.\n7. Pending Tasks: none.\n8. Current Work: idle.\n</summary>",
    ),
  ],
  title: [text('{"title": "Scripted test session"}')],
  no_tools: [text("OK.")],
}

function pad(n: number): string {
  return String(n).padStart(4, "0")
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

function estimateTokens(body: Record<string, unknown>): number {
  try {
    return Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4))
  } catch {
    return 1
  }
}

function effortOf(body: Record<string, unknown>): unknown {
  const oc = body.output_config
  if (oc && typeof oc === "object") return (oc as Record<string, unknown>).effort
  return undefined
}

function thinkingSettings(body: Record<string, unknown>): unknown {
  const t = body.thinking
  if (!t || typeof t !== "object") return t
  // settings only: type, budget_tokens, display
  const o = t as Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const k of ["type", "budget_tokens", "display"]) if (k in o) out[k] = o[k]
  return out
}

export async function startModelServer(
  scenario: Scenario,
  opts: ModelServerOptions = {},
): Promise<ModelServer> {
  const requests: RequestMeta[] = []
  const cursors = new Map<string, number>()
  let seq = 0
  let msgSeq = 0
  let toolSeq = 0
  const sockets = new Set<Socket>()
  const hanging = new Set<ServerResponse>()
  const chunkSize = opts.chunkSize ?? 24
  const subagents = scenario.subagents ?? []

  const scriptOf = (conversation: string): readonly Turn[] => {
    if (conversation === "main") return scenario.main
    const name = conversation.slice("subagent:".length)
    return subagents.find((s) => (s.name ?? s.match) === name)?.turns ?? []
  }

  const classify = (body: Record<string, unknown>): string => {
    const side = classifySide(body)
    if (side) return `side:${side}`
    const first = makeView(body, "", 0).firstUserText()
    for (const s of subagents) if (first.includes(s.match)) return `subagent:${s.name ?? s.match}`
    return "main"
  }

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((resolve, reject) => {
      const parts: Buffer[] = []
      req.on("data", (c: Buffer) => parts.push(c))
      req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
      req.on("error", reject)
    })

  const sendJson = (
    res: ServerResponse,
    status: number,
    obj: unknown,
    headers: Record<string, string> = {},
  ) => {
    const data = JSON.stringify(obj)
    res.writeHead(status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(data),
      "request-id": `req_mock_${pad(seq)}`,
      ...headers,
    })
    res.end(data)
  }

  const assignIds = (steps: readonly Step[]): Step[] =>
    steps.map((s) =>
      s.kind === "tool_use" && s.id === undefined ? { ...s, id: `toolu_mock_${pad(++toolSeq)}` } : s,
    )

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

  const answerMessage = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    reply: Message,
    msgId: string,
  ): Promise<number | string> => {
    const steps = assignIds(reply.steps)
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
        { ...reply.headers },
      )
      return 200
    }

    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
      "request-id": `req_mock_${pad(seq)}`,
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

  const answer = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    reply: Reply,
    msgId: string,
  ): Promise<number | string> => {
    if (reply.kind === "hang") {
      hanging.add(res)
      res.on("close", () => hanging.delete(res))
      return "hang"
    }
    if (reply.delayMs) await sleep(reply.delayMs)
    if (reply.kind === "error") {
      sendJson(
        res,
        reply.status,
        { type: "error", error: { type: reply.errorType, message: reply.message } },
        { ...reply.headers, ...(reply.status >= 500 ? { "x-should-retry": "true" } : {}) },
      )
      return reply.status
    }
    return answerMessage(req, res, body, reply, msgId)
  }

  const handleMessages = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const mySeq = ++seq
    const raw = await readBody(req)
    let body: Record<string, unknown>
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      requests.push({ seq: mySeq, method: "POST", path, conversation: "invalid", status: 400 })
      sendJson(res, 400, { type: "error", error: { type: "invalid_request_error", message: "bad json" } })
      return
    }
    const conversation = classify(body)
    let turnIndex: number | undefined
    let exhausted = false
    let turn: Turn
    if (conversation.startsWith("side:")) {
      const kind = conversation.slice(5) as SideKind
      if (opts.debug) process.stderr.write(`[model-server] side request ${kind}\n`)
      turn = scenario.side ? (r: RequestView) => scenario.side!(kind, r) : SIDE_DEFAULT[kind]
    } else {
      const script = scriptOf(conversation)
      const i = cursors.get(conversation) ?? 0
      cursors.set(conversation, i + 1)
      turnIndex = i
      if (i < script.length) turn = script[i]!
      else {
        exhausted = true
        turn = scenario.exhausted
          ? (r: RequestView) => scenario.exhausted!(conversation, r)
          : [text("(script exhausted)")]
      }
    }
    const view = makeView(body, conversation, turnIndex ?? -1)
    const msgId = `msg_mock_${pad(++msgSeq)}`
    const betasHeader = req.headers["anthropic-beta"]
    const meta: {
      -readonly [K in keyof RequestMeta]: RequestMeta[K]
    } = {
      seq: mySeq,
      method: "POST",
      path,
      conversation,
      ...(turnIndex !== undefined ? { turnIndex } : {}),
      ...(exhausted ? { exhausted } : {}),
      model: String(body.model ?? ""),
      stream: body.stream === true,
      effort: effortOf(body),
      thinking: thinkingSettings(body),
      max_tokens: body.max_tokens,
      messageCount: view.messages.length,
      roles: view.messages.map((m) => m.role),
      tools: view.toolNames(),
      betas: typeof betasHeader === "string" ? betasHeader.split(",").map((s) => s.trim()) : [],
      messageId: msgId,
    }
    requests.push(meta)
    try {
      const reply = toReply(typeof turn === "function" ? await turn(view) : turn)
      meta.status = await answer(req, res, body, reply, msgId)
    } catch (e) {
      meta.status = 500
      if (opts.debug) process.stderr.write(`[model-server] turn failed: ${String(e)}\n`)
      if (!res.headersSent)
        sendJson(res, 500, { type: "error", error: { type: "api_error", message: "mock turn threw" } })
      else res.end()
    }
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const path = url.pathname
    if (req.method === "POST" && path === "/v1/messages") {
      void handleMessages(req, res, path)
      return
    }
    void (async () => {
      const mySeq = ++seq
      const raw = await readBody(req).catch(() => "")
      if (req.method === "POST" && path === "/v1/messages/count_tokens") {
        let n = 1
        try {
          n = estimateTokens(JSON.parse(raw) as Record<string, unknown>)
        } catch {}
        requests.push({ seq: mySeq, method: "POST", path, conversation: "count_tokens", status: 200 })
        sendJson(res, 200, { input_tokens: n })
        return
      }
      if (opts.debug) process.stderr.write(`[model-server] other request ${req.method} ${path}\n`)
      requests.push({ seq: mySeq, method: req.method ?? "?", path, conversation: "other", status: 200 })
      sendJson(res, 200, {})
    })()
  })
  server.on("connection", (s) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
  })
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve())
  })
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    remaining(conversation = "main") {
      return Math.max(0, scriptOf(conversation).length - (cursors.get(conversation) ?? 0))
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy()
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

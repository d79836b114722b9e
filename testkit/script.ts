/**
 * The script a scripted model follows (model-server.ts): a scenario's turns
 * per conversation, each a reply (a message of blocks, stalls and cuts, an API
 * error, a hang) or a function of the request that returns one, and the
 * helpers that build them (text, thinking, toolUse, gate, rate limits…).
 */

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

export function toReply(r: ReplyLike): Reply {
  if (Array.isArray(r)) return message(r as readonly Step[])
  return r as Reply
}

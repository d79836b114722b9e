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
import { answerMessage, type MessageWriter, sendJson } from "./model-answer.ts"
import { classifySide, effortOf, estimateTokens, makeView, thinkingSettings } from "./request-view.ts"
import {
  type Reply,
  type ReplyLike,
  type RequestView,
  type Scenario,
  type SideKind,
  type Step,
  text,
  type Turn,
  toReply,
} from "./script.ts"

// The script's DSL lives in script.ts; most scenarios import it from here.
export * from "./script.ts"
export { classifySide } from "./request-view.ts"

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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** The turn a request gets: a side answer, its conversation's next scripted turn, or the exhausted answer. */
const turnFor = (
  scenario: Scenario,
  conversation: string,
  cursors: Map<string, number>,
  opts: ModelServerOptions,
): { readonly turn: Turn; readonly turnIndex?: number; readonly exhausted: boolean } => {
  if (conversation.startsWith("side:")) {
    const kind = conversation.slice(5) as SideKind
    if (opts.debug) process.stderr.write(`[model-server] side request ${kind}\n`)
    return {
      turn: scenario.side ? (r: RequestView) => scenario.side!(kind, r) : SIDE_DEFAULT[kind],
      exhausted: false,
    }
  }
  const script = scriptOf(scenario, conversation)
  const i = cursors.get(conversation) ?? 0
  cursors.set(conversation, i + 1)
  if (i < script.length) return { turn: script[i]!, turnIndex: i, exhausted: false }
  const turn = scenario.exhausted
    ? (r: RequestView) => scenario.exhausted!(conversation, r)
    : [text("(script exhausted)")]
  return { turn, turnIndex: i, exhausted: true }
}

const scriptOf = (scenario: Scenario, conversation: string): readonly Turn[] => {
  if (conversation === "main") return scenario.main
  const name = conversation.slice("subagent:".length)
  return (scenario.subagents ?? []).find((s) => (s.name ?? s.match) === name)?.turns ?? []
}

/** Which conversation a request belongs to: a side request, a subagent (its prompt matched) or main. */
const classify = (scenario: Scenario, body: Record<string, unknown>): string => {
  const side = classifySide(body)
  if (side) return `side:${side}`
  const first = makeView(body, "", 0).firstUserText()
  for (const s of scenario.subagents ?? [])
    if (first.includes(s.match)) return `subagent:${s.name ?? s.match}`
  return "main"
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")))
    req.on("error", reject)
  })

type MutableMeta = { -readonly [K in keyof RequestMeta]: RequestMeta[K] }

/** What is recorded of a messages request: its settings and shape, never its text. */
const metaOf = (
  req: IncomingMessage,
  seq: number,
  path: string,
  body: Record<string, unknown>,
  view: RequestView,
  msgId: string,
  { turnIndex, exhausted }: { readonly turnIndex?: number; readonly exhausted: boolean },
): MutableMeta => {
  const betasHeader = req.headers["anthropic-beta"]
  return {
    seq,
    method: "POST",
    path,
    conversation: view.conversation,
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
  const writer: MessageWriter = { chunkSize: opts.chunkSize ?? 24, requestId: () => `req_mock_${pad(seq)}` }
  const json = (res: ServerResponse, status: number, obj: unknown, headers: Record<string, string> = {}) =>
    sendJson(res, status, obj, writer.requestId(), headers)

  const assignIds = (steps: readonly Step[]): Step[] =>
    steps.map((s) =>
      s.kind === "tool_use" && s.id === undefined ? { ...s, id: `toolu_mock_${pad(++toolSeq)}` } : s,
    )

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
      json(
        res,
        reply.status,
        { type: "error", error: { type: reply.errorType, message: reply.message } },
        { ...reply.headers, ...(reply.status >= 500 ? { "x-should-retry": "true" } : {}) },
      )
      return reply.status
    }
    return answerMessage(writer, req, res, body, reply, assignIds(reply.steps), msgId)
  }

  const handleMessages = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const mySeq = ++seq
    const raw = await readBody(req)
    let body: Record<string, unknown>
    try {
      body = JSON.parse(raw) as Record<string, unknown>
    } catch {
      requests.push({ seq: mySeq, method: "POST", path, conversation: "invalid", status: 400 })
      json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "bad json" } })
      return
    }
    const conversation = classify(scenario, body)
    const next = turnFor(scenario, conversation, cursors, opts)
    const view = makeView(body, conversation, next.turnIndex ?? -1)
    const msgId = `msg_mock_${pad(++msgSeq)}`
    const meta = metaOf(req, mySeq, path, body, view, msgId, next)
    requests.push(meta)
    try {
      const reply = toReply(typeof next.turn === "function" ? await next.turn(view) : next.turn)
      meta.status = await answer(req, res, body, reply, msgId)
    } catch (e) {
      meta.status = 500
      if (opts.debug) process.stderr.write(`[model-server] turn failed: ${String(e)}\n`)
      if (!res.headersSent)
        json(res, 500, { type: "error", error: { type: "api_error", message: "mock turn threw" } })
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
        json(res, 200, { input_tokens: n })
        return
      }
      if (opts.debug) process.stderr.write(`[model-server] other request ${req.method} ${path}\n`)
      requests.push({ seq: mySeq, method: req.method ?? "?", path, conversation: "other", status: 200 })
      json(res, 200, {})
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
      return Math.max(0, scriptOf(scenario, conversation).length - (cursors.get(conversation) ?? 0))
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of hanging) r.destroy()
        for (const s of sockets) s.destroy()
        server.close(() => resolve())
      }),
  }
}

/**
 * The chat's test bench: a host whose one agent answers from a script (no
 * CLI, every call recorded), a chat over it with piped input and captured
 * output, and a wait for what the screen shows.
 */
import { PassThrough, Writable } from "node:stream"
import type { AgentEvent, AgentInfo } from "../../sdk/protocol.ts"
import { makeEventHub } from "../core/events.ts"
import type { Host } from "../core/host.ts"
import { Chat } from "./app.ts"

export const AGENT = "claude"
export const SESSION = "s1"
export const RUN = "r1"

export const INFO: AgentInfo = {
  id: AGENT,
  name: "Claude Code",
  status: "Ready",
  models: [{ value: "claude-opus-5-5", label: "Opus 5.5", aliases: ["opus"] }],
  options: [
    {
      id: "approval_mode",
      label: "Approvals",
      kind: "select",
      choices: [
        { value: "supervised", label: "Ask" },
        { value: "auto", label: "Auto" },
        { value: "full", label: "Full" },
      ],
    },
    {
      id: "effort",
      label: "Effort",
      kind: "select",
      choices: [
        { value: "low", label: "Low" },
        { value: "high", label: "High" },
      ],
    },
  ],
  capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
}

type Calls = Array<{ method: string; params: unknown }>

/** A host whose one agent answers from `script`; every call is recorded. */
export const fakeHost = (
  script: Partial<Record<string, (params: never, emit: (e: AgentEvent) => void) => unknown>>,
) => {
  const events = makeEventHub()
  const calls: Calls = []
  const emit = (event: AgentEvent) =>
    setImmediate(() => events.publish({ kind: "agent_event", agentId: AGENT, event }))
  const defaults: Record<string, (params: never, emit: (e: AgentEvent) => void) => unknown> = {
    initialize: () => INFO,
    createSession: () => ({ session_id: SESSION, info: { options: { effort: "low" } } }),
    prompt: () => ({ run_id: RUN, steered: false }),
  }
  const host = {
    events,
    agents: new Map([[AGENT, {}]]),
    call: async (_agent: string, method: string, params?: unknown) => {
      calls.push({ method, params })
      const answer = script[method] ?? defaults[method]
      return answer ? answer(params as never, emit) : undefined
    },
  } as unknown as Host
  return { host, calls, emit, events }
}

/** A chat over `host`; `typed`: its input is a person typing (a line may steer a run), not a script. */
export const world = (
  host: Host,
  options: Partial<ConstructorParameters<typeof Chat>[0]> = {},
  typed = false,
) => {
  const input = Object.assign(new PassThrough(), typed && { isTTY: true })
  let out = ""
  const output = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk)
      done()
    },
  })
  const chat = new Chat({ host, agentId: AGENT, cwd: "/ws", input, output, color: false, ...options })
  return { chat, input, screen: () => out }
}

export const until = async (check: () => boolean, what: string) => {
  const end = Date.now() + 3000
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

export const ev = (e: Record<string, unknown>) => ({ session_id: SESSION, run_id: RUN, ...e }) as AgentEvent

// Running a scenario: what a scenario is (a model script for the scripted API
// plus the driver steps that run the real CLI through it), the helpers drivers
// share, and runScenario, which gives a run its sandbox, model server and
// processes. The scenarios themselves are under scenarios/.

import { createHash } from "node:crypto"
import {
  allow,
  type ClaudeProcess,
  type Frame,
  makeSandbox,
  nextResult,
  type Sandbox,
  type StandardArgsOptions,
  spawnClaude,
  standardArgs,
} from "./cli.ts"
import { type ModelServer, type RequestView, type Scenario, startModelServer } from "./model-server.ts"

/** Environment every scenario adds to cliEnv (session_state_changed frames, as the facts file shows them). */
export const SCENARIO_ENV: Readonly<Record<string, string>> = {
  CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1",
}

export interface RunContext {
  readonly name: string
  readonly sandbox: Sandbox
  readonly server: ModelServer
  /** Deterministic session id of the scenario's first process. */
  readonly sessionId: string
  readonly processes: ClaudeProcess[]
  /**
   * Spawn the CLI with the scenario env and `standardArgs(args)` (default: the
   * scenario's session id). Each process gets a label; the first is "main".
   * A default can_use_tool handler allows everything until the driver sets its own.
   */
  spawn(label?: string, args?: StandardArgsOptions, env?: Record<string, string | undefined>): ClaudeProcess
  /** Free-form notes saved into meta.json by the recorder. */
  note(key: string, value: unknown): void
}

export interface ScenarioSetup {
  readonly model: Scenario
  readonly drive: (ctx: RunContext) => Promise<void>
}

export interface ScenarioDef {
  readonly name: string
  readonly description: string
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Overall time budget of the driver (default 60 s). */
  readonly timeoutMs?: number
  /** Build a fresh model script and driver for one run. */
  setup(sandbox: Sandbox): ScenarioSetup
}

/** A deterministic v4-shaped uuid from a string. */
export function stableUuid(seed: string): string {
  const h = createHash("sha256").update(seed).digest("hex")
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`
}

// ---------------------------------------------------------------------------
// Driver helpers

/** Send a user message and wait for the turn's `result`. */
export async function turn(p: ClaudeProcess, message: string, timeoutMs = 30_000): Promise<Frame> {
  p.sendUser(message)
  return nextResult(p, timeoutMs)
}

export const assistantText = (f: Frame): string => {
  if (f.type !== "assistant") return ""
  const content = (f.message as { content?: Array<Record<string, unknown>> } | undefined)?.content ?? []
  return content
    .filter((c) => c.type === "text")
    .map((c) => String(c.text))
    .join("")
}

/** A minimal in-process MCP server answering `mcp_message` control requests, with one tool `shout`. */
export function shoutMcpHandler(serverName = "convergence") {
  return (request: Record<string, unknown>) => {
    if (request.server_name !== serverName)
      return { mcp_response: { jsonrpc: "2.0", id: 0, error: { code: -32601, message: "unknown server" } } }
    const msg = (request.message ?? {}) as {
      id?: number | string
      method?: string
      params?: Record<string, unknown>
    }
    const reply = (result: unknown) => ({ mcp_response: { jsonrpc: "2.0", id: msg.id, result } })
    switch (msg.method) {
      case "initialize":
        return reply({
          protocolVersion: (msg.params?.protocolVersion as string | undefined) ?? "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: serverName, version: "0.0.1" },
        })
      case "tools/list":
        return reply({
          tools: [
            {
              name: "shout",
              description: "Return the text in upper case.",
              inputSchema: {
                type: "object",
                properties: { text: { type: "string", description: "Text to shout" } },
                required: ["text"],
              },
            },
          ],
        })
      case "tools/call": {
        const args = (msg.params?.arguments ?? {}) as { text?: string }
        return reply({ content: [{ type: "text", text: String(args.text ?? "").toUpperCase() }] })
      }
      default:
        if (msg.id === undefined) return { mcp_response: { jsonrpc: "2.0", result: {}, id: 0 } }
        return {
          mcp_response: { jsonrpc: "2.0", id: msg.id, error: { code: -32601, message: "Method not found" } },
        }
    }
  }
}

// ---------------------------------------------------------------------------
// Running

export interface ScenarioRun {
  readonly name: string
  readonly sandbox: Sandbox
  readonly server: ModelServer
  readonly processes: ClaudeProcess[]
  readonly notes: Record<string, unknown>
  readonly sessionId: string
  readonly durationMs: number
  readonly error?: unknown
  /** Stop the server and remove the sandbox. */
  cleanup(): Promise<void>
}

export interface RunOptions {
  readonly debug?: boolean
  /** Throw the driver's error instead of returning it in `error` (default true). */
  readonly throwOnError?: boolean
}

export async function runScenario(def: ScenarioDef, opts: RunOptions = {}): Promise<ScenarioRun> {
  const started = Date.now()
  const sandbox = makeSandbox(`cvg-tk-${def.name.replace(/_/g, "-")}-`)
  const { model, drive } = def.setup(sandbox)
  const server = await startModelServer(model, { debug: opts.debug ?? false })
  const processes: ClaudeProcess[] = []
  const notes: Record<string, unknown> = {}
  const sessionId = stableUuid(`testkit:${def.name}`)
  const ctx: RunContext = {
    name: def.name,
    sandbox,
    server,
    sessionId,
    processes,
    spawn(label, args, env) {
      const p = spawnClaude(standardArgs(args ?? { sessionId }), {
        sandbox,
        server,
        env: { ...SCENARIO_ENV, ...def.env, ...env },
        label: label ?? (processes.length === 0 ? "main" : `p${processes.length + 1}`),
        debug: opts.debug ?? false,
      })
      p.onControlRequest("can_use_tool", (r) => allow(r.input))
      processes.push(p)
      return p
    },
    note(key, value) {
      notes[key] = value
    },
  }
  let error: unknown
  let timer: NodeJS.Timeout | undefined
  try {
    await Promise.race([
      drive(ctx),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`scenario ${def.name} timed out`)), def.timeoutMs ?? 60_000)
      }),
    ])
  } catch (e) {
    error = e
  } finally {
    if (timer) clearTimeout(timer)
    await Promise.all(processes.map((p) => p.close(5_000)))
  }
  const run: ScenarioRun = {
    name: def.name,
    sandbox,
    server,
    processes,
    notes,
    sessionId,
    durationMs: Date.now() - started,
    ...(error !== undefined ? { error } : {}),
    async cleanup() {
      await server.close()
      sandbox.cleanup()
    },
  }
  if (error !== undefined && (opts.throwOnError ?? true)) {
    await run.cleanup()
    throw error
  }
  return run
}

/** The text of the last tool result the model was sent, or "(none)". */
export const lastToolResult = (req: RequestView): string => req.toolResults().at(-1)?.content ?? "(none)"

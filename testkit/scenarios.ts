// Named scenarios: a model script for the scripted API plus the driver steps
// (user messages, permission answers, control requests) that run the real CLI
// through it. Used by the recorder (record.ts) and by the e2e tests.

import { createHash } from "node:crypto"
import { join } from "node:path"
import {
  allow,
  type ClaudeProcess,
  deny,
  type Frame,
  initialize,
  isControlRequest,
  isResult,
  isType,
  makeSandbox,
  nextResult,
  type Sandbox,
  type StandardArgsOptions,
  spawnClaude,
  standardArgs,
  toolResultTexts,
} from "./cli.ts"
import {
  gate,
  message,
  type ModelServer,
  type RequestView,
  rateLimitHeaders,
  rateLimited,
  overloaded,
  type Scenario,
  startModelServer,
  text,
  thinking,
  toolUse,
} from "./model-server.ts"

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

const assistantText = (f: Frame): string => {
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

// ---------------------------------------------------------------------------
// The scenarios

const lastToolResult = (req: RequestView): string => req.toolResults().at(-1)?.content ?? "(none)"

export const textThinking: ScenarioDef = {
  name: "text_thinking",
  description: "Two user turns: thinking + text, then text only.",
  setup: () => ({
    model: {
      main: [
        [
          thinking("The user greets me. I should greet back briefly."),
          text("Hello! I am the scripted model."),
        ],
        [text("Second answer, no thinking this time.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      ctx.note("initialize", Object.keys(await initialize(p)))
      await turn(p, "Hello there")
      await turn(p, "And again")
    },
  }),
}

export const bashAllow: ScenarioDef = {
  name: "bash_allow",
  description: "Bash that needs approval (touch), allowed through can_use_tool; the model echoes the output.",
  setup: () => ({
    model: {
      main: [
        [
          text("I'll create the file."),
          toolUse("Bash", {
            command: "touch made-by-bash.txt && echo bash-output-ok",
            description: "Create a file",
          }),
        ],
        (req) => [text(`The command printed: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", (r) => allow(r.input))
      await initialize(p)
      await turn(p, "Create made-by-bash.txt")
    },
  }),
}

export const bashDeny: ScenarioDef = {
  name: "bash_deny",
  description: "Bash that needs approval, denied with a message; result lists the permission denial.",
  setup: () => ({
    model: {
      main: [
        [
          toolUse("Bash", {
            command: "rm -rf build && echo removed",
            description: "Remove the build folder",
          }),
        ],
        (req) => [text(`Understood, not removing it (${lastToolResult(req).slice(0, 80)}).`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", () => deny("The user said no in this test."))
      await initialize(p)
      await turn(p, "Remove the build folder")
    },
  }),
}

export const writeEdit: ScenarioDef = {
  name: "write_edit",
  description: "Write a new file, then Edit it; both approved through can_use_tool (default mode).",
  setup: (sb) => {
    const file = join(sb.ws, "notes.md")
    return {
      model: {
        main: [
          [toolUse("Write", { file_path: file, content: "# Notes\n\nline one\nline two\n" })],
          [toolUse("Edit", { file_path: file, old_string: "line two", new_string: "line 2 (edited)" })],
          [text("Wrote and edited notes.md.")],
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        await turn(p, "Write notes.md and then edit it")
      },
    }
  },
}

export const todo: ScenarioDef = {
  name: "todo",
  description:
    "TodoWrite (CLAUDE_CODE_ENABLE_TODO_TOOLS=1, CLAUDE_CODE_ENABLE_TASKS=0): create a list, then update it.",
  env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1", CLAUDE_CODE_ENABLE_TASKS: "0" },
  setup: () => ({
    model: {
      main: [
        [
          toolUse("TodoWrite", {
            todos: [
              { content: "Read the code", status: "in_progress", activeForm: "Reading the code" },
              { content: "Write the fix", status: "pending", activeForm: "Writing the fix" },
            ],
          }),
        ],
        [
          toolUse("TodoWrite", {
            todos: [
              { content: "Read the code", status: "completed", activeForm: "Reading the code" },
              { content: "Write the fix", status: "in_progress", activeForm: "Writing the fix" },
            ],
          }),
        ],
        [text("Plan updated.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Plan the work")
    },
  }),
}

export const tasks: ScenarioDef = {
  name: "tasks",
  description: "TaskCreate then TaskUpdate (CLAUDE_CODE_ENABLE_TODO_TOOLS=1).",
  env: { CLAUDE_CODE_ENABLE_TODO_TOOLS: "1" },
  setup: () => ({
    model: {
      main: [
        [
          toolUse("TaskCreate", {
            subject: "Fix the parser",
            description: "Make the parser accept trailing commas",
            activeForm: "Fixing the parser",
          }),
        ],
        (req) => {
          const id = /#?(\d+)/.exec(lastToolResult(req))?.[1] ?? "1"
          return [toolUse("TaskUpdate", { taskId: id, status: "in_progress" })]
        },
        [text("Task created and started.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Track the parser fix")
    },
  }),
}

const SUB_FG = "SUBAGENT-FG: count the files in the workspace"
export const subagentForeground: ScenarioDef = {
  name: "subagent_foreground",
  description:
    "Main calls Agent (general-purpose, run_in_background false); the subagent thinks, runs an approved Bash and answers.",
  setup: () => ({
    model: {
      main: [
        [
          text("I'll delegate this."),
          toolUse("Agent", {
            description: "Count workspace files",
            prompt: SUB_FG,
            subagent_type: "general-purpose",
            run_in_background: false,
          }),
        ],
        (req) => [text(`The subagent reported: ${lastToolResult(req).slice(0, 120)}`)],
      ],
      subagents: [
        {
          match: "SUBAGENT-FG",
          name: "fg",
          turns: [
            [
              thinking("I need to run a command."),
              text("Running a command."),
              toolUse("Bash", { command: "touch sub-made.txt && ls | wc -l", description: "Count files" }),
            ],
            (req) => [text(`There are ${lastToolResult(req).trim()} files.`)],
          ],
        },
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      const asked: unknown[] = []
      p.onControlRequest("can_use_tool", (r) => {
        asked.push({ tool: r.tool_name, agent_id: r.agent_id ?? null })
        return allow(r.input)
      })
      await initialize(p)
      await turn(p, "How many files are in the workspace? Use a subagent.")
      ctx.note("can_use_tool", asked)
    },
  }),
}

const SUB_BG = "SUBAGENT-BG: compute the answer in the background"
export const subagentBackground: ScenarioDef = {
  name: "subagent_background",
  description:
    "Main calls Agent with run_in_background true; the turn ends, the subagent finishes, and the CLI starts a new turn by itself.",
  setup: () => {
    const mainDone = gate()
    return {
      model: {
        main: [
          [
            toolUse("Agent", {
              description: "Background computation",
              prompt: SUB_BG,
              subagent_type: "general-purpose",
              run_in_background: true,
            }),
          ],
          () => {
            setTimeout(() => mainDone.open(), 300)
            return [text("The agent is running in the background.")]
          },
          [text("The background agent reported: 42.")],
        ],
        subagents: [
          {
            match: "SUBAGENT-BG",
            name: "bg",
            turns: [
              async () => {
                await mainDone.wait
                return [thinking("Computing."), text("The answer is 42.")]
              },
            ],
          },
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        await turn(p, "Compute the answer in the background")
        // the CLI starts a turn by itself when the agent finishes
        await p.next(isType("system", "task_notification"), 30_000)
        await nextResult(p, 30_000)
      },
    }
  },
}

const QUESTION = "Which color should the widget be?"
export const askUser: ScenarioDef = {
  name: "ask_user",
  description:
    "AskUserQuestion answered via can_use_tool allow with updatedInput.answers keyed by question text.",
  setup: () => ({
    model: {
      main: [
        [
          toolUse("AskUserQuestion", {
            questions: [
              {
                question: QUESTION,
                header: "Color",
                multiSelect: false,
                options: [
                  { label: "Blue", description: "A calm blue" },
                  { label: "Red", description: "A loud red" },
                ],
              },
            ],
          }),
        ],
        (req) => [text(`Got it: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      p.onControlRequest("can_use_tool", (r) => {
        if (r.tool_name === "AskUserQuestion") {
          const input = r.input as Record<string, unknown>
          return allow({ ...input, answers: { [QUESTION]: "Blue" } })
        }
        return allow(r.input)
      })
      await initialize(p)
      await turn(p, "Make me a widget")
    },
  }),
}

export const interrupt: ScenarioDef = {
  name: "interrupt",
  description:
    "A long Bash (sleep 20) interrupted by control_request interrupt; the next user message still works.",
  setup: () => ({
    model: {
      main: [
        [toolUse("Bash", { command: "sleep 20", description: "Wait a long time" })],
        [text("I'm still here.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      p.sendUser("Wait twenty seconds")
      await p.next((f) => f.type === "assistant" && JSON.stringify(f.message).includes('"tool_use"'), 20_000)
      // a foreground Bash becomes a task (task_started local_bash) after about 3 s
      await p.next(isType("system", "task_started"), 10_000)
      const t0 = Date.now()
      const resp = await p.request({ subtype: "interrupt" })
      ctx.note("interrupt_response", resp)
      ctx.note("interrupt_response_ms", Date.now() - t0)
      await nextResult(p, 15_000)
      await turn(p, "Are you still there?")
    },
  }),
}

export const resume: ScenarioDef = {
  name: "resume",
  description:
    "p1: two turns; p2: --resume; p3: --resume --resume-session-at <uuid of 'Answer one.'>; p4: --resume --fork-session --session-id <new>.",
  timeoutMs: 90_000,
  setup: () => ({
    model: {
      main: [
        [text("Answer one.")],
        [text("Answer two.")],
        [text("Answer three (resumed).")],
        [text("Answer four (resumed at answer one).")],
        [text("Answer five (forked).")],
      ],
    },
    async drive(ctx) {
      const p1 = ctx.spawn("main")
      await initialize(p1)
      await turn(p1, "Question one")
      const answerOne = p1.frames.find((f) => assistantText(f) === "Answer one.")
      await turn(p1, "Question two")
      await p1.close()
      const p2 = ctx.spawn("p2_resume", { resume: ctx.sessionId })
      await initialize(p2)
      await turn(p2, "Question three")
      await p2.close()
      const at = String(answerOne?.uuid)
      ctx.note("resume_session_at", at)
      const p3 = ctx.spawn("p3_resume_at", { resume: ctx.sessionId, resumeSessionAt: at })
      await initialize(p3)
      await turn(p3, "Question four")
      await p3.close()
      const forkId = stableUuid("testkit:resume:fork")
      ctx.note("fork_session_id", forkId)
      const p4 = ctx.spawn("p4_fork", { resume: ctx.sessionId, forkSession: true, sessionId: forkId })
      await initialize(p4)
      await turn(p4, "Question five")
      await p4.close()
    },
  }),
}

export const compact: ScenarioDef = {
  name: "compact",
  description:
    "A text turn, then `/compact` (the summarization request is a side request), then another turn.",
  setup: () => ({
    model: {
      main: [
        [text("Here is a long answer about nothing in particular.")],
        [text("After compaction I still answer.")],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Tell me something")
      await turn(p, "/compact")
      await turn(p, "Still there?")
    },
  }),
}

export const pluginTool: ScenarioDef = {
  name: "plugin_tool",
  description:
    "initialize with sdkMcpServers:[convergence]; mcp_message answered by an in-process MCP server with one tool `shout`; the model calls mcp__convergence__shout.",
  setup: () => ({
    model: {
      main: [
        [toolUse("mcp__convergence__shout", { text: "hello plugin" })],
        (req) => [text(`The plugin said: ${lastToolResult(req)}`)],
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      const methods: string[] = []
      const mcp = shoutMcpHandler("convergence")
      p.onControlRequest("mcp_message", (r) => {
        methods.push(String((r.message as { method?: string }).method))
        return mcp(r)
      })
      await initialize(p, { sdkMcpServers: ["convergence"] })
      await turn(p, "Shout hello")
      ctx.note("mcp_methods", methods)
    },
  }),
}

/**
 * An ANTHROPIC_AUTH_TOKEN the CLI takes for a "claude-gateway" credential (an unsigned JWT whose
 * payload has aud "claude-gateway"). With it, and no ANTHROPIC_API_KEY, the CLI reads the
 * anthropic-ratelimit-unified-* headers and emits `rate_limit_event`; with a plain API key it does not.
 */
export const GATEWAY_AUTH_TOKEN = `e30.${Buffer.from(JSON.stringify({ aud: "claude-gateway", sub: "testkit" })).toString("base64url")}.mock`

/** Env for rate-limit scenarios: gateway token instead of the API key. */
export const RATE_LIMIT_ENV: Readonly<Record<string, string | undefined>> = {
  ANTHROPIC_API_KEY: undefined,
  ANTHROPIC_AUTH_TOKEN: GATEWAY_AUTH_TOKEN,
}

export const rateLimit: ScenarioDef = {
  name: "rate_limit",
  description:
    "Gateway credential, CLAUDE_CODE_MAX_RETRIES=0: the first request gets 429 with anthropic-ratelimit-unified-* headers (rate_limit_event rejected, error result); the next user message succeeds with allowed_warning headers.",
  env: { ...RATE_LIMIT_ENV, CLAUDE_CODE_MAX_RETRIES: "0" },
  setup: () => {
    const now = Math.floor(Date.now() / 1000)
    return {
      model: {
        main: [
          rateLimited({ retryAfter: 1, resetInSeconds: 3600, now }),
          message([text("Recovered after the rate limit.")], {
            headers: rateLimitHeaders({ status: "allowed_warning", utilization: 0.92, now }),
          }),
        ],
      },
      async drive(ctx) {
        const p = ctx.spawn()
        await initialize(p)
        const r = await turn(p, "Hello despite limits", 45_000)
        ctx.note("first_result", {
          subtype: r.subtype,
          is_error: r.is_error,
          terminal_reason: r.terminal_reason,
        })
        const r2 = await turn(p, "Try again", 45_000)
        ctx.note("second_result", { subtype: r2.subtype, is_error: r2.is_error })
      },
    }
  },
}

export const apiRetry: ScenarioDef = {
  name: "api_retry",
  description:
    "API key credential: 429 (with rate-limit headers) then 529 overloaded, each retried by the CLI (system/api_retry), then success.",
  setup: () => ({
    model: {
      main: [rateLimited({ retryAfter: 0 }), overloaded(), [text("Finally through.")]],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      await turn(p, "Hello through the storm", 45_000)
    },
  }),
}

const WORKFLOW_SCRIPT = `export const meta = {
  name: 'mock-flow',
  description: 'Two scripted agents in two phases',
  phases: [{ title: 'Gather' }, { title: 'Report' }],
}
const a = await agent('WF-AGENT-A: say alpha', { label: 'alpha', phase: 'Gather' })
const b = await agent('WF-AGENT-B: say beta after ' + a, { label: 'beta', phase: 'Report' })
return { a, b }
`

export const workflow: ScenarioDef = {
  name: "dynamic_workflow",
  description:
    "A dynamic workflow via the Workflow tool: two agents in two phases; its end starts a new turn.",
  timeoutMs: 90_000,
  setup: () => ({
    model: {
      main: [
        [toolUse("Workflow", { script: WORKFLOW_SCRIPT })],
        [text("The workflow is running.")],
        [text("The workflow finished.")],
      ],
      subagents: [
        { match: "WF-AGENT-A", name: "wf_a", turns: [[text("alpha")]] },
        { match: "WF-AGENT-B", name: "wf_b", turns: [[text("beta")]] },
      ],
    },
    async drive(ctx) {
      const p = ctx.spawn()
      await initialize(p)
      const r1 = await turn(p, "Run the mock workflow", 45_000)
      ctx.note("first_result_subtype", r1.subtype)
      const started = p.frames.some(
        (f) => f.type === "system" && f.subtype === "task_started" && f.task_type === "local_workflow",
      )
      ctx.note("workflow_started", started)
      if (!started) return
      // 2.1.282 can finish the workflow (and start the turn its end begins) before the first result.
      if (!p.frames.some(isType("system", "task_notification")))
        await p.next(isType("system", "task_notification"), 60_000)
      if (p.frames.filter(isResult).length < 2) await nextResult(p, 30_000)
    },
  }),
}

export const SCENARIOS: readonly ScenarioDef[] = [
  textThinking,
  bashAllow,
  bashDeny,
  writeEdit,
  todo,
  tasks,
  subagentForeground,
  subagentBackground,
  askUser,
  interrupt,
  resume,
  compact,
  pluginTool,
  rateLimit,
  apiRetry,
  workflow,
]

export function scenarioByName(name: string): ScenarioDef {
  const s = SCENARIOS.find((x) => x.name === name)
  if (!s) throw new Error(`unknown scenario ${name}; known: ${SCENARIOS.map((x) => x.name).join(", ")}`)
  return s
}

// re-exports for drivers
export { isControlRequest, isResult, toolResultTexts }

/**
 * The scenarios bench/acp.ts runs against each ACP adapter, each in a world
 * of its own (a sandbox HOME and a scripted model on 127.0.0.1): a new
 * session and its first chunks, idle, a long chat's `session/load`, the demo
 * scenario, and the raw CLI's first chunk (the floor). Each starts the
 * adapter as a fresh process spoken to by the SDK's own client, its process
 * tree's memory sampled (acp-memory.ts).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { writeLongChat } from "./acp-long-chat.ts"
import type { startTreeWatcher, TreePeak } from "./acp-memory.ts"
import { allowFirst, childStream, initialize, makeTestClient, type TestClient } from "../host/acp/testing.ts"
import {
  cliEnv,
  initialize as initializeCli,
  makeSandbox,
  type Sandbox,
  spawnClaude,
  standardArgs,
} from "../testkit/cli.ts"
import { DEMO_ENV, DEMO_PROMPT, demoScenario } from "../testkit/demo.ts"
import { type ModelServer, type Scenario, startModelServer, text } from "../testkit/model-server.ts"

export const IDLE_MS = 1_500
export const LOAD_TURNS = 2_000

export interface Adapter {
  readonly name: string
  readonly command: (sandbox: Sandbox) => string[]
  readonly env?: Record<string, string>
}

/** What every scenario shares, filled by bench/acp.ts's main before the first runs. */
export const bench = {
  /** The tree sampler (acp-memory.ts), on a worker thread. */
  trees: undefined as Awaited<ReturnType<typeof startTreeWatcher>> | undefined,
  /** ACP_BENCH_DEBUG=1: the adapters' stderr (ours with CVG_ACP_DEBUG=1: its timings) on this one's. */
  debug: process.env.ACP_BENCH_DEBUG === "1",
}

interface Running {
  readonly child: ChildProcess
  readonly client: TestClient
  /** The adapter's tree peak so far (it keeps sampling until stop). */
  readonly memory: () => Promise<TreePeak>
  readonly stop: () => Promise<void>
}

export const startAdapter = (
  adapter: Adapter,
  sandbox: Sandbox,
  server: ModelServer,
  env: Record<string, string> = {},
) => {
  const [cmd, ...args] = adapter.command(sandbox)
  const child = spawn(cmd!, args, {
    cwd: sandbox.ws,
    env: {
      ...cliEnv(sandbox, server),
      ...env,
      ...adapter.env,
      ...(bench.debug && { CVG_ACP_DEBUG: "1" }),
    },
    stdio: ["pipe", "pipe", bench.debug ? "inherit" : "ignore"],
  })
  const tree = bench.trees!.watch(child.pid!)
  const client = makeTestClient(childStream(child))
  client.onPermission = allowFirst
  client.onElicitation = async (request) => {
    const schema = (request as { requestedSchema?: acp.ElicitationSchema }).requestedSchema
    const content: Record<string, string> = {}
    for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
      const first = (prop as { oneOf?: Array<{ const: string }> }).oneOf?.[0]?.const
      if (first !== undefined) content[key] = first
    }
    return { action: "accept", content }
  }
  let memory: Promise<TreePeak> | undefined
  const exited = new Promise((r) => child.once("exit", r))
  let stopping: Promise<void> | undefined
  const stop = () =>
    (stopping ??= (async () => {
      memory ??= tree.stop()
      client.close()
      child.stdin?.end()
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000)
      await exited
      clearTimeout(timer)
    })())
  return { child, client, memory: () => (memory ??= tree.stop()), stop } satisfies Running
}

export const withWorld = async <A>(
  scenario: (ws: string) => Scenario,
  run: (s: Sandbox, server: ModelServer) => Promise<A>,
) => {
  const sandbox = makeSandbox("cvg-bench-acp-")
  mkdirSync(join(sandbox.root, "data"), { recursive: true })
  const server = await startModelServer(scenario(sandbox.ws))
  try {
    return await run(sandbox, server)
  } finally {
    await server.close()
    await removeSoon(sandbox)
  }
}

/** A CLI that is still exiting may write into HOME for a moment: retry, then leave it to tmp. */
const removeSoon = async (sandbox: Sandbox) => {
  for (let attempt = 0; attempt < 10; attempt++) {
    try {
      sandbox.cleanup()
      return
    } catch {
      await new Promise((r) => setTimeout(r, 200))
    }
  }
}

/** New session and first chunk, one fresh process. */
export const newAndFirstChunk = (adapter: Adapter) =>
  withWorld(
    () => ({
      main: [
        [text("Hello from the scripted model, streamed in a few deltas.")],
        [text("And again, from a session whose CLI is already running.")],
      ],
    }),
    async (sandbox, server) => {
      const a = startAdapter(adapter, sandbox, server)
      try {
        const t0 = performance.now()
        await initialize(a.client, { elicitation: true })
        const session = await a.client.agent.request("session/new", { cwd: sandbox.ws, mcpServers: [] })
        const tNew = performance.now() - t0
        const t1 = performance.now()
        const first = a.client.waitFor(
          (r) => r.sessionId === session.sessionId && r.update.sessionUpdate === "agent_message_chunk",
          60_000,
        )
        const done = a.client.agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "Say hello" }],
        })
        await first
        const tFirst = performance.now() - t1
        await done
        // The same, warm: the session's CLI is running, so this is the adapter's own overhead.
        const seen = a.client.updates.length
        const t2 = performance.now()
        const again = a.client.waitFor(
          (r) =>
            r.sessionId === session.sessionId &&
            r.update.sessionUpdate === "agent_message_chunk" &&
            a.client.updates.indexOf(r) >= seen,
          60_000,
        )
        const doneAgain = a.client.agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "Once more" }],
        })
        await again
        const tWarm = performance.now() - t2
        await doneAgain
        const memory = await a.memory()
        await a.stop()
        // A later start in the same data folder and HOME: what an editor sees every time after the first.
        const b = startAdapter(adapter, sandbox, server)
        try {
          const t3 = performance.now()
          await initialize(b.client, { elicitation: true })
          await b.client.agent.request("session/new", { cwd: sandbox.ws, mcpServers: [] })
          return { tNew, tNewLater: performance.now() - t3, tFirst, tWarm, memory }
        } finally {
          await b.stop()
        }
      } finally {
        await a.stop()
      }
    },
  )

/** The adapter started and initialized, then idle for IDLE_MS: its floor with everything loaded. */
export const idle = (adapter: Adapter) =>
  withWorld(
    () => ({ main: [] }),
    async (sandbox, server) => {
      const a = startAdapter(adapter, sandbox, server)
      try {
        await initialize(a.client)
        await new Promise((r) => setTimeout(r, IDLE_MS))
        return await a.memory()
      } finally {
        await a.stop()
      }
    },
  )

/** The floor: the raw CLI's user line → first text delta. */
export const rawFirstChunk = () =>
  withWorld(
    () => ({ main: [[text("Hello from the scripted model, streamed in a few deltas.")]] }),
    async (sandbox, server) => {
      const p = spawnClaude(standardArgs({}), { sandbox, server })
      try {
        await initializeCli(p)
        const from = p.frames.length
        const t0 = performance.now()
        p.sendUser("Say hello")
        await p.waitFor(
          (f) =>
            f.type === "stream_event" &&
            (f.event as { delta?: { type?: string } } | undefined)?.delta?.type === "text_delta",
          60_000,
          from,
        )
        return performance.now() - t0
      } finally {
        await p.close()
      }
    },
  )

const LOAD_ID = "4b1d7e2a-0000-4000-8000-000000000001"

/** A process's CPU so far (every thread's, from /proc), ms; 0 once it is gone. */
const cpuMs = (pid: number): number => {
  try {
    let ns = 0
    for (const t of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${t}/schedstat`, "utf8").split(" ")[0])
    return ns / 1e6
  } catch {
    return 0
  }
}
const childrenOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, "utf8").split(" ").filter(Boolean).map(Number),
    )
  } catch {
    return []
  }
}
/** The adapter process's CPU and, for ours, its plugin process's (the child running child.mjs), ms. */
const adapterCpu = (pid: number): { adapter: number; plugin: number } => {
  const plugin = childrenOf(pid).find((c) => {
    try {
      return readFileSync(`/proc/${c}/cmdline`, "utf8").includes("child.mjs")
    } catch {
      return false
    }
  })
  return { adapter: cpuMs(pid), plugin: plugin === undefined ? 0 : cpuMs(plugin) }
}

export const load = (adapter: Adapter) =>
  withWorld(
    () => ({ main: [] }),
    async (sandbox, server) => {
      const bytes = writeLongChat(sandbox, LOAD_ID, LOAD_TURNS)
      /** One fresh process: initialize → session/load answered, ms (from initialize, as for session/new). */
      const once = async () => {
        const a = startAdapter(adapter, sandbox, server)
        try {
          const t0 = performance.now()
          await initialize(a.client)
          await a.client.agent.request("session/load", {
            sessionId: LOAD_ID,
            cwd: sandbox.ws,
            mcpServers: [],
          })
          const ms = performance.now() - t0
          const cpu = adapterCpu(a.child.pid!)
          return { ms, cpu, memory: await a.memory(), updates: a.client.updates.length }
        } finally {
          await a.stop()
        }
      }
      const first = await once()
      // A later start in the same data folder and HOME: what an editor sees every time after the first.
      const later = await once()
      return { ...first, msLater: later.ms, cpuLater: later.cpu, bytes }
    },
  )

export interface Emitted {
  stop: string
  kinds: Record<string, number>
  diffs: number
  plans: number
  permissions: number
  elicitations: number
  nested: number
  chunks: number
}

/** The demo scenario, start to end, with every approval allowed and every question given its first option. */
export const demo = (adapter: Adapter) =>
  withWorld(demoScenario, async (sandbox, server) => {
    const a = startAdapter(adapter, sandbox, server, DEMO_ENV)
    try {
      await initialize(a.client, { elicitation: true })
      const session = await a.client.agent.request("session/new", { cwd: sandbox.ws, mcpServers: [] })
      const answer = await a.client.agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: DEMO_PROMPT }],
      })
      const updates = a.client.of(session.sessionId)
      const calls = updates.filter((u) => u.sessionUpdate === "tool_call") as acp.ToolCall[]
      const out: Emitted = {
        stop: answer.stopReason,
        kinds: {},
        diffs: 0,
        plans: updates.filter((u) => u.sessionUpdate === "plan").length,
        permissions: a.client.permissions.length,
        elicitations: a.client.elicitations.length,
        nested: 0,
        chunks: updates.filter((u) => u.sessionUpdate === "agent_message_chunk").length,
      }
      for (const c of calls) {
        out.kinds[c.kind ?? "none"] = (out.kinds[c.kind ?? "none"] ?? 0) + 1
        const meta = (c as { _meta?: { claudeCode?: { parentToolUseId?: string } } })._meta
        if (meta?.claudeCode?.parentToolUseId) out.nested++
      }
      for (const u of updates)
        if (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update")
          out.diffs += (u.content ?? []).filter((c) => c.type === "diff").length
      return out
    } finally {
      await a.stop()
    }
  })

/**
 * The ACP front end side by side with `@agentclientprotocol/claude-agent-acp`
 * (pinned devDependency, used only here): both adapters run as processes on
 * the pinned Node 24, speak ACP over stdio to the SDK's own client, drive the
 * same pinned CLI (claude-agent-acp through CLAUDE_CODE_EXECUTABLE) against
 * the same scripted model on 127.0.0.1, on the same scenarios:
 *
 * - `initialize` → `session/new` response, wall time (median of RUNS fresh processes);
 * - `session/prompt` → first `agent_message_chunk`: the session's first
 *   prompt (its CLI may still be starting) and the next one (the CLI runs:
 *   the adapter's own overhead, the headline), beside the raw CLI's user
 *   line → first text delta (the floor);
 * - the adapter's own peak RSS: the sum of the peaks (VmHWM) of the adapter
 *   process and every descendant that is not a `claude` CLI (ours: the ACP
 *   host and the plugin process), bench/acp-memory.ts; beside it the
 *   floors: a bare Node, a Node with only the ACP SDK (what any adapter on
 *   it costs), our bundle evaluated;
 * - `session/load` of a long stored chat (LOAD_TURNS turns, written in the
 *   CLI's record format): time to the response (the first start in a fresh
 *   data folder, the headline's, and a later start in the same one) and the
 *   adapter's peak RSS;
 * - the updates each emits for the demo scenario (testkit/demo.ts).
 *
 * `npm run bench -- acp`. Last line:
 * `acp: new <x>x, first chunk <y>x, memory <m>x, load <l>x` (ours / theirs; lower is better).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { buildSync } from "esbuild"
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { writeLongChat } from "./acp-long-chat.ts"
import { peakMb, startTreeWatcher, type TreePeak } from "./acp-memory.ts"
import { allowFirst, childStream, initialize, makeTestClient, type TestClient } from "../host/acp/testing.ts"
import {
  claudeBinary,
  cliEnv,
  initialize as initializeCli,
  makeSandbox,
  type Sandbox,
  spawnClaude,
  standardArgs,
} from "../testkit/cli.ts"
import { DEMO_ENV, DEMO_PROMPT, demoScenario } from "../testkit/demo.ts"
import { type ModelServer, type Scenario, startModelServer, text } from "../testkit/model-server.ts"

const RUNS = Number(process.env.ACP_BENCH_RUNS ?? 5)
const LOAD_RUNS = Math.min(3, RUNS)
const IDLE_MS = 1_500
const LOAD_TURNS = 2_000
const root = join(import.meta.dirname, "..")

interface Adapter {
  readonly name: string
  readonly command: (sandbox: Sandbox) => string[]
  readonly env?: Record<string, string>
}

let node24 = ""
/** The adapters' trees are sampled on a worker thread (bench/acp-memory.ts), started in main. */
let trees: Awaited<ReturnType<typeof startTreeWatcher>> | undefined
/** ACP_BENCH_DEBUG=1: the adapters' stderr (ours with CVG_ACP_DEBUG=1: its timings) on this one's. */
const debug = process.env.ACP_BENCH_DEBUG === "1"

const ours = (
  name: string,
  bundle: string,
  flags = process.env.ACP_BENCH_NODE_FLAGS,
  pluginV8 = process.env.CVG_ACP_PLUGIN_V8,
): Adapter => ({
  name,
  ...(pluginV8 !== undefined && { env: { CVG_ACP_PLUGIN_V8: pluginV8 } }),
  command: (s) => [
    node24,
    ...(flags ?? "").split(" ").filter(Boolean),
    bundle,
    "--data",
    join(s.root, "data"),
  ],
})
const adapters: Adapter[] = [
  ours("ours", join(root, "dist/acp/main.mjs")),
  {
    name: "claude-agent-acp",
    command: () => [node24, join(root, "node_modules/@agentclientprotocol/claude-agent-acp/dist/index.js")],
    env: { CLAUDE_CODE_EXECUTABLE: claudeBinary() },
  },
]
// Before/after in one run: ACP_BENCH_BASELINE=<an older build of dist/acp/main.mjs, in a folder two below the checkout>.
// A Node flag's price, interleaved: the same bundle as baseline, ACP_BENCH_BASELINE_NODE_FLAGS for it
// (ACP_BENCH_NODE_FLAGS for ours; both default to none).
const baseline = process.env.ACP_BENCH_BASELINE
// ACP_BENCH_BASELINE_PLUGIN_V8: the baseline's CVG_ACP_PLUGIN_V8 (the plugin process's heap flags), likewise.
if (baseline)
  adapters.push(
    ours(
      "ours before",
      baseline,
      process.env.ACP_BENCH_BASELINE_NODE_FLAGS ?? "",
      process.env.ACP_BENCH_BASELINE_PLUGIN_V8 ?? process.env.CVG_ACP_PLUGIN_V8,
    ),
  )
// ACP_BENCH_ONLY_OURS=1 with ACP_BENCH_ONLY: leave claude-agent-acp out (profiling ours, e.g. with --cpu-prof).
const onlyOurs = process.env.ACP_BENCH_ONLY_OURS === "1"

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)] ?? Number.NaN
}

interface Running {
  readonly child: ChildProcess
  readonly client: TestClient
  /** The adapter's tree peak so far (it keeps sampling until stop). */
  readonly memory: () => Promise<TreePeak>
  readonly stop: () => Promise<void>
}

const startAdapter = (
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
      ...(debug && { CVG_ACP_DEBUG: "1" }),
    },
    stdio: ["pipe", "pipe", debug ? "inherit" : "ignore"],
  })
  const tree = trees!.watch(child.pid!)
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

const withWorld = async <A>(
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
const newAndFirstChunk = (adapter: Adapter) =>
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
const idle = (adapter: Adapter) =>
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

/**
 * Our ACP bundle evaluated and nothing started (`--help`): its peak RSS at
 * exit, MB. `--help` exits before main.ts imports the ACP side, so every
 * chunk is imported first, under the compile cache the entry turns on.
 */
const bundleLoaded = (): number => {
  const dir = join(root, "dist/acp")
  const code = [
    `import { readdirSync, readFileSync } from "node:fs"`,
    `import * as nodeModule from "node:module"`,
    `process.on("exit", () => process.stderr.write("HWM " + /VmHWM:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1] + "\\n"))`,
    `nodeModule.enableCompileCache?.(${JSON.stringify(join(root, "node_modules/.cache/cvg-acp-compile"))})`,
    `for (const f of readdirSync(${JSON.stringify(dir)})) if (/-[A-Z0-9]{8}\\.mjs$/.test(f)) await import(${JSON.stringify(`${dir}/`)} + f)`,
    `await import(${JSON.stringify(join(dir, "main.mjs"))})`,
  ].join("\n")
  const out = spawnSync(node24, ["--input-type=module", "-e", code, "--", "--help"], { encoding: "utf8" })
  const kb = /HWM (\d+)/.exec(out.stderr)?.[1]
  return kb ? Number(kb) / 1024 : Number.NaN
}

/** A bare Node process, idle: the floor of any one process. */
const bareNode = async (): Promise<number> => {
  const child = spawn(node24, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" })
  await new Promise((r) => setTimeout(r, IDLE_MS))
  const mb = peakMb(child.pid!) ?? Number.NaN
  child.kill("SIGKILL")
  return mb
}

/**
 * A Node that only imports the official ACP SDK (bundled and minified by
 * esbuild, as an adapter would ship it), idle 300 ms: what any adapter built
 * on the SDK the issue requires costs before it does anything.
 */
const sdkOnlyNode = async (): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-sdk-"))
  try {
    const out = join(dir, "sdk-only.mjs")
    buildSync({
      stdin: {
        contents: `import * as acp from "@agentclientprotocol/sdk/unstable"; globalThis.__acp = acp; setInterval(() => {}, 1000)`,
        resolveDir: root,
        loader: "js",
      },
      bundle: true,
      minify: true,
      platform: "node",
      format: "esm",
      outfile: out,
      logLevel: "warning",
    })
    const child = spawn(node24, [out], { stdio: "ignore" })
    await new Promise((r) => setTimeout(r, 300))
    const mb = peakMb(child.pid!) ?? Number.NaN
    child.kill("SIGKILL")
    return mb
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The floor: the raw CLI's user line → first text delta. */
const rawFirstChunk = () =>
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

const load = (adapter: Adapter) =>
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

interface Emitted {
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
const demo = (adapter: Adapter) =>
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

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const row = (cells: Array<string | number>) => `| ${cells.join(" | ")} |`
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
const m = (xs: number[]) => median(xs)
const roles = (xs: TreePeak[]) => {
  const names = [...new Set(xs.flatMap((x) => Object.keys(x.byRole)))].sort()
  return names.map((n) => `${n} ${fmt(m(xs.map((x) => x.byRole[n] ?? 0)))}`).join(" + ")
}

export const main = async () => {
  node24 = execFileSync(process.execPath, [join(root, "scripts/current-node.mjs")], {
    encoding: "utf8",
  }).trim()
  execFileSync(process.execPath, [join(root, "scripts/build-acp.mjs")], { stdio: "inherit" })
  trees = await startTreeWatcher()
  try {
    await measure()
  } finally {
    await trees.close()
  }
}

const measure = async () => {
  console.log(
    `acp bench: both adapters on ${execFileSync(node24, ["--version"], { encoding: "utf8" }).trim()}, CLI ${claudeBinary()}, load average ${loadAverage()}`,
  )

  type Figures = {
    tNew: number[]
    tNewLater: number[]
    tFirst: number[]
    tWarm: number[]
    memory: TreePeak[]
    idle: TreePeak[]
    loadMs: number[]
    loadMsLater: number[]
    loadMemory: TreePeak[]
    updates: number
    bytes: number
  }
  const figures: Record<string, Figures> = {}
  const slot = (name: string) =>
    (figures[name] ??= {
      tNew: [],
      tNewLater: [],
      tFirst: [],
      tWarm: [],
      memory: [],
      idle: [],
      loadMs: [],
      loadMsLater: [],
      loadMemory: [],
      updates: 0,
      bytes: 0,
    })
  const bare: number[] = []
  const loaded: number[] = []
  const sdkOnly: number[] = []
  // One untimed start of each of ours first: the plugin's bundle and its code cache are (re)built at a
  // host's first start after a change, which would fall on whichever run came first.
  for (const adapter of adapters) if (adapter.name.startsWith("ours")) await idle(adapter)
  // Interleaved, so a burst of load on the shared machine falls on both.
  // ACP_BENCH_ONLY=load (or memory: idle, then load): one scenario's figures per process, a quick look while working;
  // each line with the load average, and for a load the CPU of the adapter process and of our plugin process
  // (every thread's, from /proc: a steadier figure than the wall time on a shared machine).
  const only = process.env.ACP_BENCH_ONLY
  if (only === "new") {
    for (let run = 0; run < RUNS; run++)
      for (const adapter of adapters) {
        if (onlyOurs && adapter.name === "claude-agent-acp") continue
        const f = await newAndFirstChunk(adapter)
        console.log(
          `${adapter.name}: new ${fmt(f.tNew)} ms, later ${fmt(f.tNewLater)} ms, first chunk ${fmt(f.tFirst)} ms, next ${fmt(f.tWarm)} ms, ${fmt(f.memory.totalMb)} MB (${roles([f.memory])}), load average ${loadAverage()}`,
        )
      }
    return
  }
  if (only === "load" || only === "memory") {
    for (let run = 0; run < RUNS; run++)
      for (const adapter of adapters) {
        if (onlyOurs && adapter.name === "claude-agent-acp") continue
        if (only === "memory") {
          const i = await idle(adapter)
          console.log(`${adapter.name}: idle ${fmt(i.totalMb)} MB (${roles([i])})`)
        }
        const l = await load(adapter)
        console.log(
          `${adapter.name}: load ${fmt(l.ms)} ms (cpu ${fmt(l.cpu.adapter)} + plugin process ${fmt(l.cpu.plugin)}), later ${fmt(l.msLater)} ms (cpu ${fmt(l.cpuLater.adapter)} + ${fmt(l.cpuLater.plugin)}), ${fmt(l.memory.totalMb)} MB (${roles([l.memory])}), load average ${loadAverage()}`,
        )
      }
    return
  }
  for (let run = 0; run < RUNS; run++)
    for (const adapter of adapters) {
      const f = await newAndFirstChunk(adapter)
      const s = slot(adapter.name)
      s.tNew.push(f.tNew)
      s.tNewLater.push(f.tNewLater)
      s.tFirst.push(f.tFirst)
      s.tWarm.push(f.tWarm)
      s.memory.push(f.memory)
      s.idle.push(await idle(adapter))
      if (adapter === adapters[0]) {
        bare.push(await bareNode())
        loaded.push(bundleLoaded())
        sdkOnly.push(await sdkOnlyNode())
      }
    }
  const raw: number[] = []
  for (let run = 0; run < RUNS; run++) raw.push(await rawFirstChunk())
  for (let run = 0; run < LOAD_RUNS; run++)
    for (const adapter of adapters) {
      const l = await load(adapter)
      const s = slot(adapter.name)
      s.loadMs.push(l.ms)
      s.loadMsLater.push(l.msLater)
      s.loadMemory.push(l.memory)
      s.updates = l.updates
      s.bytes = l.bytes
    }
  const demos: Record<string, Emitted> = {}
  for (const adapter of adapters.slice(0, 2)) demos[adapter.name] = await demo(adapter)

  const [ours, theirs] = [figures.ours!, figures["claude-agent-acp"]!]
  const ratio = (a: number[], b: number[]) => fmt(m(a) / m(b), 2)
  const total = (xs: TreePeak[]) => xs.map((x) => x.totalMb)
  /** A row of one figure's medians, ours beside theirs and their ratio, then any further columns. */
  const compared = (label: string, oursFigure: number[], theirsFigure: number[], ...more: string[]) =>
    console.log(
      row([label, fmt(m(oursFigure)), fmt(m(theirsFigure)), ratio(oursFigure, theirsFigure), ...more]),
    )
  console.log(
    `\nmedians of ${RUNS} fresh processes each (load: ${LOAD_RUNS}), ms and MB; load average now ${loadAverage()}\n`,
  )
  console.log(row(["", "ours", "claude-agent-acp", "ours / theirs", "raw CLI"]))
  console.log(row(["---", "---", "---", "---", "---"]))
  compared("initialize → session/new, first start in a fresh data folder (ms)", ours.tNew, theirs.tNew, "")
  compared("initialize → session/new, a later start (ms)", ours.tNewLater, theirs.tNewLater, "")
  compared("first prompt → first agent_message_chunk, CLI starting (ms)", ours.tFirst, theirs.tFirst, "")
  compared(
    "next prompt → first agent_message_chunk (ms)",
    ours.tWarm,
    theirs.tWarm,
    `${fmt(m(raw))} (ours ${m(ours.tWarm) >= m(raw) ? "+" : ""}${fmt(m(ours.tWarm) - m(raw))})`,
  )
  compared(
    "adapter peak RSS, one prompt: sum over its non-CLI processes (MB)",
    total(ours.memory),
    total(theirs.memory),
    "",
  )
  console.log(row(["  of which", roles(ours.memory), roles(theirs.memory), "", ""]))
  compared(
    `session/load, ${LOAD_TURNS} turns, ${fmt(ours.bytes / 1e6, 1)} MB, first start in a fresh data folder (ms)`,
    ours.loadMs,
    theirs.loadMs,
    "",
  )
  compared("session/load, the same, a later start (ms)", ours.loadMsLater, theirs.loadMsLater, "")
  compared("session/load adapter peak RSS, summed (MB)", total(ours.loadMemory), total(theirs.loadMemory), "")
  console.log(row(["  of which", roles(ours.loadMemory), roles(theirs.loadMemory), "", ""]))
  console.log(row(["session/load updates sent", ours.updates, theirs.updates, "", ""]))
  console.log(
    `\nthe memory floor (MB, peak RSS): a bare Node is ${fmt(m(bare))}, a Node with only the ACP SDK (bundled, minified, idle 300 ms) ${fmt(m(sdkOnly))}, two bare Nodes ${fmt(2 * m(bare))}, Node with our ACP bundle evaluated (--help) ${fmt(m(loaded))}\n`,
  )
  console.log(row(["", "ours", "claude-agent-acp", "ours / theirs"]))
  console.log(row(["---", "---", "---", "---"]))
  compared(`initialized, idle ${IDLE_MS} ms, summed`, total(ours.idle), total(theirs.idle))
  console.log(row(["  of which", roles(ours.idle), roles(theirs.idle), ""]))
  console.log(
    row([
      "CLI processes seen while idle (not counted)",
      m(ours.idle.map((x) => x.clis)),
      m(theirs.idle.map((x) => x.clis)),
      "",
    ]),
  )

  const before = figures["ours before"]
  if (before) {
    console.log(`\nbefore / after, interleaved in this run (ours before: ${baseline})\n`)
    console.log(row(["", "ours before", "ours", "after / before"]))
    console.log(row(["---", "---", "---", "---"]))
    const pairs: Array<[string, number[], number[]]> = [
      ["initialize → session/new, first start (ms)", before.tNew, ours.tNew],
      ["initialize → session/new, a later start (ms)", before.tNewLater, ours.tNewLater],
      ["next prompt → first chunk (ms)", before.tWarm, ours.tWarm],
      ["peak RSS, one prompt, summed (MB)", total(before.memory), total(ours.memory)],
      ["initialized and idle, summed (MB)", total(before.idle), total(ours.idle)],
      ["session/load, first start (ms)", before.loadMs, ours.loadMs],
      ["session/load, a later start (ms)", before.loadMsLater, ours.loadMsLater],
      ["session/load peak RSS, summed (MB)", total(before.loadMemory), total(ours.loadMemory)],
    ]
    for (const [label, b, a] of pairs) console.log(row([label, fmt(m(b)), fmt(m(a)), ratio(a, b)]))
  }

  console.log(`\ndemo scenario ("${DEMO_PROMPT}"), the updates each adapter emitted\n`)
  const [d1, d2] = [demos.ours!, demos["claude-agent-acp"]!]
  const kinds = [...new Set([...Object.keys(d1.kinds), ...Object.keys(d2.kinds)])].sort()
  console.log(row(["", "ours", "claude-agent-acp"]))
  console.log(row(["---", "---", "---"]))
  console.log(row(["stop reason", d1.stop, d2.stop]))
  for (const k of kinds) console.log(row([`tool_call kind ${k}`, d1.kinds[k] ?? 0, d2.kinds[k] ?? 0]))
  console.log(row(["diff contents", d1.diffs, d2.diffs]))
  console.log(row(["plan updates", d1.plans, d2.plans]))
  console.log(row(["permission requests", d1.permissions, d2.permissions]))
  console.log(row(["elicitation requests (questions)", d1.elicitations, d2.elicitations]))
  console.log(row(["tool calls nested under a parent (_meta)", d1.nested, d2.nested]))
  console.log(row(["agent_message_chunk updates", d1.chunks, d2.chunks]))

  console.log(
    `\nacp: new ${ratio(ours.tNewLater, theirs.tNewLater)}x, first chunk ${ratio(ours.tWarm, theirs.tWarm)}x, memory ${ratio(total(ours.memory), total(theirs.memory))}x, load ${ratio(ours.loadMs, theirs.loadMs)}x`,
  )
}

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
 * - plan mode with a stdio MCP server (acp-plan-mcp.ts): initialize → a
 *   planned prompt's answer (the model calls the server's tool, writes its
 *   plan, ExitPlanMode approved), wall time and the adapter's peak RSS;
 * - the updates each emits for the demo scenario (testkit/demo.ts).
 *
 * `npm run bench -- acp`. Last line:
 * `acp: new <x>x, first chunk <y>x, memory <m>x, load <l>x` (ours / theirs; lower is better).
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { bareNode, bundleLoaded, sdkOnlyNode, startTreeWatcher, type TreePeak } from "./acp-memory.ts"
import { type PlanRun, planWithMcp } from "./acp-plan-mcp.ts"
import {
  type Adapter,
  bench,
  demo,
  type Emitted,
  IDLE_MS,
  idle,
  LOAD_TURNS,
  load,
  newAndFirstChunk,
  rawFirstChunk,
} from "./acp-scenarios.ts"
import { claudeBinary } from "../testkit/cli.ts"
import { DEMO_PROMPT } from "../testkit/demo.ts"

const RUNS = Number(process.env.ACP_BENCH_RUNS ?? 5)
const LOAD_RUNS = Math.min(3, RUNS)
const root = join(import.meta.dirname, "..")

let node24 = ""

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

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a")
const row = (cells: Array<string | number>) => `| ${cells.join(" | ")} |`
const loadAverage = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
const m = (xs: number[]) => median(xs)
const roles = (xs: TreePeak[]) => {
  const names = [...new Set(xs.flatMap((x) => Object.keys(x.byRole)))].sort()
  return names.map((n) => `${n} ${fmt(m(xs.map((x) => x.byRole[n] ?? 0)))}`).join(" + ")
}

interface Figures {
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
  plan: PlanRun[]
}

interface Collected {
  readonly figures: Record<string, Figures>
  readonly bare: number[]
  readonly loaded: number[]
  readonly sdkOnly: number[]
  readonly raw: number[]
  readonly demos: Record<string, Emitted>
}

export const main = async () => {
  node24 = execFileSync(process.execPath, [join(root, "scripts/current-node.mjs")], {
    encoding: "utf8",
  }).trim()
  execFileSync(process.execPath, [join(root, "scripts/build-acp.mjs")], { stdio: "inherit" })
  bench.trees = await startTreeWatcher()
  try {
    console.log(
      `acp bench: both adapters on ${execFileSync(node24, ["--version"], { encoding: "utf8" }).trim()}, CLI ${claudeBinary()}, load average ${loadAverage()}`,
    )
    // One untimed start of each of ours first: the plugin's bundle and its code cache are (re)built at a
    // host's first start after a change, which would fall on whichever run came first.
    for (const adapter of adapters) if (adapter.name.startsWith("ours")) await idle(adapter)
    const only = process.env.ACP_BENCH_ONLY
    if (only === "new" || only === "load" || only === "memory" || only === "plan") await quickLook(only)
    else report(await collect())
  } finally {
    await bench.trees.close()
  }
}

/**
 * ACP_BENCH_ONLY=new|load|memory|plan (memory: idle, then load): one scenario's
 * figures per process, a quick look while working; each line with the load
 * average, and for a load the CPU of the adapter process and of our plugin
 * process (every thread's, from /proc: steadier than the wall time on a
 * shared machine).
 */
const quickLook = async (only: "new" | "load" | "memory" | "plan") => {
  for (let run = 0; run < RUNS; run++)
    for (const adapter of adapters) {
      if (onlyOurs && adapter.name === "claude-agent-acp") continue
      if (only === "plan") {
        const p = await planWithMcp(adapter)
        console.log(
          `${adapter.name}: plan + MCP ${fmt(p.ms)} ms, ${fmt(p.memory.totalMb)} MB (${roles([p.memory])}), ${p.stop}, echoed ${p.echoed}, told plan mode ${p.planned}, load average ${loadAverage()}`,
        )
        continue
      }
      if (only === "new") {
        const f = await newAndFirstChunk(adapter)
        console.log(
          `${adapter.name}: new ${fmt(f.tNew)} ms, later ${fmt(f.tNewLater)} ms, first chunk ${fmt(f.tFirst)} ms, next ${fmt(f.tWarm)} ms, ${fmt(f.memory.totalMb)} MB (${roles([f.memory])}), load average ${loadAverage()}`,
        )
        continue
      }
      if (only === "memory") {
        const i = await idle(adapter)
        console.log(`${adapter.name}: idle ${fmt(i.totalMb)} MB (${roles([i])})`)
      }
      const l = await load(adapter)
      console.log(
        `${adapter.name}: load ${fmt(l.ms)} ms (cpu ${fmt(l.cpu.adapter)} + plugin process ${fmt(l.cpu.plugin)}), later ${fmt(l.msLater)} ms (cpu ${fmt(l.cpuLater.adapter)} + ${fmt(l.cpuLater.plugin)}), ${fmt(l.memory.totalMb)} MB (${roles([l.memory])}), load average ${loadAverage()}`,
      )
    }
}

/** Every scenario, interleaved across the adapters so a burst of load on the shared machine falls on both. */
const collect = async (): Promise<Collected> => {
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
      plan: [],
    })
  const collected: Collected = { figures, bare: [], loaded: [], sdkOnly: [], raw: [], demos: {} }
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
        collected.bare.push(await bareNode(node24, IDLE_MS))
        collected.loaded.push(bundleLoaded(node24, root))
        collected.sdkOnly.push(await sdkOnlyNode(node24, root))
      }
    }
  for (let run = 0; run < RUNS; run++) collected.raw.push(await rawFirstChunk())
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
  for (let run = 0; run < LOAD_RUNS; run++)
    for (const adapter of adapters) slot(adapter.name).plan.push(await planWithMcp(adapter))
  for (const adapter of adapters.slice(0, 2)) collected.demos[adapter.name] = await demo(adapter)
  return collected
}

const ratio = (a: number[], b: number[]) => fmt(m(a) / m(b), 2)
const total = (xs: TreePeak[]) => xs.map((x) => x.totalMb)
/** A row of one figure's medians, ours beside theirs and their ratio, then any further columns. */
const compared = (label: string, oursFigure: number[], theirsFigure: number[], ...more: string[]) =>
  console.log(
    row([label, fmt(m(oursFigure)), fmt(m(theirsFigure)), ratio(oursFigure, theirsFigure), ...more]),
  )

const report = (c: Collected) => {
  const [ours, theirs] = [c.figures.ours!, c.figures["claude-agent-acp"]!]
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
    `${fmt(m(c.raw))} (ours ${m(ours.tWarm) >= m(c.raw) ? "+" : ""}${fmt(m(ours.tWarm) - m(c.raw))})`,
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
    `\nthe memory floor (MB, peak RSS): a bare Node is ${fmt(m(c.bare))}, a Node with only the ACP SDK (bundled, minified, idle 300 ms) ${fmt(m(c.sdkOnly))}, two bare Nodes ${fmt(2 * m(c.bare))}, Node with our ACP bundle evaluated (--help) ${fmt(m(c.loaded))}\n`,
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
  reportPlan(ours.plan, theirs.plan)
  reportBaseline(c.figures["ours before"], ours)
  reportDemo(c.demos)
  console.log(
    `\nacp: new ${ratio(ours.tNewLater, theirs.tNewLater)}x, first chunk ${ratio(ours.tWarm, theirs.tWarm)}x, memory ${ratio(total(ours.memory), total(theirs.memory))}x, load ${ratio(ours.loadMs, theirs.loadMs)}x`,
  )
}

/** Plan mode with a stdio MCP server, the same work for both. */
const reportPlan = (ours: PlanRun[], theirs: PlanRun[]) => {
  console.log(`\nplan mode with a stdio MCP server (acp-plan-mcp.ts), medians of ${ours.length}\n`)
  console.log(row(["", "ours", "claude-agent-acp", "ours / theirs"]))
  console.log(row(["---", "---", "---", "---"]))
  const ms = (xs: PlanRun[]) => xs.map((x) => x.ms)
  const mb = (xs: PlanRun[]) => xs.map((x) => x.memory.totalMb)
  console.log(
    row([
      "initialize → the planned prompt answered (ms)",
      fmt(m(ms(ours))),
      fmt(m(ms(theirs))),
      ratio(ms(ours), ms(theirs)),
    ]),
  )
  console.log(
    row(["adapter peak RSS, summed (MB)", fmt(m(mb(ours))), fmt(m(mb(theirs))), ratio(mb(ours), mb(theirs))]),
  )
  console.log(row(["  of which", roles(ours.map((x) => x.memory)), roles(theirs.map((x) => x.memory)), ""]))
  const last = (xs: PlanRun[]) => xs.at(-1)
  console.log(row(["stop reason", last(ours)?.stop ?? "n/a", last(theirs)?.stop ?? "n/a", ""]))
  const runsWith = (xs: PlanRun[], seen: (x: PlanRun) => boolean) => `${xs.filter(seen).length}/${xs.length}`
  for (const [label, seen] of [
    ["the MCP tool's answer reached the model", (x: PlanRun) => x.echoed],
    ["the model was told it is in plan mode", (x: PlanRun) => x.planned],
  ] as const)
    console.log(row([label, runsWith(ours, seen), runsWith(theirs, seen), ""]))
  console.log(
    row([
      "permission requests (ExitPlanMode's among them)",
      last(ours)?.permissions ?? "n/a",
      last(theirs)?.permissions ?? "n/a",
      "",
    ]),
  )
}

/** ACP_BENCH_BASELINE: an older build of ours beside this one, interleaved in the same run. */
const reportBaseline = (before: Figures | undefined, ours: Figures) => {
  if (!before) return
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

const reportDemo = (demos: Record<string, Emitted>) => {
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
}

/**
 * What the durable record of undelivered inputs (session/undelivered.ts)
 * costs a prompt: it is written once before each stdin write (awaited) and
 * once after each report (in the background). Measured side by side in one
 * run through the real host (plugin in its own process, the pinned CLI, the
 * scripted model on 127.0.0.1):
 *
 * - a prompt's acceptance: `host.call("prompt")` → `PromptAccepted` (the
 *   record's write is inside it), and the whole turn to its `RunEnded`;
 * - one record write as the host performs it: `storage.set` of a one-entry
 *   list into the plugin's real storage file (whole-file rewrite, fsync,
 *   rename); the plugin's side adds one IPC round trip to it.
 *
 *   npm run bench -- undelivered        (UNDELIVERED_RUNS, default 15)
 *
 * Last line: `undelivered: one record write <w> ms, <a>% of a prompt's acceptance (<x> ms), <t>% of a turn (<y> ms)`.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { startHost } from "../host/core/host.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { cliEnv, makeSandbox } from "../testkit/cli.ts"
import { startModelServer, text } from "../testkit/model-server.ts"
import { type Figures, median } from "./workers.ts"

const RUNS = Number(process.env.UNDELIVERED_RUNS ?? 15)
const WARMUP = 2
const repoRoot = fileURLToPath(new URL("..", import.meta.url))

const ms = (x: number) => `${x.toFixed(x >= 10 ? 1 : 2)} ms`

export const main = async (): Promise<Figures> => {
  const sandbox = makeSandbox("cvg-bench-undelivered-")
  const server = await startModelServer({ main: Array.from({ length: RUNS + WARMUP }, () => [text("ok")]) })
  const dataDir = join(sandbox.root, "data")
  mkdirSync(dataDir, { recursive: true })
  const host = await startHost({
    pluginDir: repoRoot,
    home: sandbox.home,
    dataDir,
    env: cliEnv(sandbox, server),
    workspaces: [sandbox.ws],
    killGraceMs: 1_000,
  })
  try {
    const agentId = "claude"
    const { session_id } = await host.call(agentId, "createSession", { cwd: sandbox.ws })
    const accepted: number[] = []
    const turns: number[] = []
    for (let i = 0; i < RUNS + WARMUP; i++) {
      const t0 = performance.now()
      const answer = await host.call(agentId, "prompt", { sessionId: session_id, text: `say ok ${i}` })
      const t1 = performance.now()
      await host.events.waitFor(
        (e) =>
          e.kind === "agent_event" &&
          (e.event as AgentEvent).type === "RunEnded" &&
          (e.event as Extract<AgentEvent, { type: "RunEnded" }>).run_id === answer.run_id,
        60_000,
      )
      const t2 = performance.now()
      if (i < WARMUP) continue
      accepted.push(t1 - t0)
      turns.push(t2 - t0)
    }
    const writes: number[] = []
    const entry = { uuid: crypto.randomUUID(), delivery_id: "d", run_id: crypto.randomUUID() }
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      await Effect.runPromise(host.storage.set("undelivered:bench", [entry]))
      writes.push(performance.now() - t0)
      await Effect.runPromise(host.storage.delete("undelivered:bench"))
    }
    const w = median(writes)
    const a = median(accepted)
    const t = median(turns)
    console.log(`runs: ${RUNS} (after ${WARMUP} warm-up prompts), medians`)
    console.log("| measure | median | share |")
    console.log("| --- | --- | --- |")
    console.log(`| prompt accepted (host.call prompt → PromptAccepted) | ${ms(a)} | 100% |`)
    console.log(`| whole turn (→ RunEnded) | ${ms(t)} | |`)
    console.log(
      `| one record write, host side (storage.set + fsync) | ${ms(w)} | ${((w / a) * 100).toFixed(0)}% of acceptance, ${((w / t) * 100).toFixed(1)}% of a turn |`,
    )
    console.log(
      `undelivered: one record write ${ms(w)}, ${((w / a) * 100).toFixed(0)}% of a prompt's acceptance (${ms(a)}), ${((w / t) * 100).toFixed(1)}% of a turn (${ms(t)})`,
    )
    return { "prompt accepted ms": a, "turn ms": t, "record write ms": w }
  } finally {
    await host.close()
    await server.close()
    sandbox.cleanup()
  }
}

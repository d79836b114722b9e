/**
 * Startup: from `create_session` to the CLI's `initialize` answer, the
 * plugin's time against the same CLI spawned by hand with the same flags
 * (bench/scale-live.ts prints it). The real pinned CLI, offline against
 * testkit's scripted model in a sandbox, as the end-to-end tests run it.
 *
 * Per round, interleaved: the plugin (a real host, the plugin in its own
 * process as `npm start` runs it) creates a session, and `createSession`
 * returns once the CLI answered `initialize` (agent.ts `startProcess`); the
 * session is closed. Then the CLI is spawned by hand with the argument list
 * that session's process had (read from the host's live processes, a fresh
 * `--session-id`), the same environment, and the same `initialize` request
 * the plugin sends (bare: the session has no plugin tools), timed until its
 * answer. One warm-up round first (the plugin's bundle, the CLI's
 * `--version` probe, the page cache).
 *
 * The two totals differ by the CLI's own start, which swings by hundreds of
 * milliseconds on a loaded machine; so each round also takes the plugin's
 * own time directly, from bench/spawn-probe.ts's marks on the same clock:
 * from the call to the spawn request (everything the plugin and the host do
 * before the CLI exists), and from the answer's line complete on the pipe to
 * `createSession` returning (reading it, the session ready, the answer back
 * over the channel). What lies between is the CLI's own start, measured the
 * same way on the by-hand side (spawn call to answer) for comparison.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { startHost } from "../host/core/host.ts"
import { initializeRequest } from "../session/launch.ts"
import { cliEnv, initialize, makeSandbox, spawnClaude } from "../testkit/cli.ts"
import { startModelServer } from "../testkit/model-server.ts"
import { armSpawnProbe, disarmSpawnProbe, type StartMarks } from "./spawn-probe.ts"

export interface StartupRounds {
  /** ms from create_session called to it returning (the CLI answered initialize). */
  readonly plugin: number[]
  /** ms from spawning the CLI by hand to its initialize answer. */
  readonly raw: number[]
  /** The plugin's own ms before the spawn: create_session called → the host asked to spawn. */
  readonly beforeSpawn: number[]
  /** The plugin's own ms after the answer: its line complete on the pipe → create_session returned. */
  readonly afterAnswer: number[]
  /** ms from the spawn to the initialize request on the CLI's stdin, plugin side (it overlaps the CLI's start). */
  readonly toRequest: number[]
  /** The CLI's own start inside the plugin's round: spawn → answer, and the same marks by hand. */
  readonly cliInPlugin: number[]
  readonly cliByHand: number[]
}

const repoRoot = join(import.meta.dirname, "..")

const complete = (marks: StartMarks, side: string): Required<StartMarks> => {
  const { spawnAt, writtenAt, answeredAt } = marks
  if (spawnAt === undefined || writtenAt === undefined || answeredAt === undefined)
    throw new Error(`${side}: the spawn probe missed a mark (${JSON.stringify(marks)})`)
  return { spawnAt, writtenAt, answeredAt }
}

type Host = Awaited<ReturnType<typeof startHost>>

/** One plugin round: create_session timed with the probe's marks; the session closed; its CLI's arguments returned. */
const pluginRound = async (host: Host, cwd: string) => {
  const marks = armSpawnProbe()
  const at = performance.now()
  const created = (await host.call("claude", "createSession", { cwd })) as { session_id: string }
  const returned = performance.now()
  disarmSpawnProbe()
  const m = complete(marks, "plugin")
  const cli = host.processes().find((p) => p.command === "claude")
  if (cli === undefined) throw new Error("the plugin's session has no claude process")
  const args = [...cli.args]
  await host.call("claude", "closeSession", { sessionId: created.session_id })
  return {
    args,
    total: returned - at,
    beforeSpawn: m.spawnAt - at,
    afterAnswer: returned - m.answeredAt,
    toRequest: m.writtenAt - m.spawnAt,
    cli: m.answeredAt - m.spawnAt,
  }
}

const emptyRounds = () => ({
  plugin: [] as number[],
  raw: [] as number[],
  beforeSpawn: [] as number[],
  afterAnswer: [] as number[],
  toRequest: [] as number[],
  cliInPlugin: [] as number[],
  cliByHand: [] as number[],
})

/**
 * `rounds` measured rounds after one warm-up. With `against` (another
 * plugin folder, e.g. main's tree), a second host runs that plugin and each
 * round times both plugins and then the CLI by hand, in turn: A/B in one run.
 */
export const measureStartup = async (
  rounds: number,
  against?: string,
): Promise<StartupRounds & { readonly against?: StartupRounds }> => {
  const sandbox = makeSandbox("cvg-scale-startup-")
  const server = await startModelServer({ main: [] })
  const env = cliEnv(sandbox, server)
  const hosts: Host[] = []
  const sides = [emptyRounds(), ...(against === undefined ? [] : [emptyRounds()])]
  try {
    for (const [i, pluginDir] of [repoRoot, ...(against === undefined ? [] : [against])].entries()) {
      const dataDir = join(sandbox.root, `data-${i}`)
      mkdirSync(dataDir, { recursive: true })
      hosts.push(
        await startHost({
          pluginDir,
          home: sandbox.home,
          dataDir,
          env,
          workspaces: [sandbox.ws],
          killGraceMs: 1_000,
        }),
      )
    }
    for (let round = 0; round <= rounds; round++) {
      // The side that goes first alternates, so neither always meets a just-warmed page cache.
      const order = hosts.map((_, i) => (i + round) % hosts.length)
      const measured: Array<Awaited<ReturnType<typeof pluginRound>>> = []
      for (const i of order) measured[i] = await pluginRound(hosts[i] as Host, sandbox.ws)
      const args = [...(measured[0] as { args: string[] }).args]
      const id = args.indexOf("--session-id")
      if (id !== -1) args[id + 1] = crypto.randomUUID()

      const marks = armSpawnProbe()
      const rawAt = performance.now()
      const p = spawnClaude(args, {
        sandbox,
        server,
        env: { ...env, CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" },
      })
      // A session without plugin tools sends a bare initialize (session/launch.ts initializeRequest).
      await initialize(p, { extra: initializeRequest({ hasTools: false, appendSystemPrompt: undefined }) })
      const raw = performance.now() - rawAt
      disarmSpawnProbe()
      const byHand = complete(marks, "by hand")
      await p.close()
      if (round === 0) continue
      measured.forEach((m, i) => {
        const out = sides[i] as ReturnType<typeof emptyRounds>
        out.plugin.push(m.total)
        out.raw.push(raw)
        out.beforeSpawn.push(m.beforeSpawn)
        out.afterAnswer.push(m.afterAnswer)
        out.toRequest.push(m.toRequest)
        out.cliInPlugin.push(m.cli)
        out.cliByHand.push(byHand.answeredAt - byHand.spawnAt)
      })
    }
  } finally {
    disarmSpawnProbe()
    for (const host of hosts) await host.close()
    await server.close()
    sandbox.cleanup()
  }
  const [mine, other] = sides as [StartupRounds, StartupRounds | undefined]
  return other === undefined ? mine : { ...mine, against: other }
}

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length === 0 ? Number.NaN : (s[Math.floor(s.length / 2)] as number)
}
const spreadOf = (xs: ReadonlyArray<number>): string => {
  const s = [...xs].sort((a, b) => a - b)
  return `${(s[0] ?? 0).toFixed(1)}-${(s.at(-1) ?? 0).toFixed(1)}`
}

export interface StartupSummary {
  /** Median of per-round differences, plugin total less the CLI by hand (the CLI's own swing is in it). */
  readonly addedMs: number
  /** Median of per-round plugin's own time: before the spawn plus after the answer. */
  readonly ownMs: number
  readonly beforeSpawnMs: number
  readonly afterAnswerMs: number
}

/** Print the rounds; return the headline's figures. */
export const printStartup = (r: StartupRounds): StartupSummary => {
  const own = r.beforeSpawn.map((b, i) => b + (r.afterAnswer[i] ?? 0))
  const added = median(r.plugin.map((p, i) => p - (r.raw[i] ?? p)))
  const line = (label: string, xs: ReadonlyArray<number>) =>
    console.log(`  ${label.padEnd(52)} median ${median(xs).toFixed(1)} ms (${spreadOf(xs)})`)
  console.log(
    `\nstartup (create_session → initialize answer), ${r.plugin.length} interleaved rounds, the real CLI; medians (min-max):`,
  )
  line("plugin, create_session called → returned", r.plugin)
  line("CLI by hand, spawn → answer", r.raw)
  line(
    "difference per round (the CLI's own swing in it)",
    r.plugin.map((p, i) => p - (r.raw[i] ?? p)),
  )
  line("CLI's own start inside the plugin's round", r.cliInPlugin)
  line("CLI's own start by hand (same marks)", r.cliByHand)
  line("plugin's own: call → spawn asked", r.beforeSpawn)
  line("plugin's own: answer on the pipe → call returned", r.afterAnswer)
  line("plugin's own, both (target ≤ 20 ms)", own)
  line("spawn → initialize written (overlaps the CLI's start)", r.toRequest)
  return {
    addedMs: added,
    ownMs: median(own),
    beforeSpawnMs: median(r.beforeSpawn),
    afterAnswerMs: median(r.afterAnswer),
  }
}

/**
 * `npm run bench -- scale-startup [rounds] [--against <plugin folder>]`: the
 * startup series alone (15 rounds by default); `--against` measures another
 * plugin folder (main's tree, say) in the same rounds.
 */
export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const rounds = Number(args.find((a) => /^\d+$/.test(a)) ?? 15)
  const at = args.indexOf("--against")
  const against = at === -1 ? undefined : args[at + 1]
  const result = await measureStartup(rounds, against)
  const s = printStartup(result)
  if (result.against !== undefined) {
    console.log(`\nthe same rounds, the plugin of ${against}:`)
    const o = printStartup(result.against)
    const own = (r: StartupRounds) => r.beforeSpawn.map((b, i) => b + (r.afterAnswer[i] ?? 0))
    const mine = own(result)
    const theirs = own(result.against)
    console.log(
      `\nA/B per round, plugin's own: this ${s.ownMs.toFixed(1)} ms against ${o.ownMs.toFixed(1)} ms, difference median ${median(mine.map((m, i) => m - (theirs[i] ?? m))).toFixed(1)} ms`,
    )
  }
  console.log(
    `scale-startup: plugin's own ${s.ownMs.toFixed(1)} ms (before the spawn ${s.beforeSpawnMs.toFixed(1)}, after the answer ${s.afterAnswerMs.toFixed(1)}), +${s.addedMs.toFixed(0)} ms against the CLI by hand`,
  )
}

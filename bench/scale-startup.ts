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
 * own time directly, from the spawn probe's marks on the same clock: from
 * the call to the spawn request (everything the plugin and the host do
 * before the CLI exists), and from the answer's line complete on the pipe to
 * `createSession` returning. What lies between is the CLI's own start,
 * measured the same way on the by-hand side for comparison.
 *
 * The probe watches this process's own `child_process.spawn` (the host's
 * process broker spawns here; the plugin process asks it over the channel),
 * without changing what it watches: `spawn` is wrapped (and
 * `syncBuiltinESMExports` makes modules that imported it by name see the
 * wrapper); the child's stdin `write` and stdout `push` are wrapped on the
 * instance, so no listener is added and no stream switched to flowing. Only
 * a session's process (`--input-format`) spawned while a probe is armed is
 * watched, and only until its answer.
 */
import childProcess, { type ChildProcess } from "node:child_process"
import { mkdirSync } from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import { basename, join } from "node:path"
import { startHost } from "../host/core/host.ts"
import { initializeRequest } from "../session/launch.ts"
import { cliEnv, initialize, makeSandbox, spawnClaude } from "../testkit/cli.ts"
import { startModelServer } from "../testkit/model-server.ts"
import { median } from "./workers.ts"

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

// ---------------------------------------------------------------------------
// The spawn probe

interface StartMarks {
  /** performance.now() just before the spawn call. */
  spawnAt?: number
  /** The `initialize` request's chunk written to the child's stdin. */
  writtenAt?: number
  /** The chunk that completed the child's `control_response` line to that request. */
  answeredAt?: number
}

const original = childProcess.spawn
let armed: StartMarks | undefined
let installed = false

const watch = (child: ChildProcess, marks: StartMarks): void => {
  let requestId: string | undefined
  const stdin = child.stdin
  if (stdin) {
    const write = stdin.write
    stdin.write = function (this: typeof stdin, chunk: unknown, ...rest: unknown[]) {
      if (requestId === undefined) {
        const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8")
        const at = text.indexOf('"subtype":"initialize"')
        if (at !== -1) {
          const end = text.indexOf("\n", at)
          const line = text.slice(text.lastIndexOf("\n", at) + 1, end === -1 ? undefined : end)
          requestId = /"request_id":"([^"]+)"/.exec(line)?.[1]
          marks.writtenAt = performance.now()
        }
      }
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof stdin.write
  }
  const stdout = child.stdout
  if (stdout) {
    const push = stdout.push
    let seen = ""
    stdout.push = function (this: typeof stdout, chunk: unknown, ...rest: unknown[]) {
      if (marks.answeredAt === undefined && requestId !== undefined && chunk !== null) {
        seen += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8")
        for (let end = seen.indexOf("\n"); end !== -1; end = seen.indexOf("\n")) {
          const line = seen.slice(0, end)
          seen = seen.slice(end + 1)
          if (line.includes('"control_response"') && line.includes(`"request_id":"${requestId}"`)) {
            marks.answeredAt = performance.now()
            seen = ""
            break
          }
        }
      }
      return (push as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof stdout.push
  }
}

/** Install the spawn wrapper once for this process. */
const install = (): void => {
  if (installed) return
  installed = true
  childProcess.spawn = function (this: unknown, ...args: unknown[]) {
    const marks = armed
    const command = typeof args[0] === "string" ? basename(args[0]) : ""
    const argv = Array.isArray(args[1]) ? (args[1] as string[]) : []
    const session =
      marks !== undefined &&
      marks.spawnAt === undefined &&
      command.startsWith("claude") &&
      argv.includes("--input-format")
    const spawnAt = performance.now()
    const child = (original as (...a: unknown[]) => ChildProcess).apply(this, args)
    if (session && marks !== undefined) {
      marks.spawnAt = spawnAt
      watch(child, marks)
    }
    return child
  } as typeof childProcess.spawn
  syncBuiltinESMExports()
}

/** Watch the next session process spawned in this process; its marks fill in as it starts. */
const armSpawnProbe = (): StartMarks => {
  install()
  armed = {}
  return armed
}

/** Stop watching new processes (the wrapper stays, passing every call through). */
const disarmSpawnProbe = (): void => {
  armed = undefined
}

// ---------------------------------------------------------------------------
// The rounds

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

/** `rounds` measured rounds after one warm-up. */
export const measureStartup = async (rounds: number): Promise<StartupRounds> => {
  const sandbox = makeSandbox("cvg-scale-startup-")
  const server = await startModelServer({ main: [] })
  const env = cliEnv(sandbox, server)
  const out = emptyRounds()
  const dataDir = join(sandbox.root, "data")
  mkdirSync(dataDir, { recursive: true })
  const host = await startHost({
    pluginDir: repoRoot,
    home: sandbox.home,
    dataDir,
    env,
    workspaces: [sandbox.ws],
    killGraceMs: 1_000,
  })
  try {
    for (let round = 0; round <= rounds; round++) {
      const measured = await pluginRound(host, sandbox.ws)
      const args = [...measured.args]
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
      out.plugin.push(measured.total)
      out.raw.push(raw)
      out.beforeSpawn.push(measured.beforeSpawn)
      out.afterAnswer.push(measured.afterAnswer)
      out.toRequest.push(measured.toRequest)
      out.cliInPlugin.push(measured.cli)
      out.cliByHand.push(byHand.answeredAt - byHand.spawnAt)
    }
  } finally {
    disarmSpawnProbe()
    await host.close()
    await server.close()
    sandbox.cleanup()
  }
  return out
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

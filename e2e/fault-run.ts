/**
 * One case of the fault matrix, end to end: the plugin inside host/, the
 * real CLI, the scripted model answering the first prompt with the case's
 * fault (an error, a stall or a cut at a chosen stream event), the CLI
 * killed or frozen at a chosen point, then cancel, close or another prompt.
 *
 * Every case is held to the same four checks: the run ended (which outcome,
 * how soon after the fault took hold), the next prompt is answered with the
 * conversation's history (or, where the CLI never stored it, says so), no
 * process of the sandbox is left once the session closes, and no run
 * started or ended twice and no approval was left unresolved.
 */
import type { AgentEvent, RunOutcome } from "../sdk/protocol.ts"
import { type RequestView, type Scenario, type Turn, text } from "../testkit/model-server.ts"
import { eventually, ofType, processesOf, startWorld, type World } from "./harness.ts"

export const FIRST = "FIRST-PROMPT remember the word PELICAN"
export const NEXT = "NEXT-PROMPT are you back?"
export const SUB_MATCH = "SUB-TASK"
/** The CLI's own timeout in every case: the silence bound is 3 s (session/silence.ts). */
export const FAULT_ENV = { API_TIMEOUT_MS: "2000", CLAUDE_CODE_MAX_RETRIES: "1" }

export type Action = "none" | "cancel" | "close" | "steer" | "cancel+prompt" | "steer+cancel"

export interface FaultCase {
  readonly name: string
  /** Runs in `npm test` too (the rest only in `npm run faults`). */
  readonly fast?: boolean
  /** The main conversation's answers to the first prompt's requests, in order (then "FIRST-DONE"). */
  readonly first?: ReadonlyArray<Turn>
  /** The answer to every later request of the first prompt (a fault on every attempt), else "FIRST-DONE". */
  readonly firstRest?: Turn
  /** The subagent's answers, in order (the first prompt's Agent call names SUB-TASK). */
  readonly subagent?: ReadonlyArray<Turn>
  readonly approval?: "full" | "supervised"
  /** Wait for the moment the fault or the action applies. */
  readonly until: (w: World, sessionId: string) => Promise<void>
  readonly signal?: "SIGKILL" | "SIGSTOP"
  /** The signal lands while `createSession` waits for `initialize`. */
  readonly duringInitialize?: boolean
  readonly action: Action
  readonly expect: {
    readonly outcomes: ReadonlyArray<RunOutcome | "launch failed">
    /** From the moment the fault or action applied to the run's end. */
    readonly withinMs: number
    /** The next prompt's request holds the first prompt ("kept"), or the CLI never stored it ("lost"). */
    readonly history: "kept" | "lost" | "either"
  }
}

export interface FaultResult {
  readonly name: string
  readonly outcome: string
  readonly msToEnd: number
  readonly nextOk: boolean
  readonly history: string
  readonly leftovers: number
  readonly problems: ReadonlyArray<string>
}

/** The claude process of the world (the session's). */
/** The session's own CLI (its id on the command line), never a `claude --version` the agent runs meanwhile. */
const claudePid = (w: World, sessionId: string): number | undefined =>
  w.host.processes().find((p) => p.command === "claude" && p.args.includes(sessionId))?.pid

const signalClaude = (w: World, signal: "SIGKILL" | "SIGSTOP", sessionId: string) => {
  const pid = claudePid(w, sessionId)
  if (pid === undefined) throw new Error("no claude process to signal")
  process.kill(pid, signal)
}

interface Seen {
  history?: boolean
  steered?: boolean
}

const scenarioFor = (c: FaultCase, seen: Seen): Scenario => {
  let attempt = 0
  const route: Turn = (req: RequestView) => {
    const all = JSON.stringify(req.messages)
    if (req.lastUserText().includes("NEXT-PROMPT")) {
      seen.history = all.includes("PELICAN")
      return [text("NEXT-OK")]
    }
    if (req.lastUserText().includes("STEER-PROMPT")) {
      seen.steered = true
      return [text("STEER-OK")]
    }
    const turn = c.first?.[attempt++] ?? c.firstRest
    if (turn === undefined) return [text("FIRST-DONE")]
    return typeof turn === "function" ? turn(req) : turn
  }
  return {
    main: Array.from({ length: 60 }, () => route),
    subagents: c.subagent ? [{ match: SUB_MATCH, name: "sub", turns: c.subagent }] : [],
  }
}

const withTimeout = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms),
    ),
  ])

/** Events that break the ledger's promises: a run started or ended twice, an approval (never answered in the matrix) not resolved exactly once. */
export const integrityProblems = (
  events: ReadonlyArray<AgentEvent>,
  inputs: ReadonlyArray<string> = [],
): string[] => {
  const problems: string[] = []
  const count = (ids: string[]) =>
    ids.reduce((m, id) => m.set(id, (m.get(id) ?? 0) + 1), new Map<string, number>())
  const started = count(ofType(events, "RunStarted").map((e) => e.run_id))
  const ended = count(ofType(events, "RunEnded").map((e) => e.run_id))
  for (const [id, n] of started) if (n !== 1) problems.push(`run ${id} started ${n} times`)
  for (const [id, n] of ended) if (n !== 1) problems.push(`run ${id} ended ${n} times`)
  for (const id of started.keys()) if (!ended.has(id)) problems.push(`run ${id} never ended`)
  const resolved = count(ofType(events, "approval_resolved").map((e) => e.approval_id))
  for (const a of ofType(events, "ApprovalRequested"))
    if ((resolved.get(a.approval_id) ?? 0) !== 1)
      problems.push(
        `approval ${a.approval_id} resolved ${resolved.get(a.approval_id) ?? 0} times (never answered here)`,
      )
  // Every input written is reported once (picked up, not picked up, or unknown), wherever it ended up.
  const delivered = count(ofType(events, "input_delivery").map((e) => e.input_uuid))
  for (const uuid of inputs)
    if ((delivered.get(uuid) ?? 0) !== 1)
      problems.push(`input ${uuid} reported ${delivered.get(uuid) ?? 0} times`)
  for (const [uuid, n] of delivered) if (n !== 1) problems.push(`input ${uuid} reported ${n} times`)
  return problems
}

/** Run one case in its own world; the result says what happened, `problems` what broke a promise. */
export const runFaultCase = async (c: FaultCase): Promise<FaultResult> => {
  const seen: Seen = {}
  const w = await startWorld(scenarioFor(c, seen), { env: FAULT_ENV })
  const problems: string[] = []
  const notices: string[] = []
  let outcome = "open"
  let msToEnd = Number.NaN
  let nextOk = false
  let leftovers = -1
  /** Every prompt's input uuid: each must end reported exactly once. */
  const inputs: string[] = []
  // Methods named by string: the matrix's steps are data.
  const call = (method: string, params: Record<string, unknown>) =>
    (w.host.call as (agent: string, method: string, params: unknown) => Promise<never>)(
      w.agentId,
      method,
      params,
    ).then((answer: { input_uuid?: unknown } | undefined) => {
      if (method === "prompt" && typeof answer?.input_uuid === "string") inputs.push(answer.input_uuid)
      return answer as never
    })
  const sessionId = crypto.randomUUID()
  try {
    const options = { approval_mode: c.approval ?? "full" }
    const create = () => call("createSession", { sessionId, cwd: w.sandbox.ws, options })
    let runId: string | undefined
    let at = Date.now()
    if (c.duringInitialize) {
      const creating = create().then(
        () => "opened",
        () => "launch failed",
      )
      await eventually(() => claudePid(w, sessionId) !== undefined, 10_000)
      if (c.signal) signalClaude(w, c.signal, sessionId)
      at = Date.now()
      if (c.action === "close") await call("closeSession", { sessionId })
      outcome = await withTimeout(creating, c.expect.withinMs + 10_000, "createSession to settle")
      msToEnd = Date.now() - at
      await create()
    } else {
      await create()
      const accepted: { run_id: string } = await call("prompt", { sessionId, text: FIRST })
      runId = accepted.run_id
      await c.until(w, sessionId)
      if (c.signal) signalClaude(w, c.signal, sessionId)
      at = Date.now()
      const ended = w.waitFor(sessionId, "RunEnded", (e) => e.run_id === runId, c.expect.withinMs + 20_000)
      ended.catch(() => {})
      if (c.action === "steer" || c.action === "steer+cancel")
        await call("prompt", { sessionId, text: "STEER-PROMPT say STEER-OK" })
      if (c.action === "cancel" || c.action === "cancel+prompt" || c.action === "steer+cancel")
        await call("cancel", { sessionId })
      let nextRun: string | undefined
      if (c.action === "cancel+prompt") {
        const next: { run_id: string } = await call("prompt", { sessionId, text: NEXT })
        nextRun = next.run_id
      }
      if (c.action === "close") await call("closeSession", { sessionId })
      const end = await ended
      outcome = end.outcome
      msToEnd = Date.now() - at
      if (c.action === "close") await call("resumeSession", { sessionId, cwd: w.sandbox.ws, options })
      if (nextRun !== undefined) {
        const next = await w.waitFor(sessionId, "RunEnded", (e) => e.run_id === nextRun, 40_000)
        const said = ofType(w.events(sessionId), "TextDelta")
          .filter((e) => e.run_id === nextRun)
          .map((e) => e.text)
          .join("")
        nextOk = next.outcome === "Completed" && said === "NEXT-OK"
        if (!nextOk)
          problems.push(`the prompt after the cancel ended ${next.outcome} saying ${JSON.stringify(said)}`)
      }
    }
    // A turn the CLI began by itself (a steer after a cancel) ends before the next prompt.
    const allEnded = () => {
      const events = w.events(sessionId)
      const ended = new Set(ofType(events, "RunEnded").map((e) => e.run_id))
      return ofType(events, "RunStarted").every((e) => ended.has(e.run_id))
    }
    // The steer's own answer (in the run it steered, or in a turn of its own) comes first.
    if (c.action === "steer" || c.action === "steer+cancel")
      await eventually(() => seen.steered === true, 15_000)
    await new Promise((r) => setTimeout(r, c.action.startsWith("steer") ? 500 : 0))
    if (!(await eventually(allEnded, 15_000))) problems.push("a run was still open before the next prompt")
    if (c.action !== "cancel+prompt") {
      const next: { run_id: string } = await call("prompt", { sessionId, text: NEXT })
      const end = await w.waitFor(sessionId, "RunEnded", (e) => e.run_id === next.run_id, 40_000)
      const said = ofType(w.events(sessionId), "TextDelta")
        .filter((e) => e.run_id === next.run_id)
        .map((e) => e.text)
        .join("")
      nextOk = end.outcome === "Completed" && said === "NEXT-OK"
      if (!nextOk)
        problems.push(
          `the next prompt ended ${end.outcome} (${end.error ?? ""}) saying ${JSON.stringify(said)}`,
        )
    }
    const reported = () => new Set(ofType(w.events(sessionId), "input_delivery").map((e) => e.input_uuid))
    await eventually(() => inputs.every((uuid) => reported().has(uuid)), 5_000)
    await call("closeSession", { sessionId })
    await eventually(() => processesOf(w).length === 0, 5_000)
    leftovers = processesOf(w).length
    if (leftovers > 0)
      problems.push(
        `${leftovers} processes left: ${processesOf(w)
          .map((p) => p.cmdline)
          .join(" | ")}`,
      )
    problems.push(...integrityProblems(w.events(sessionId), inputs))
  } catch (error) {
    problems.push(String(error))
  } finally {
    notices.push(...ofType(w.events(sessionId), "Notice").map((n) => `${n.level}: ${n.text}`))
    for (const p of processesOf(w))
      try {
        process.kill(p.pid, "SIGKILL")
      } catch {
        // Gone already.
      }
    await w.close()
  }
  const history = seen.history === undefined ? "-" : seen.history ? "kept" : "lost"
  if (!c.expect.outcomes.includes(outcome as RunOutcome))
    problems.push(`ended ${outcome}, expected ${c.expect.outcomes.join("|")}`)
  if (!(msToEnd <= c.expect.withinMs))
    problems.push(`ended after ${msToEnd} ms, expected within ${c.expect.withinMs} ms`)
  // A CLI stopped early may not have flushed its transcript yet: then the history is lost, and said so.
  const announced = notices.some((n) => n.includes("before it stored"))
  if (c.expect.history !== "either" && history !== c.expect.history && !(history === "lost" && announced))
    problems.push(`history ${history}, expected ${c.expect.history}`)
  if (c.expect.history === "kept" && history === "lost" && !announced)
    problems.push("the history was lost without a notice")
  if (problems.length > 0 && notices.length > 0) problems.push(`notices: ${notices.join(" / ")}`)
  return { name: c.name, outcome, msToEnd, nextOk, history, leftovers, problems }
}

/** The matrix's table: one line per case. */
export const faultTable = (results: ReadonlyArray<FaultResult>): string => {
  const rows = results.map((r) => [
    r.name,
    r.outcome,
    Number.isNaN(r.msToEnd) ? "-" : `${r.msToEnd} ms`,
    r.nextOk ? "yes" : "NO",
    r.history,
    String(r.leftovers),
    r.problems.length === 0 ? "ok" : r.problems.join("; "),
  ])
  const head = ["case", "outcome", "time to end", "next prompt ok", "history", "leftovers", "verdict"]
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`
  return [line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n")
}

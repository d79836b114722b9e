/**
 * The scaling benchmark's session series (bench/scale.ts, bench/scale-live.ts),
 * in a process of its own run with `--expose-gc`: the plugin's session
 * (session.ts with the real mapper and decoder) over the memory broker, its
 * `claude` a FakePeer that plays recorded frames.
 *
 *   node --expose-gc scale-session.mjs live <turns>
 *     One session, `turns` prompts. Each turn is one recorded turn of
 *     `testdata/<scenario>/stdout.jsonl` (the frames up to and including a
 *     `result`, control frames left out: nobody answers them here), its
 *     message, tool and agent ids made new each repetition and its result
 *     naming the prompt's uuid. Per repetition of the recorded turns: CPU
 *     time of the whole round trip (prompt, frames written, read, decoded,
 *     mapped, events emitted, run ended) and JSON.parse of the same lines
 *     (the floor); the heap after a full GC at ten points. The FakePeer's own
 *     record of stdin is emptied every turn, so the heap is the plugin's.
 *
 *   node --expose-gc scale-session.mjs idle <n>
 *     `n` sessions started (initialize answered) and left idle: the heap
 *     after GC with them against none, per session; and the plugin's own
 *     share of each start (wall time from `makeSession` to its `initialize`
 *     written, plus from the answer to the session ready; the CLI's time is
 *     the FakePeer's, none), median.
 *
 * Prints one JSON line.
 */
import { Effect, Fiber, type Scope } from "effect"
import { launchArgs } from "../session/launch.ts"
import { makeMapper } from "../map.ts"
import { brokerContext } from "../sdk/context.ts"
import { type FakeProcess, makeFakePeer } from "../sdk/testing/fake-peer.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { makeSession, type SessionSetup } from "../session.ts"
import { repetition, scenarioLines } from "../testkit/recordings.ts"
import { decodeLine } from "../wire.ts"

const [mode = "live", countArg] = process.argv.slice(2)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with --expose-gc")
const heapNow = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}
const cpuNow = (): number => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

const CONTROL = new Set(["control_request", "control_response", "control_cancel_request"])

/** Every recorded turn: its lines (control frames left out: nobody answers them here), the result last. */
const recordedTurns = (): string[][] =>
  scenarioLines().flatMap((lines) => {
    const turns: string[][] = []
    let turn: string[] = []
    for (const line of lines) {
      const type = (JSON.parse(line) as { type?: string }).type ?? ""
      if (CONTROL.has(type)) continue
      turn.push(line)
      if (type === "result") {
        turns.push(turn)
        turn = []
      }
    }
    return turns
  })

/** A session over a FakePeer, its first process initialized. */
const startSession = (sink: { events: number }, hostId: string) =>
  Effect.gen(function* () {
    const peer = yield* makeFakePeer
    const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
    const setup: SessionSetup = {
      hostId,
      cwd: "/work/ws",
      tools: [],
      instructions: undefined,
      start: { kind: "new", cliId: crypto.randomUUID() },
      prepareLaunch: (start) =>
        Effect.succeed({
          args: launchArgs({ start, workspace: "/work/ws", optionFlags: ["--permission-mode", "default"] }),
          env: { CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" },
        }),
      makeMapper: () => makeMapper({ sessionId: hostId }),
      decodeLine,
      // Counted, not kept: the host's copy is not the plugin's state.
      emit: () =>
        Effect.sync(() => {
          sink.events++
        }),
      workflowRecord: { attempts: 1, delayMs: 0 },
    }
    const context = brokerContext(broker.api)
    const started = performance.now()
    const session = yield* makeSession(setup).pipe(Effect.provideContext(context))
    const boot = yield* session.ensureProcess.pipe(Effect.provideContext(context), Effect.forkChild)
    const proc: FakeProcess = yield* peer.nextProcess
    const init = yield* proc.expectControl("initialize")
    // The plugin's own share of startup: up to its initialize written, and from the answer to ready.
    const asked = performance.now()
    yield* proc.respond(init.request_id, { models: [], commands: [] })
    const answered = performance.now()
    yield* Fiber.join(boot).pipe(Effect.orDie)
    const ownMs = asked - started + (performance.now() - answered)
    return { session, proc, context, ownMs }
  })

const live = (turns: number) =>
  Effect.gen(function* () {
    const recorded = recordedTurns()
    const framesPerRep = recorded.reduce((n, t) => n + t.length, 0)
    const reps = Math.ceil(turns / recorded.length)
    const sink = { events: 0 }
    const { session, proc, context } = yield* startSession(sink, "scale-session")
    const parseMs: number[] = []
    const turnMs: number[] = []
    const heap: Array<{ turn: number; bytes: number }> = [{ turn: 0, bytes: heapNow() }]
    const every = Math.max(1, Math.floor(reps / 10))
    let turn = 0
    let sinkParse = 0
    for (let rep = 0; rep < reps; rep++) {
      const lines = recorded.map((t) => repetition(t, rep))
      let start = cpuNow()
      for (const t of lines)
        for (const l of t) if ((JSON.parse(l) as { type?: unknown }).type === "x") sinkParse++
      parseMs.push(cpuNow() - start)
      start = cpuNow()
      for (const t of lines) {
        yield* session
          .prompt({ sessionId: "scale-session", text: `turn ${turn}` })
          .pipe(Effect.provideContext(context))
        const user = yield* proc.expect((f) => f.type === "user")
        proc.received.length = 0
        for (const line of t.slice(0, -1)) yield* proc.sendRaw(line)
        const result = JSON.parse(t.at(-1) as string) as Record<string, unknown>
        yield* proc.send({ ...result, user_message_uuids: [user.uuid] })
        yield* proc.drained
        turn++
      }
      turnMs.push(cpuNow() - start)
      if ((rep + 1) % every === 0 || rep === reps - 1) heap.push({ turn, bytes: heapNow() })
    }
    return {
      framesPerRep,
      turnsPerRep: recorded.length,
      reps,
      turns: turn,
      parseMs,
      turnMs,
      heap,
      events: sink.events,
      sink: sinkParse >= 0,
    }
  })

const idle = (n: number) =>
  Effect.gen(function* () {
    const sink = { events: 0 }
    // One first, so what every session shares (modules, compiled code) is in the baseline.
    yield* startSession(sink, "warm")
    const before = heapNow()
    const held: Array<{ ownMs: number }> = []
    for (let i = 0; i < n; i++) held.push(yield* startSession(sink, `idle-${i}`))
    const after = heapNow()
    const own = held.map((h) => h.ownMs).sort((a, b) => a - b)
    return {
      sessions: n,
      before,
      after,
      perSession: (after - before) / n,
      ownStartMs: own[Math.floor(own.length / 2)] ?? 0,
    }
  })

const count = Number(countArg ?? (mode === "idle" ? 100 : 10_000))
const program: Effect.Effect<unknown, unknown, Scope.Scope> = mode === "idle" ? idle(count) : live(count)
const out = await Effect.runPromise(Effect.scoped(program))
process.stdout.write(`${JSON.stringify(out)}\n`)
process.exit(0)

/**
 * The long fuzz run of the mapper and the session (issue 13):
 *
 *   npm run fuzz -- --frames 1000000 [--session-frames N] [--seed S]
 *
 * 1. `--frames` mutated frames (default 200,000) through the session's own
 *    line pipeline (testkit/fuzz-kit.ts `feedLine`: LineSplitter, readLine,
 *    decodeLine, the mapper): every recording of testdata/ played over and
 *    over, each line mutated with probability 1/2, one mapper per pass, so a
 *    frame that poisons the state shows in the frames after it.
 * 2. `--session-frames` mutated frames (default a twentieth of `--frames`)
 *    through a whole session (`makeOwnedSession` against FakePeer, the
 *    transport and wire.ts as in production): each recording written to its
 *    stdout, then the process exits. Every run that opened must have ended;
 *    diagnostics are the session's own "unreadable line" warnings, compared
 *    with the lines readLine calls bad; an exception out of a frame's
 *    handler is a "handling a frame failed" warning.
 *
 * Mutations are fast-check arbitraries (testkit/fuzz-kit.ts), drawn in batches from
 * one seed. The figures printed, with their targets: escaped exceptions 0,
 * malformed events 0, runs left open 0, lines that had to be bad but were
 * silent 0, recorded lines flagged 0, and at most one diagnostic per line.
 * Last line: `fuzz: <frames> frames, <escaped> escaped, <malformed> malformed, <open> open`.
 */
import { Effect, Fiber } from "effect"
import fc from "fast-check"
import { launchArgs } from "../session/launch.ts"
import { makeMapper } from "../map.ts"
import { brokerContext } from "../sdk/context.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { makeFakePeer } from "../sdk/testing/fake-peer.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { makeOwnedSession } from "../session.ts"
import { readLine } from "../transport.ts"
import { LineSplitter } from "../sdk/lines.ts"
import { MAX_LINE_BYTES } from "../bounds.ts"
import { decodeLine } from "../wire.ts"
import { malformed } from "../testkit/event-shapes.ts"
import {
  applyMutations,
  asText,
  feedLine,
  type Mutation,
  mutationArb,
  newTally,
  type Tally,
} from "../testkit/fuzz-kit.ts"
import { type Recording, recordings } from "../testkit/recordings.ts"

const encoder = new TextEncoder()

const argOf = (args: ReadonlyArray<string>, name: string): number | undefined => {
  const at = args.indexOf(`--${name}`)
  const value = at === -1 ? undefined : Number(args[at + 1])
  return value !== undefined && Number.isFinite(value) ? value : undefined
}

/** Mutation lists drawn from one seed, a batch at a time (fc.sample makes arrays). */
const mutationSource = (seed: number, sizes: { maxDepth: number; maxString: number }) => {
  const arb = fc.record({
    mutate: fc.boolean(),
    mutations: fc.array(mutationArb(sizes), { minLength: 1, maxLength: 3 }),
  })
  let batch: Array<{ mutate: boolean; mutations: Mutation[] }> = []
  let round = 0
  return (): { mutate: boolean; mutations: Mutation[] } => {
    if (batch.length === 0) batch = fc.sample(arb, { numRuns: 10_000, seed: seed + round++ })
    return batch.pop() as { mutate: boolean; mutations: Mutation[] }
  }
}

const allLinesOf = (recs: ReadonlyArray<Recording>) => recs.flatMap((r) => r.lines)

const pureRun = (recs: ReadonlyArray<Recording>, target: number, seed: number): Tally => {
  const next = mutationSource(seed, { maxDepth: 20_000, maxString: 200_000 })
  const others = allLinesOf(recs)
  const tally = newTally()
  let reported = 0
  while (tally.mutated < target) {
    for (const rec of recs) {
      const mapper = makeMapper({ sessionId: "fuzz" })
      for (const line of rec.lines) {
        const draw = next()
        if (!draw.mutate) feedLine(tally, mapper, encoder.encode(line), undefined)
        else {
          const mutated = applyMutations(line, draw.mutations, others)
          feedLine(tally, mapper, mutated.bytes, mutated)
        }
      }
      if (tally.mutated >= target) break
    }
    if (tally.mutated - reported >= 100_000) {
      reported = tally.mutated
      process.stderr.write(`  … ${tally.mutated} mutated frames\n`)
    }
  }
  return tally
}

interface SessionTally {
  mutated: number
  lines: number
  sessions: number
  runsStarted: number
  runsEnded: number
  runsOpen: number
  endedByExit: number
  escaped: number
  malformed: number
  diagnostics: number
  expectedDiagnostics: number
  readonly examples: string[]
}

/** How many diagnostics readLine gives a text line (what the session must log for it). */
const diagnosticsOf = (text: string): number => {
  const splitter = new LineSplitter(MAX_LINE_BYTES)
  const lines = [...splitter.push(encoder.encode(`${text}\n`)), ...splitter.end()]
  return lines.filter((line) => readLine(line, decodeLine).diagnostic !== undefined).length
}

/** One recording, mutated, through a whole session on FakePeer; the process exits at the end. */
const sessionPass = (
  rec: Recording,
  next: ReturnType<typeof mutationSource>,
  others: string[],
  t: SessionTally,
) =>
  Effect.gen(function* () {
    const peer = yield* makeFakePeer
    const broker = makeMemoryBroker({ spawn: { claude: peer.spawn } })
    const context = brokerContext(broker.api)
    const owned = yield* makeOwnedSession(
      {
        hostId: "fuzz-host",
        cwd: "/work/ws",
        tools: [],
        start: { kind: "new", cliId: "33333333-3333-4333-8333-333333333333" },
        prepareLaunch: (start) =>
          Effect.succeed({ args: launchArgs({ start, workspace: "/work/ws", optionFlags: [] }), env: {} }),
        makeMapper: () => makeMapper({ sessionId: "fuzz-host" }),
        emit: (event) => Effect.sync(() => void broker.events.push(event)),
        timeouts: { cancelMs: 200, controlMs: 500, initializeMs: 2_000 },
      },
      (live) => live,
    ).pipe(Effect.provideContext(context))
    const boot = yield* owned.ensureProcess.pipe(Effect.provideContext(context), Effect.forkChild)
    const proc = yield* peer.nextProcess
    const init = yield* proc.expectControl("initialize")
    yield* proc.respond(init.request_id, { models: [], commands: [] })
    yield* Fiber.join(boot).pipe(Effect.orDie)
    for (const line of rec.lines) {
      const draw = next()
      // The FakePeer writes text: byte mutations arrive as their UTF-8 reading.
      const text = draw.mutate ? asText(applyMutations(line, draw.mutations, others).bytes) : line
      if (draw.mutate) t.mutated++
      t.lines++
      t.expectedDiagnostics += diagnosticsOf(text)
      yield* proc.sendRaw(text)
    }
    yield* proc.drained.pipe(Effect.ignore)
    yield* proc.exit(0)
    // The exit is handled on its own fiber: let it end the open run.
    const count = (type: string) => broker.events.filter((e: AgentEvent) => e.type === type).length
    for (let i = 0; i < 200 && count("RunStarted") > count("RunEnded"); i++) yield* Effect.sleep(5)
    const started = count("RunStarted")
    const ended = count("RunEnded")
    t.sessions++
    t.runsStarted += started
    t.runsEnded += ended
    t.runsOpen += Math.max(0, started - ended)
    t.endedByExit += broker.events.filter(
      (e) => e.type === "RunEnded" && e.outcome === "Failed" && (e.error ?? "").includes("exited"),
    ).length
    for (const e of broker.events) {
      const why = malformed(e)
      if (why !== undefined) {
        t.malformed++
        if (t.examples.length < 10) t.examples.push(`${e.type}: ${why}`)
      }
    }
    for (const l of broker.logs) {
      if (l.message.includes("unreadable line")) {
        t.diagnostics++
        if (l.message.includes("handling a frame failed")) {
          t.escaped++
          if (t.examples.length < 10) t.examples.push(l.message.slice(0, 300))
        }
      }
    }
    yield* owned.close
  }).pipe(Effect.scoped)

const sessionRun = async (
  recs: ReadonlyArray<Recording>,
  target: number,
  seed: number,
): Promise<SessionTally> => {
  const next = mutationSource(seed + 1_000_003, { maxDepth: 5_000, maxString: 100_000 })
  const others = allLinesOf(recs)
  const t: SessionTally = {
    mutated: 0,
    lines: 0,
    sessions: 0,
    runsStarted: 0,
    runsEnded: 0,
    runsOpen: 0,
    endedByExit: 0,
    escaped: 0,
    malformed: 0,
    diagnostics: 0,
    expectedDiagnostics: 0,
    examples: [],
  }
  let reported = 0
  while (t.mutated < target) {
    for (const rec of recs) {
      await Effect.runPromise(sessionPass(rec, next, others, t))
      if (t.mutated >= target) break
    }
    if (t.mutated - reported >= 10_000) {
      reported = t.mutated
      process.stderr.write(`  … ${t.mutated} mutated frames through sessions\n`)
    }
  }
  return t
}

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const frames = argOf(args, "frames") ?? 200_000
  const sessionFrames = argOf(args, "session-frames") ?? Math.round(frames / 20)
  const seed = argOf(args, "seed") ?? 1
  const recs = recordings()
  console.log(
    `recordings: ${recs.length} (${allLinesOf(recs).length} lines); seed ${seed}; each line mutated with probability 1/2`,
  )
  const started = performance.now()
  const pure = pureRun(recs, frames, seed)
  const pureMs = performance.now() - started
  console.log(`decodeLine + mapper (${(pureMs / 1000).toFixed(1)} s):`)
  console.log(
    `  lines ${pure.lines}, mutated ${pure.mutated}, frames mapped ${pure.frames}, events ${pure.events}`,
  )
  console.log(`  escaped exceptions ${pure.escaped} (target 0)`)
  console.log(`  malformed events ${pure.malformed} (target 0)`)
  console.log(
    `  bad lines ${pure.badLines}, one diagnostic each; bad lines left silent ${pure.silentBadLines} (target 0); recorded lines flagged ${pure.cleanLinesFlagged} (target 0)`,
  )
  const sessionStarted = performance.now()
  const session = await sessionRun(recs, sessionFrames, seed)
  const sessionMs = performance.now() - sessionStarted
  console.log(`whole sessions on FakePeer (${(sessionMs / 1000).toFixed(1)} s):`)
  console.log(`  sessions ${session.sessions}, lines ${session.lines}, mutated ${session.mutated}`)
  console.log(
    `  runs started ${session.runsStarted}, ended ${session.runsEnded} (${session.endedByExit} by the process exit), left open ${session.runsOpen} (target 0)`,
  )
  console.log(
    `  escaped exceptions ${session.escaped} (target 0), malformed events ${session.malformed} (target 0)`,
  )
  console.log(
    `  diagnostics ${session.diagnostics} for ${session.expectedDiagnostics} bad lines (target: equal, one per line)`,
  )
  const examples = [...pure.examples, ...session.examples]
  if (examples.length > 0) console.log(`examples:\n  ${examples.join("\n  ")}`)
  const escaped = pure.escaped + session.escaped
  const bad = pure.malformed + session.malformed
  console.log(
    `fuzz: ${pure.mutated + session.mutated} mutated frames, ${escaped} escaped, ${bad} malformed, ${session.runsOpen} open, ${session.diagnostics === session.expectedDiagnostics && pure.silentBadLines === 0 ? "one diagnostic per bad line" : "diagnostics off"}`,
  )
  if (escaped + bad + session.runsOpen + pure.silentBadLines + pure.cleanLinesFlagged > 0)
    process.exitCode = 1
}

if (import.meta.url === `file://${process.argv[1]}`) await main(process.argv.slice(2))

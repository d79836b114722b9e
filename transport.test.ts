/** The line transport over a hand-made process handle: lines, bad lines, serialized writes, stderr, closing. */
import { Deferred, Effect, Exit, Queue, Scope, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { brokerContext } from "./sdk/context.ts"
import type { ProcessExit, ProcessHandle } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import { type DecodedLine, openTransport } from "./transport.ts"

const encoder = new TextEncoder()

const decode = (line: string): DecodedLine<{ type: string }> => {
  if (line.trim() === "") return { kind: "blank" }
  try {
    return { kind: "frame", frame: JSON.parse(line) }
  } catch {
    return { kind: "error", message: "not JSON" }
  }
}

/** A process whose stdout/stderr the test writes in chunks, and whose stdin writes land in two halves. */
const makeProcess = Effect.gen(function* () {
  const stdout = yield* Queue.unbounded<Uint8Array, import("effect").Cause.Done>()
  const stderr = yield* Queue.unbounded<Uint8Array, import("effect").Cause.Done>()
  const exit = yield* Deferred.make<ProcessExit>()
  const written: string[] = []
  let killed = 0
  const end = (code: number | null) =>
    Effect.gen(function* () {
      yield* Queue.end(stdout)
      yield* Queue.end(stderr)
      yield* Deferred.succeed(exit, { code, signal: null })
    })
  const handle: ProcessHandle = {
    pid: 1,
    stdout: Stream.fromQueue(stdout),
    stderr: Stream.fromQueue(stderr),
    write: (text) =>
      Effect.gen(function* () {
        // Half now, half later: unserialized writers would interleave.
        const half = Math.floor(text.length / 2)
        written.push(text.slice(0, half))
        yield* Effect.sleep(5)
        written.push(text.slice(half))
      }),
    closeStdin: Effect.void,
    exit: Deferred.await(exit),
    kill: () =>
      Effect.gen(function* () {
        killed++
        yield* end(null)
      }),
  }
  return {
    handle,
    out: (text: string) => Queue.offer(stdout, encoder.encode(text)),
    err: (text: string) => Queue.offer(stderr, encoder.encode(text)),
    end,
    written,
    killed: () => killed,
  }
})

const setup = Effect.gen(function* () {
  const proc = yield* makeProcess
  const broker = makeMemoryBroker({ spawn: { claude: () => Effect.succeed(proc.handle) } })
  const frames: Array<{ type: string }> = []
  const bad: string[] = []
  const scope = yield* Scope.make()
  const transport = yield* openTransport({
    command: "claude",
    args: ["-x"],
    decode,
    onFrame: (frame) =>
      frame.type === "boom"
        ? Effect.die(new Error("handler broke"))
        : Effect.sync(() => void frames.push(frame)),
    onBadLine: (message) => Effect.sync(() => void bad.push(message)),
    stderrLines: 2,
  }).pipe(Scope.provide(scope), Effect.provideContext(brokerContext(broker.api)))
  return { proc, transport, frames, bad, scope }
})

describe("transport", () => {
  it("splits chunks into lines; a bad line or a failing handler is one diagnostic each", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport, frames, bad } = yield* setup
        yield* proc.out('{"type":"a"}\n{"ty')
        yield* proc.out('pe":"b"}\n\nnot json\n{"type":"boom"}\n{"type":"c"}')
        yield* proc.end(0)
        const exit = yield* transport.closed
        expect(exit.code).toBe(0)
        expect(frames.map((f) => f.type)).toEqual(["a", "b", "c"])
        expect(bad).toHaveLength(2)
        expect(bad[1]).toContain("handler broke")
      }),
    ))

  it("serializes writes: each frame is one whole line", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport } = yield* setup
        yield* Effect.all(
          [1, 2, 3].map((n) => transport.send({ n, pad: "x".repeat(n * 10) })),
          { concurrency: "unbounded" },
        )
        const lines = proc.written.join("").split("\n").filter(Boolean)
        expect(lines.map((line) => JSON.parse(line).n).sort()).toEqual([1, 2, 3])
      }),
    ))

  it("keeps the last stderr lines for the exit notice", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport } = yield* setup
        yield* proc.err("one\ntwo\n")
        yield* proc.err("three\n")
        yield* proc.end(1)
        yield* transport.closed
        expect(transport.stderrTail()).toBe("two\nthree")
      }),
    ))

  it("closing the scope kills the process and lets the reader finish what was written", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, frames, scope } = yield* setup
        yield* proc.out('{"type":"last"}\n')
        yield* Scope.close(scope, Exit.void)
        expect(proc.killed()).toBe(1)
        expect(frames.map((f) => f.type)).toEqual(["last"])
      }),
    ))
})

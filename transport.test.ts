/** The line transport over a hand-made process handle: lines, bad lines, serialized writes, stderr, closing. */
import { Deferred, Effect, Exit, Queue, Scope, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { brokerContext } from "./sdk/context.ts"
import type { ProcessExit, ProcessHandle } from "./sdk/plugin-api.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"
import { ProcessExited } from "./errors.ts"
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
    raw: stdout,
    out: (text: string) => Queue.offer(stdout, encoder.encode(text)),
    err: (text: string) => Queue.offer(stderr, encoder.encode(text)),
    end,
    written,
    killed: () => killed,
  }
})

const setupWith = (extra: { maxLineBytes?: number; stderrLines?: number } = {}) =>
  Effect.gen(function* () {
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
      ...extra,
    }).pipe(Scope.provide(scope), Effect.provideContext(brokerContext(broker.api)))
    return { proc, transport, frames, bad, scope }
  })
const setup = setupWith()

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

  it("a raw CR inside a line is one bad line, not two; a CRLF ending is a line end", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport, frames, bad } = yield* setup
        yield* proc.out('{"type":"a"}\r\n{"type":"b\rc"}\n{"type":\r"d"}\n')
        yield* proc.end(0)
        yield* transport.closed
        // A CR between tokens is JSON whitespace; inside a string it is the one error of its line.
        expect(frames.map((f) => f.type)).toEqual(["a", "d"])
        expect(bad).toHaveLength(1)
      }),
    ))

  it("invalid UTF-8 is one diagnostic, and the frame still arrives", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport, frames, bad } = yield* setup
        const head = encoder.encode('{"type":"t","text":"a')
        const tail = encoder.encode('b"}\n{"type":"next"}\n')
        const line = new Uint8Array([...head, 0xff, 0xfe, ...tail])
        yield* Queue.offer(proc.raw, line)
        yield* proc.end(0)
        yield* transport.closed
        expect(frames.map((f) => f.type)).toEqual(["t", "next"])
        expect(bad).toHaveLength(1)
        expect(bad[0]).toContain("UTF-8")
      }),
    ))

  it("a line over the cap is skipped to its newline with one diagnostic; the next line reads", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport, frames, bad } = yield* setupWith({ maxLineBytes: 1024 })
        yield* proc.out('{"type":"big","pad":"')
        for (let i = 0; i < 64; i++) yield* proc.out("x".repeat(1000))
        yield* proc.out('"}\n{"type":"after"}\n')
        yield* proc.end(0)
        yield* transport.closed
        expect(frames.map((f) => f.type)).toEqual(["after"])
        expect(bad).toHaveLength(1)
        expect(bad[0]).toMatch(/64023 bytes is over the 1024-byte cap/)
      }),
    ))

  it("a 100 MB line arriving live is cut as it streams and delivered, without multiplying the process's memory", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport, frames, bad } = yield* setup
        const chunk = new Uint8Array(64 * 1024).fill(0x78) // one buffer, given again and again: the test holds nothing
        const rss = () => process.memoryUsage().rss
        const before = rss()
        let most = before
        yield* proc.out('{"type":"user","tool_use_result":{"stdout":"')
        for (let sent = 0; sent < 100 * 1024 * 1024; sent += chunk.length) {
          yield* Queue.offer(proc.raw, chunk)
          // Let the reader take each chunk as it comes, as a pipe would.
          yield* Effect.yieldNow
          if (sent % (4 * 1024 * 1024) === 0) most = Math.max(most, rss())
        }
        yield* proc.out('"}}\n{"type":"after"}\n')
        yield* proc.end(0)
        yield* transport.closed
        most = Math.max(most, rss())
        expect(bad).toEqual([])
        expect(frames.map((f) => f.type)).toEqual(["user", "after"])
        const stdout = (frames[0] as unknown as { tool_use_result: { stdout: string } }).tool_use_result
          .stdout
        expect(stdout.endsWith(" [… truncated: 262,144 of 104,857,600 bytes shown]")).toBe(true)
        // Held whole, the line alone would take 100 MB of copies, 100 MB joined and its text: 300 MB or more.
        expect(most - before).toBeLessThan(64 * 1024 * 1024)
      }),
    ))

  it("stderr is kept as a bounded tail, and the exit error carries a bounded excerpt", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const { proc, transport } = yield* setup
        for (let i = 0; i < 100; i++) yield* proc.err("e".repeat(10_000))
        yield* proc.err("\nthe last words\n")
        yield* proc.end(1)
        yield* transport.closed
        const tail = transport.stderrTail()
        expect(tail.length).toBeLessThan(3_000)
        expect(tail.endsWith("the last words")).toBe(true)
        const error = new ProcessExited({ code: 1, signal: null, stderr: "x".repeat(50_000_000) })
        expect(error.message.length).toBeLessThan(3_000)
      }),
    ))
})

/**
 * FakePeer plays the CLI's side of stream-json and the control protocol, one
 * round trip at a time, so agent tests can script a `claude` process without
 * running one. Plug `peer.spawn` into the memory broker as the `claude`
 * command; each spawn becomes a FakeProcess the test drives:
 *
 *   const proc = yield* peer.nextProcess
 *   const init = yield* proc.expectControl("initialize")
 *   yield* proc.respond(init.request_id, { models: [] })
 *   const user = yield* proc.expect((f) => f.type === "user")
 *   yield* proc.send({ type: "result", subtype: "success", ... })
 *   yield* proc.drained // the plugin has handled every line written so far
 *
 * `drained` replaces sleeps and sentinel frames: stdout is a pull stream, and
 * the plugin's reader asks for the next line only once it has handled the one
 * before (including every event its handler emitted), so when it has asked
 * past the last line written, everything written is consumed. Work the
 * handler forked (a plugin tool call, a workflow record read) may still run.
 */
import { type Cause, Deferred, Effect, Queue, Ref, Stream } from "effect"
import { BrokerFailure, type ProcessExit, type ProcessHandle, type SpawnOptions } from "../plugin-api.ts"
import type { FakeSpawn } from "./memory-broker.ts"

// biome-ignore lint/suspicious/noExplicitAny: frames are free-form JSON in tests
export type Frame = Record<string, any>

export interface FakeProcess {
  readonly args: ReadonlyArray<string>
  readonly options: SpawnOptions
  /** Every stdin frame received so far, in order. */
  readonly received: Frame[]
  /** The next stdin frame matching `match` (frames before it are kept in `received`). */
  readonly expect: (match: (frame: Frame) => boolean, timeoutMs?: number) => Effect.Effect<Frame, Error>
  /** The next `control_request` of this subtype from the plugin. */
  readonly expectControl: (subtype: string, timeoutMs?: number) => Effect.Effect<Frame, Error>
  /** Write one stdout frame. */
  readonly send: (frame: Frame) => Effect.Effect<void>
  /** Write a raw stdout line (for malformed-input tests). */
  readonly sendRaw: (line: string) => Effect.Effect<void>
  /**
   * Completes once the plugin's reader has handled every stdout line written so
   * far (fails after 5 s, e.g. when nothing reads this process any more).
   */
  readonly drained: Effect.Effect<void, Error>
  readonly stderr: (text: string) => Effect.Effect<void>
  /** Answer a control request from the plugin with success. */
  readonly respond: (requestId: string, response?: Frame) => Effect.Effect<void>
  /** Answer a control request from the plugin with an error. */
  readonly refuse: (requestId: string, error: string) => Effect.Effect<void>
  /** Send a control request to the plugin and wait for its control_response. */
  readonly request: (request: Frame, timeoutMs?: number) => Effect.Effect<Frame, Error>
  /** Withdraw a control request this side sent. */
  readonly cancelRequest: (requestId: string) => Effect.Effect<void>
  /** End the process with an exit code. */
  readonly exit: (code?: number | null, signal?: string | null) => Effect.Effect<void>
  readonly exited: Effect.Effect<boolean>
  /** The flag's value (`--model x` → "x"), or undefined. */
  readonly flag: (name: string) => string | undefined
  /** Every value of a repeated flag. */
  readonly flags: (name: string) => ReadonlyArray<string>
}

export interface FakePeer {
  readonly spawn: FakeSpawn
  /** The next process the plugin spawns. */
  readonly nextProcess: Effect.Effect<FakeProcess, Error>
  readonly processes: FakeProcess[]
}

const encoder = new TextEncoder()

const within = <A>(
  effect: Effect.Effect<A, Error>,
  timeoutMs: number,
  what: string,
): Effect.Effect<A, Error> =>
  effect.pipe(
    Effect.timeoutOrElse({
      duration: timeoutMs,
      orElse: () => Effect.fail(new Error(`FakePeer: timed out after ${timeoutMs} ms waiting for ${what}`)),
    }),
  )

/**
 * A process's stdout as a pull stream that knows how far its reader got: the
 * reader asks for the next chunk only once it has handled the one before, so
 * at each pull every chunk taken so far is handled.
 */
const makeStdout = (queue: Queue.Queue<Uint8Array, Cause.Done>) => {
  let written = 0
  let taken = 0
  let handled = 0
  /** Waiters of `drained`, each with the count of handled lines it needs. */
  const waiters: Array<{ readonly until: number; readonly done: Deferred.Deferred<void> }> = []
  const settle = Effect.suspend(() => {
    const ready = waiters.filter((waiter) => waiter.until <= handled)
    for (const waiter of ready) waiters.splice(waiters.indexOf(waiter), 1)
    return Effect.forEach(ready, (waiter) => Deferred.succeed(waiter.done, undefined), { discard: true })
  })
  const pull = Effect.gen(function* () {
    handled = taken
    yield* settle
    const chunk = yield* Queue.take(queue)
    taken++
    return chunk
  })
  return {
    stream: Stream.fromEffectRepeat(pull),
    write: (line: string) =>
      Effect.suspend(() => {
        written++
        return Queue.offer(queue, encoder.encode(line))
      }).pipe(Effect.asVoid),
    drained: Effect.suspend(() => {
      if (handled >= written) return Effect.void
      const done = Deferred.makeUnsafe<void>()
      waiters.push({ until: written, done })
      return Deferred.await(done)
    }),
  }
}

export const makeFakePeer: Effect.Effect<FakePeer> = Effect.gen(function* () {
  const spawnedQueue = yield* Queue.unbounded<FakeProcess>()
  const processes: FakeProcess[] = []
  let requestCounter = 0

  const spawn: FakeSpawn = (args, options) =>
    Effect.gen(function* () {
      const stdout = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      const stderr = yield* Queue.unbounded<Uint8Array, Cause.Done>()
      const stdin = yield* Queue.unbounded<Frame>()
      const exitDeferred = yield* Deferred.make<ProcessExit>()
      const pendingToPlugin = yield* Ref.make(new Map<string, Deferred.Deferred<Frame>>())
      const received: Frame[] = []
      const isExited = () => Deferred.isDone(exitDeferred)

      const finish = (code: number | null, signal: string | null) =>
        Effect.gen(function* () {
          if (yield* isExited()) return
          yield* Queue.end(stdout)
          yield* Queue.end(stderr)
          yield* Deferred.succeed(exitDeferred, { code, signal })
        })

      const out = makeStdout(stdout)
      const sendLine = out.write
      const send = (frame: Frame) => sendLine(`${JSON.stringify(frame)}\n`)

      const take = (match: (frame: Frame) => boolean): Effect.Effect<Frame> =>
        Effect.gen(function* () {
          while (true) {
            const frame = yield* Queue.take(stdin)
            if (match(frame)) return frame
          }
        })

      const flagValues = (name: string) => {
        const values: string[] = []
        args.forEach((arg, i) => {
          if (arg === name && i + 1 < args.length) values.push(args[i + 1]!)
        })
        return values
      }

      const proc: FakeProcess = {
        args,
        options,
        received,
        expect: (match, timeoutMs = 5_000) => within(take(match), timeoutMs, "a stdin frame"),
        expectControl: (subtype, timeoutMs = 5_000) =>
          within(
            take((f) => f.type === "control_request" && f.request?.subtype === subtype),
            timeoutMs,
            `control_request ${subtype}`,
          ),
        send,
        sendRaw: (line) => sendLine(line.endsWith("\n") ? line : `${line}\n`),
        drained: within(out.drained, 5_000, "the plugin to read every line written"),
        stderr: (text) => Queue.offer(stderr, encoder.encode(text)).pipe(Effect.asVoid),
        respond: (requestId, response) =>
          send({
            type: "control_response",
            response: { subtype: "success", request_id: requestId, ...(response ? { response } : {}) },
          }),
        refuse: (requestId, error) =>
          send({ type: "control_response", response: { subtype: "error", request_id: requestId, error } }),
        request: (request, timeoutMs = 5_000) =>
          Effect.gen(function* () {
            const requestId = `cli_req_${++requestCounter}`
            const answer = yield* Deferred.make<Frame>()
            yield* Ref.update(pendingToPlugin, (m) => new Map(m).set(requestId, answer))
            yield* send({ type: "control_request", request_id: requestId, request })
            return yield* within(Deferred.await(answer), timeoutMs, `the answer to ${request.subtype}`)
          }),
        cancelRequest: (requestId) => send({ type: "control_cancel_request", request_id: requestId }),
        exit: (code = 0, signal = null) => finish(code, signal),
        exited: isExited(),
        flag: (name) => flagValues(name)[0] ?? (args.includes(name) ? "" : undefined),
        flags: flagValues,
      }

      // Route stdin: answers to our requests complete their Deferred; the rest queue for expect().
      const deliver = (text: string) =>
        Effect.gen(function* () {
          for (const line of text.split("\n")) {
            if (line.trim() === "") continue
            const frame = JSON.parse(line) as Frame
            received.push(frame)
            if (frame.type === "control_response") {
              const id = frame.response?.request_id
              const pending = (yield* Ref.get(pendingToPlugin)).get(id)
              if (pending) {
                yield* Deferred.succeed(pending, frame.response)
                continue
              }
            }
            yield* Queue.offer(stdin, frame)
          }
        })

      let buffered = ""
      const handle: ProcessHandle = {
        pid: 40_000 + processes.length,
        stdout: out.stream,
        stderr: Stream.fromQueue(stderr),
        write: (text) =>
          Effect.gen(function* () {
            if (yield* isExited())
              return yield* Effect.fail(new BrokerFailure({ operation: "write", detail: "process exited" }))
            buffered += text
            const at = buffered.lastIndexOf("\n")
            if (at < 0) return
            const complete = buffered.slice(0, at + 1)
            buffered = buffered.slice(at + 1)
            yield* deliver(complete)
          }),
        closeStdin: Effect.void,
        exit: Deferred.await(exitDeferred),
        kill: (signal = "SIGTERM") => finish(null, signal),
      }
      yield* Effect.addFinalizer(() => finish(null, "SIGTERM"))
      processes.push(proc)
      yield* Queue.offer(spawnedQueue, proc)
      return handle
    })

  return {
    spawn,
    processes,
    nextProcess: within(Queue.take(spawnedQueue), 5_000, "a spawned process"),
  }
})

/**
 * The handle a plugin holds on a child: its output streams (one reader each),
 * stdin writes that fail cleanly once it is closed, its exit, and kill.
 */
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type Cause, Effect, type Queue, Stream } from "effect"
import { BrokerFailure, type ProcessHandle } from "../../sdk/plugin-api.ts"
import type { Child } from "./child.ts"
import { signalGroup } from "./process-groups.ts"

/** `end` ends the child as a whole (child.ts); `stderrQueue` holds what the child wrote to stderr so far. */
export const handleOf = (
  child: Child,
  stderrQueue: Queue.Queue<Uint8Array, Cause.Done>,
  end: (signal: NodeJS.Signals) => Promise<void>,
): ProcessHandle => {
  let stdoutTaken = false
  let stderrTaken = false
  return {
    pid: child.pid,
    // Read lazily (the pipe's back-pressure holds the child); one reader only.
    stdout: Stream.suspend(() => {
      if (stdoutTaken || !child.node.stdout) return Stream.empty
      stdoutTaken = true
      const readable = child.node.stdout
      return NodeStream.fromReadable<Uint8Array, unknown>({
        evaluate: () => readable,
        onError: (e) => e,
      }).pipe(Stream.catchCause(() => Stream.empty))
    }),
    stderr: Stream.suspend(() => {
      if (stderrTaken) return Stream.empty
      stderrTaken = true
      return Stream.fromQueue(stderrQueue)
    }),
    write: (text) =>
      Effect.callback<void, BrokerFailure>((resume) => {
        const stdin = child.node.stdin
        if (!stdin || stdin.destroyed || stdin.writableEnded || child.exit) {
          resume(
            Effect.fail(
              new BrokerFailure({ operation: "write", detail: `${child.command}: stdin is closed` }),
            ),
          )
          return
        }
        stdin.write(text, (error) =>
          resume(
            error
              ? Effect.fail(
                  new BrokerFailure({ operation: "write", detail: `${child.command}: ${error.message}` }),
                )
              : Effect.void,
          ),
        )
      }),
    closeStdin: Effect.sync(() => {
      const stdin = child.node.stdin
      if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.end()
    }),
    exit: Effect.promise(() => child.exited),
    kill: (signal = "SIGTERM") =>
      signal === "SIGINT"
        ? Effect.sync(() => signalGroup(child, "SIGINT"))
        : Effect.promise(() => end(signal)),
  }
}

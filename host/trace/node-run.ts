/**
 * One command run to its end over `child_process`, for Agent Trace's Node
 * side (the report command, the plugin's hooks, tests): the broker's
 * `Process.run` without a broker. A command that cannot start, or runs past
 * its timeout, is a result with code null, never a thrown error.
 */
import { spawn } from "node:child_process"
import { Effect } from "effect"
import type { RunResult } from "../../sdk/plugin-api.ts"

export interface NodeRunOptions {
  readonly env?: NodeJS.ProcessEnv
  readonly cwd?: string
  readonly stdin?: string
  readonly timeoutMs?: number
}

const DEFAULT_TIMEOUT_MS = 15_000

export const nodeRun = (
  command: string,
  args: ReadonlyArray<string>,
  options: NodeRunOptions = {},
): Effect.Effect<RunResult> =>
  Effect.callback<RunResult>((resume) => {
    const child = spawn(command, [...args], {
      env: options.env ?? process.env,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      stdio: ["pipe", "pipe", "pipe"],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    child.stdin.on("error", () => {})
    child.stdin.end(options.stdin ?? "")
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
    child.on("error", (error) => {
      clearTimeout(timer)
      resume(Effect.succeed({ code: null, stdout: "", stderr: error.message }))
    })
    child.on("close", (code) => {
      clearTimeout(timer)
      resume(
        Effect.succeed({
          code,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
        }),
      )
    })
    return Effect.sync(() => {
      clearTimeout(timer)
      child.kill("SIGKILL")
    })
  })

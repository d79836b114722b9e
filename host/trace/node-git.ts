/**
 * The Agent Trace git runner for Node (the report command, tests): the same
 * `Git` the plugin gets from the broker, over `child_process`. A command that
 * cannot start, or runs past its timeout, is a result with code null.
 */
import { spawn } from "node:child_process"
import { Effect } from "effect"
import type { Git, GitResult } from "../../trace/git.ts"

export const nodeGit =
  (env: NodeJS.ProcessEnv = process.env): Git =>
  (repo, args, options = {}) =>
    Effect.callback<GitResult>((resume) => {
      const child = spawn("git", ["-C", repo, ...args], {
        env,
        stdio: ["pipe", "pipe", "pipe"],
      })
      const out: Buffer[] = []
      const err: Buffer[] = []
      child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
      child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
      child.stdin.on("error", () => {})
      child.stdin.end(options.stdin ?? "")
      const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 15_000)
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

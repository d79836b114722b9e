/**
 * The Agent Trace git runner for Node (the report command, tests): the same
 * `Git` the plugin gets from the broker, over `child_process` (node-run.ts).
 * A command that cannot start, or runs past its timeout, is a result with
 * code null.
 */
import type { Git } from "../../trace/git.ts"
import { nodeRun } from "./node-run.ts"

export const nodeGit =
  (env: NodeJS.ProcessEnv = process.env): Git =>
  (repo, args, options = {}) =>
    nodeRun("git", ["-C", repo, ...args], {
      env,
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    })

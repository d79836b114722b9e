/**
 * A benchmark's worker run to its end in a Node process of its own (this
 * Node, from the repository's root), its answer the last line it prints as
 * JSON. A worker that fails, or ends without a JSON line, fails the
 * benchmark with its command line, exit status and output.
 */
import { spawnSync } from "node:child_process"
import { join } from "node:path"

const repoRoot = join(import.meta.dirname, "..")

export const runWorkerJson = <A>(args: ReadonlyArray<string>, env: Record<string, string> = {}): A => {
  const child = spawnSync(process.execPath, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    encoding: "utf8",
    // A worker may print long series before its answer.
    maxBuffer: 64 * 1024 * 1024,
  })
  const line = child.stdout.trim().split("\n").pop() ?? ""
  if (child.status !== 0 || !line.startsWith("{"))
    throw new Error(`${args.join(" ")} failed (exit ${child.status}):\n${child.stderr}\n${child.stdout}`)
  return JSON.parse(line) as A
}

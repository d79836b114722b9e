/**
 * A vitest pool whose workers run on another Node binary: vitest's own
 * `forks` workers, started from that binary instead of this one. Vitest (its
 * runner, Vite's transforms) stays on this Node; the tests and everything
 * they start from `process.execPath` (the plugin process, the host) run on
 * the other, whose folder is also first on their PATH (`npm start`, acpx).
 */
import { execFileSync } from "node:child_process"
import { delimiter, dirname } from "node:path"
import type { PoolOptions, PoolRunnerInitializer } from "vitest/node"
import { ForksPoolWorker } from "vitest/node"

export interface NodePool extends PoolRunnerInitializer {
  /** The binary's major version ("24"). */
  readonly version: string
  /** This process's PATH with the binary's folder first. */
  readonly path: string
}

export const nodePool = (binary: string): NodePool => {
  const version = execFileSync(binary, ["--version"], { encoding: "utf8" })
    .trim()
    .replace(/^v(\d+).*/, "$1")
  const name = `forks-node-${version}`
  /**
   * Vitest forks its worker from `process.execPath` (child_process.fork's
   * default), synchronously inside `start`: for that call it is the other binary.
   */
  class OtherNodeWorker extends ForksPoolWorker {
    override readonly name = name
    override start(): Promise<void> {
      const own = process.execPath
      process.execPath = binary
      try {
        return super.start()
      } finally {
        process.execPath = own
      }
    }
  }
  return {
    name,
    version,
    path: [dirname(binary), process.env.PATH ?? ""].join(delimiter),
    createPoolWorker: (options: PoolOptions) => new OtherNodeWorker(options),
  }
}

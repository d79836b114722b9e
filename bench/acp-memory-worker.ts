/**
 * The worker thread of bench/acp-memory.ts's tree watcher: samples each
 * adapter's process tree it is told to watch (sampleTree) off the bench's
 * event loop, and answers a stop with that tree's peaks.
 */
import { parentPort } from "node:worker_threads"
import { sampleTree } from "./acp-memory.ts"

const trees = new Map<number, ReturnType<typeof sampleTree>>()
parentPort?.on("message", (m: { watch?: number; stop?: number }) => {
  if (m.watch !== undefined) trees.set(m.watch, sampleTree(m.watch))
  if (m.stop !== undefined) {
    const tree = trees.get(m.stop)
    trees.delete(m.stop)
    if (tree) parentPort?.postMessage({ root: m.stop, peak: tree.stop() })
  }
})
parentPort?.postMessage({ ready: true })

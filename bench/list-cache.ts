/**
 * Waiting, outside a measured call, for the summary cache a list writes in
 * the background after its answer (history/session-list.ts: one shard per project
 * folder, several writes), so that the next (warm) run finds all of it.
 */
import { Effect } from "effect"
import type { JsonStorage } from "../host/broker/storage.ts"

const PREFIX = "cache:history:list:"
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Until some shard exists and no new one has come for a few polls, then every write on disk. */
export const settleListCache = async (storage: JsonStorage, timeoutMs = 30_000): Promise<void> => {
  const until = Date.now() + timeoutMs
  const state = async () => {
    const keys = (await Effect.runPromise(storage.keys)).filter((k) => k.startsWith(PREFIX))
    return keys.length === 0 ? "" : String(keys.length)
  }
  let last = await state()
  let quiet = 0
  while (quiet < 5 && Date.now() < until) {
    await sleep(20)
    const now = await state()
    quiet = now !== "" && now === last ? quiet + 1 : 0
    last = now
  }
  await storage.flush()
}

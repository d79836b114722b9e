/**
 * The host's plugin storage writing a list's summary cache, as a cold list
 * of 50,000 sessions leaves it (history/session-list-cache.ts: one shard a project
 * folder, each a JSON string of its files' entries): the sets and the
 * write to disk, on the host's main thread after the list's answer (in the
 * plugin process's mode, the host's, which also serves the front end).
 * Beside it, in the same run, the JSON round trip (`JSON.parse` of
 * `JSON.stringify`) each set took of its string until 2026-12-06: what the
 * host no longer spends.
 *
 *   npm run bench -- storage [folders] [sessions a folder]   (default 50 × 1,000)
 *
 * Last line: `storage: <n> shards (<mb> MB) set and written in <t> ms; the
 * round trip they no longer take <r> ms (<x>x the write)`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { openJsonStorage } from "../host/broker/storage.ts"

const ROUNDS = 7

const median = (xs: ReadonlyArray<number>) =>
  [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number

/** Shards shaped like the list's (history/session-list-cache.ts `toEntry`): size, mtime, title, created, cwd, branch. */
const shardsOf = (folders: number, perFolder: number): Array<[string, string]> =>
  Array.from({ length: folders }, (_, f) => {
    const cwd = `/home/dev/code/project-${String(f).padStart(2, "0")}`
    const files: Record<string, unknown> = {}
    for (let i = 0; i < perFolder; i++) {
      const id = `${String(f).padStart(8, "0")}-4689-9550-a972-${String(i).padStart(12, "0")}`
      files[id] = [
        40_000 + i,
        1_796_534_938_770.0947 + i,
        `A "session" title ${f}/${i} with some words`,
        "2026-06-02T00:39:02.765Z",
        cwd,
        "main",
      ]
    }
    return [
      `cache:history:list:/home/dev/.claude/projects${cwd.replaceAll("/", "-")}`,
      JSON.stringify({ version: 2, files }),
    ]
  })

export const main = async (args: ReadonlyArray<string>): Promise<void> => {
  const folders = Number(args[0] ?? 50)
  const perFolder = Number(args[1] ?? 1000)
  const shards = shardsOf(folders, perFolder)
  const bytes = shards.reduce((n, [, v]) => n + v.length, 0)
  const dir = mkdtempSync(join(tmpdir(), "cvg-storage-bench-"))
  const written: number[] = []
  const roundTrips: number[] = []
  let sink = 0
  try {
    for (let r = 0; r < ROUNDS; r++) {
      rmSync(join(dir, "s.json"), { force: true })
      const storage = await openJsonStorage(join(dir, "s.json"))
      const started = performance.now()
      await Promise.all(shards.map(([key, value]) => Effect.runPromise(storage.set(key, value))))
      await storage.flush()
      written.push(performance.now() - started)
      const before = performance.now()
      for (const [, value] of shards) sink += (JSON.parse(JSON.stringify(value)) as string).length
      roundTrips.push(performance.now() - before)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const w = median(written)
  const t = median(roundTrips)
  console.log(
    `${folders} shards of ${perFolder} sessions, ${(bytes / 1e6).toFixed(1)} MB, ${ROUNDS} rounds (medians)`,
  )
  console.log(
    `  set and written to disk       ${w.toFixed(1)} ms   (runs: ${written.map((x) => x.toFixed(0)).join(", ")})`,
  )
  console.log(
    `  the JSON round trip per set   ${t.toFixed(1)} ms   (runs: ${roundTrips.map((x) => x.toFixed(0)).join(", ")})`,
  )
  if (sink === 0) console.log("(nothing round-tripped)")
  console.log(
    `storage: ${folders} shards (${(bytes / 1e6).toFixed(1)} MB) set and written in ${w.toFixed(0)} ms; the round trip they no longer take ${t.toFixed(0)} ms (${(t / w).toFixed(2)}x the write)`,
  )
}

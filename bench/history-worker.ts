/**
 * One measured call of our history readers, in a process of its own. The
 * history benchmark (bench/history.ts) bundles this file with esbuild and
 * runs the bundle with plain `node`, as it runs the Agent SDK's side: no
 * TypeScript loader on either side, so whole-process memory compares like
 * with like.
 *
 *   node history-worker.mjs <mode>    (BENCH_CORPUS and BENCH_STORAGE in the environment)
 *
 * Prints one JSON line: a `Sample` (bench/measure.ts).
 */
import { Context, Effect } from "effect"
import { makeFsBroker } from "../host/broker/fs-broker.ts"
import { makeScopeSet } from "../host/broker/scopes.ts"
import { openJsonStorage } from "../host/broker/storage.ts"
import { listSessions, readSession } from "../history.ts"
import { Fs, type FsShape, Storage } from "../sdk/plugin-api.ts"
import type { Corpus } from "./corpus.ts"
import { nodeFs } from "../testkit/node-fs.ts"
import { measureCall, rawEndsFloor, settleListCache } from "./measure.ts"

export type OursMode = "ours-list" | "ours-list-warm" | "ours-read" | "floor-list"

const corpus = JSON.parse(process.env.BENCH_CORPUS ?? "{}") as Corpus
const storageFile = process.env.BENCH_STORAGE ?? ""
const mode = process.argv[2] as OursMode
/** `broker`: the files are read through host/broker/fs-broker (grant checks, asynchronous I/O). */
const via = process.argv[3] === "broker" ? "broker" : "direct"

/** The host's own fs broker, granting the corpus folder as the manifest grants ~/.claude. */
const brokerFs = (configDir: string): FsShape =>
  makeFsBroker({
    scopes: makeScopeSet([`${configDir}/**`], { home: configDir, data: configDir, workspaces: () => [] }),
    home: configDir,
    data: configDir,
    refuse: (path, reason) => console.error(`refused ${path}: ${reason}`),
  })

const main = async (): Promise<void> => {
  const configDir = mode === "ours-read" ? corpus.readConfigDir : corpus.listConfigDir
  const fs = via === "broker" ? brokerFs(configDir) : nodeFs
  // The host loads the plugin's storage when it starts, before any call: so here.
  const storage = await openJsonStorage(storageFile)
  // The services as the plugin holds them: one context made at activation
  // (sdk/context.ts) and provided to every call (agent.ts `call`).
  const services = Context.make(Fs, fs).pipe(Context.add(Storage, storage))
  const calls: Record<OursMode, () => Promise<number>> = {
    "ours-list": async () =>
      (
        await Effect.runPromise(
          listSessions(configDir, { limit: 1_000_000 }).pipe(Effect.provideContext(services)),
        )
      ).sessions.length,
    "ours-list-warm": async () =>
      (
        await Effect.runPromise(
          listSessions(configDir, { limit: 1_000_000 }).pipe(Effect.provideContext(services)),
        )
      ).sessions.length,
    // No plugin code: only the file-system calls a cold list makes, as a floor for its time.
    "floor-list": async () => rawEndsFloor(configDir, 2 * 1024, 4 * 1024),
    "ours-read": async () =>
      (
        await Effect.runPromise(
          readSession(configDir, corpus.readCwd, corpus.readSessionId).pipe(Effect.provideContext(services)),
        )
      )?.items.length ?? -1,
  }
  const call = calls[mode]
  if (call === undefined) throw new Error(`no such mode ${mode}`)
  // An active plugin has run effects before (activation reads its storage and
  // settings through the same services): Effect's own runtime is not cold. No
  // code of the history readers runs before the call.
  await Effect.runPromise(
    Effect.provideContext(
      Effect.gen(function* () {
        yield* Fs
        return yield* (yield* Storage).keys
      }),
      services,
    ),
  )
  const sample = await measureCall(call)
  // The summary cache is written after the answer, in the background: wait
  // for it here, outside the measured call, so the next (warm) run finds it.
  const flushStarted = performance.now()
  if (mode === "ours-list") await settleListCache(storage, 5000)
  else await storage.flush()
  const flushMs = performance.now() - flushStarted
  process.stdout.write(`${JSON.stringify({ ...sample, flushMs })}\n`)
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error)
    process.exit(1)
  },
)

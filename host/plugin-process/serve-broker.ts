/**
 * The host's broker answering a plugin process: each operation the plugin
 * side (sdk/context.ts) asks for is checked with Zod and run by the same
 * HostBroker an in-process plugin gets, so every grant is enforced exactly
 * as before; the process boundary adds nothing the broker does not allow.
 *
 * Rules it keeps:
 * - Arguments are untrusted: a request whose arguments fail their schema is
 *   answered with an error and logged once; nothing runs.
 * - Spawned processes are held here, each in its own scope: `release` (the
 *   plugin's scope closing) and `releaseAll` (the plugin process gone) end
 *   them and wait, as closing the scope does in-process.
 * - Streams are pumped only while the plugin grants credit (sdk/channel.ts);
 *   the byte streams (stdout, stderr, `fs.stream`) take the byte lane.
 */
import { Cause, Effect, Exit, Scope, Stream } from "effect"
import { z } from "zod"
import { type Peer, STREAM_WINDOW, type StreamSink } from "../../sdk/channel.ts"
import { endsRecordBytes, listingRecord, writeEndsRecord } from "../../sdk/ends-wire.ts"
import { inFolder, matchingEntries } from "../../sdk/file-ends.ts"
import type { DirEntry, PluginApi, ProcessHandle } from "../../sdk/plugin-api.ts"
import type { HostBroker } from "../broker/broker.ts"
import { LIST_ENDS_MAX_ENTRIES } from "../broker/fs-broker.ts"
import { makeSlicePool, type SlicePool } from "./slice-pool.ts"

const Path = z.object({ path: z.string() })
const Handle = z.object({ handle: z.number().int() })
const Env = z.record(z.string(), z.string().optional())
const SpawnArgs = z.object({
  command: z.string(),
  args: z.array(z.string()),
  options: z.object({ cwd: z.string().optional(), env: Env.optional() }).loose(),
})
const RunArgs = SpawnArgs.extend({
  options: z
    .object({
      cwd: z.string().optional(),
      env: Env.optional(),
      timeoutMs: z.number().optional(),
      stdin: z.string().optional(),
    })
    .loose(),
})
const Ends = z.object({
  paths: z.array(z.string()),
  headBytes: z.number().nonnegative(),
  tailBytes: z.number().nonnegative(),
})

/**
 * Files per `readEnds` slice: half the plugin's credit window of records at
 * most (so the host reads the next slice while the plugin takes this one,
 * instead of waiting for its credit), and no more than 512.
 */
const endsSlice = (headBytes: number, tailBytes: number): number =>
  Math.max(16, Math.min(512, Math.floor(STREAM_WINDOW / 2 / endsRecordBytes(headBytes, tailBytes))))

/**
 * Files' ends as records on the byte lane (sdk/ends-wire.ts: one record a
 * file): a slice of files read by the broker, its records written into one
 * buffer (the broker lends its bytes for one visit, so each end is copied
 * once, here), handed to the lane uncopied, the next slice read once the
 * plugin has credit for it. The buffer is the pool's (slice-pool.ts), taken
 * when the slice's first file is read (not while the slice waits its turn
 * behind other folders' reads) and given back once the lane has written it.
 * `indexOf`: the index each path's record carries.
 */
const emitEnds = async (
  api: PluginApi,
  pool: SlicePool,
  paths: ReadonlyArray<string>,
  headBytes: number,
  tailBytes: number,
  sink: StreamSink,
  indexOf: (at: number) => number,
): Promise<void> => {
  const readEnds = api.fs.readEnds
  if (!readEnds) throw new Error("this host's broker has no readEnds")
  const slice = endsSlice(headBytes, tailBytes)
  const recordBytes = endsRecordBytes(headBytes, tailBytes)
  for (let from = 0; from < paths.length && !sink.signal.aborted; from += slice) {
    const count = Math.min(slice, paths.length - from)
    const want = count * recordBytes
    // Read no further ahead of the lane than the pool allows (slice-pool.ts).
    if (!(await pool.room(want, sink.signal))) return
    let bytes: Uint8Array | undefined
    let at = 0
    try {
      await run(
        readEnds(paths.slice(from, from + count), headBytes, tailBytes, (index, ends) => {
          bytes ??= pool.take(want)
          at = writeEndsRecord(bytes, at, indexOf(from + index), ends)
        }),
      )
    } catch (error) {
      if (bytes === undefined) pool.settle(want)
      else pool.give(bytes, want)
      throw error
    }
    if (bytes === undefined) {
      pool.settle(want)
      continue
    }
    await handOver(pool, sink, bytes, want, at)
  }
}

/**
 * The first `length` bytes of `buffer` (a pool's, `reserved` bytes of its
 * read-ahead) to the plugin: lent to a lane that says when it has written
 * them, which gives the buffer back; else sent, and the buffer not used
 * again (a port in memory may keep it).
 */
const handOver = (
  pool: SlicePool,
  sink: StreamSink,
  buffer: Uint8Array,
  reserved: number,
  length: number,
): Promise<void> => {
  if (sink.lend) return sink.lend(buffer.subarray(0, length), () => pool.give(buffer, reserved))
  pool.settle(reserved)
  return sink.emit([buffer.subarray(0, length)])
}

/** A `readEnds` call as a byte stream, each record under its path's index in the call. */
const serveEnds = (
  api: PluginApi,
  pool: SlicePool,
  { paths, headBytes, tailBytes }: z.infer<typeof Ends>,
  sink: StreamSink,
) => emitEnds(api, pool, paths, headBytes, tailBytes, sink, (at) => at)

const ListEnds = z.object({
  path: z.string(),
  suffix: z.string(),
  nameLength: z.number().int().nonnegative().optional(),
  headBytes: z.number().nonnegative(),
  tailBytes: z.number().nonnegative(),
  maxEnds: z.number().nonnegative(),
})

/**
 * A `listEnds` call as a byte stream: the listing record, then one record a
 * matching file, in `readEnds` slices, each read when the plugin has credit
 * for it, so a folder of any size holds one slice here at a time and gets
 * its ends whenever the plugin asks (`maxEnds`). Made, as the broker's own
 * `listEnds` is (sdk/file-ends.ts `listEndsBy`), of the checked `list` and
 * `readEnds`: it refuses exactly what they refuse. A folder with more
 * entries than one listing record carries is null (the plugin then lists it
 * and reads its files by itself, as for a folder the broker refuses).
 *
 * Why not the broker's `listEnds`: it visits a folder's files in one go, so
 * their records would be held here until the call ended, and a large folder
 * would have to be asked for sizes only and every file read again.
 */
const serveListEnds = async (
  api: PluginApi,
  pool: SlicePool,
  args: z.infer<typeof ListEnds>,
  sink: StreamSink,
) => {
  const entries = await run(api.fs.list(args.path))
  // No listing record: the folder was refused or is missing (null to the plugin).
  if (entries === null || entries.length > LIST_ENDS_MAX_ENTRIES || sink.signal.aborted) return
  const indexes = matchingEntries(entries, args.suffix, args.nameLength)
  const withEnds = indexes.length <= args.maxEnds
  await sink.emit([listingRecord(entries, withEnds)])
  await emitEnds(
    api,
    pool,
    indexes.map((i) => inFolder(args.path, (entries[i] as DirEntry).name)),
    withEnds ? args.headBytes : 0,
    withEnds ? args.tailBytes : 0,
    sink,
    (at) => indexes[at] as number,
  )
}

/** A Zod failure as the one clear error the plugin gets (and the host logs). */
class BadArguments extends Error {
  readonly _tag = "BadArguments"
}

const parse = <T>(schema: z.ZodType<T>, op: string, args: unknown): T => {
  const result = schema.safeParse(args)
  if (!result.success) throw new BadArguments(`${op}: ${z.prettifyError(result.error)}`)
  return result.data
}

const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExit(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.findErrorOption(exit.cause)
    throw failure._tag === "Some" ? failure.value : new Error(Cause.pretty(exit.cause))
  })

/**
 * Pump a byte stream to the plugin, chunk by chunk, while it grants credit;
 * stop when it closes. `send` hands one chunk over (by default as it is).
 */
const pump = (
  stream: Stream.Stream<Uint8Array>,
  sink: StreamSink,
  send: (chunk: Uint8Array) => Promise<void> = (chunk) => sink.emit([chunk]),
): Promise<void> =>
  Effect.runPromise(
    Stream.runForEach(stream, (chunk) => Effect.promise(() => send(chunk))),
    { signal: sink.signal },
  ).catch(() => undefined)

/**
 * A stream of lent chunks (each read into the same buffer again) to the
 * plugin: each copied into a pool buffer, no further ahead of the lane
 * than the pool allows, rather than a fresh buffer a chunk.
 */
const pumpCopied = (stream: Stream.Stream<Uint8Array>, pool: SlicePool, sink: StreamSink): Promise<void> =>
  pump(stream, sink, async (chunk) => {
    const bytes = chunk.byteLength
    if (!(await pool.room(bytes, sink.signal))) return
    const copy = pool.take(bytes)
    copy.set(chunk)
    await handOver(pool, sink, copy, bytes, bytes)
  })

export interface ServedBroker {
  /** End every process the plugin started (its scopes closed), and wait. */
  readonly releaseAll: () => Promise<void>
}

/** Registers a request handler whose BadArguments are logged once, then answered as the error. */
type Answerer = (op: string, answer: (args: unknown) => unknown) => void

/** `process.*`: each spawned process held in a scope of its own; `release` ends one, the result ends all. */
const serveProcesses = (peer: Peer, api: PluginApi, handle: Answerer): (() => Promise<void>) => {
  const processes = new Map<number, { readonly scope: Scope.Closeable; readonly handle: ProcessHandle }>()
  let nextId = 0
  const processOf = (args: unknown, op: string) => {
    const { handle: id } = parse(Handle, op, args)
    const found = processes.get(id)
    if (!found)
      throw {
        _tag: "BrokerFailure",
        message: `${op}: no process ${id}`,
        operation: op,
        detail: "no such process",
      }
    return found
  }
  const release = async (id: number) => {
    const found = processes.get(id)
    if (!found) return
    processes.delete(id)
    await Effect.runPromise(Scope.close(found.scope, Exit.void))
  }
  handle("process.spawn", async (args) => {
    const { command, args: argv, options } = parse(SpawnArgs, "process.spawn", args)
    const scope = await Effect.runPromise(Scope.make())
    try {
      const h = await run(api.process.spawn(command, argv, options).pipe(Scope.provide(scope)))
      const id = ++nextId
      processes.set(id, { scope, handle: h })
      return { handle: id, pid: h.pid }
    } catch (error) {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      throw error
    }
  })
  handle("process.release", (args) => release(parse(Handle, "process.release", args).handle))
  handle("process.write", (args) => {
    const text = z.object({ text: z.string() }).parse(args).text
    return run(processOf(args, "process.write").handle.write(text))
  })
  handle("process.closeStdin", (args) => run(processOf(args, "process.closeStdin").handle.closeStdin))
  handle("process.exit", (args) => run(processOf(args, "process.exit").handle.exit))
  handle("process.kill", (args) => {
    const { signal } = z.object({ signal: z.enum(["SIGTERM", "SIGKILL", "SIGINT"]).optional() }).parse(args)
    return run(processOf(args, "process.kill").handle.kill(signal))
  })
  const bytes = { bytes: true }
  peer.serve(
    "process.stdout",
    (args, sink) => pump(processOf(args, "process.stdout").handle.stdout, sink),
    bytes,
  )
  peer.serve(
    "process.stderr",
    (args, sink) => pump(processOf(args, "process.stderr").handle.stderr, sink),
    bytes,
  )
  handle("process.run", (args) => {
    const { command, args: argv, options } = parse(RunArgs, "process.run", args)
    return run(api.process.run(command, argv, options))
  })
  handle("process.which", (args) =>
    run(api.process.which(parse(z.object({ command: z.string() }), "process.which", args).command)),
  )
  return () => Promise.all([...processes.keys()].map(release)).then(() => undefined)
}

/** `fs.*`: reads answered, byte streams on the lane through one slice pool; the result forgets the open streams. */
const serveFiles = (peer: Peer, api: PluginApi, handle: Answerer): (() => void) => {
  const fileStreams = new Map<number, Stream.Stream<Uint8Array>>()
  /** The buffers file bytes cross in, and how far reads run ahead of the lane (slice-pool.ts). */
  const slices = makeSlicePool()
  let nextToken = 0
  handle("fs.read", (args) => run(api.fs.read(parse(Path, "fs.read", args).path)))
  handle("fs.readRange", (args) => {
    const { path, start, end } = parse(
      z.object({ path: z.string(), start: z.number(), end: z.number() }),
      "fs.readRange",
      args,
    )
    return run(api.fs.readRange(path, start, end))
  })
  handle("fs.stat", (args) => run(api.fs.stat(parse(Path, "fs.stat", args).path)))
  handle("fs.list", (args) => run(api.fs.list(parse(Path, "fs.list", args).path)))
  handle("fs.realpath", (args) => run(api.fs.realpath(parse(Path, "fs.realpath", args).path)))
  handle("fs.streamOpen", async (args) => {
    const { path, start } = parse(
      z.object({ path: z.string(), start: z.number().optional() }),
      "fs.streamOpen",
      args,
    )
    // Lent: one buffer read into again and again; each chunk is copied into the pool's buffers to cross (pumpCopied).
    const stream = await run(api.fs.stream(path, start, { lend: true }))
    if (stream === null) return null
    const token = ++nextToken
    fileStreams.set(token, stream)
    return token
  })
  const bytes = { bytes: true }
  peer.serve(
    "fs.stream",
    (args, sink) => {
      const { token } = parse(z.object({ token: z.number() }), "fs.stream", args)
      const stream = fileStreams.get(token)
      fileStreams.delete(token)
      if (!stream) throw new BadArguments(`fs.stream: no open stream ${token}`)
      return pumpCopied(stream, slices, sink)
    },
    bytes,
  )
  peer.serve(
    "fs.readEnds",
    (args, sink) => serveEnds(api, slices, parse(Ends, "fs.readEnds", args), sink),
    bytes,
  )
  peer.serve(
    "fs.listEnds",
    (args, sink) => serveListEnds(api, slices, parse(ListEnds, "fs.listEnds", args), sink),
    bytes,
  )
  return () => fileStreams.clear()
}

/** `env.*`, `storage.*` and `host.callTool`: each answered by the broker as it is. */
const serveRest = (api: PluginApi, handle: Answerer): void => {
  handle("env.get", (args) => run(api.env.get(parse(z.object({ name: z.string() }), "env.get", args).name)))
  handle("env.all", () => run(api.env.all))
  const Key = z.object({ key: z.string() })
  handle("storage.get", (args) => run(api.storage.get(parse(Key, "storage.get", args).key)))
  handle("storage.set", (args) => {
    const { key, value } = parse(z.object({ key: z.string(), value: z.unknown() }), "storage.set", args)
    return run(api.storage.set(key, value))
  })
  handle("storage.delete", (args) => run(api.storage.delete(parse(Key, "storage.delete", args).key)))
  handle("storage.keys", () => run(api.storage.keys))
  handle("host.callTool", (args) => {
    const { sessionId, name, input } = parse(
      z.object({ sessionId: z.string(), name: z.string(), input: z.unknown() }),
      "host.callTool",
      args,
    )
    return run(api.host.callTool(sessionId, name, input))
  })
}

const LogNote = z.object({
  level: z.enum(["debug", "info", "warn", "error"]),
  message: z.string(),
  // Optional: the child's own notes (a dropped message) carry none.
  data: z.unknown().optional(),
})

export const serveBroker = (
  peer: Peer,
  broker: HostBroker,
  logBad: (op: string, error: unknown) => void,
): ServedBroker => {
  const handle: Answerer = (op, answer) =>
    peer.handle(op, (args) => {
      try {
        return answer(args)
      } catch (error) {
        if (error instanceof BadArguments) logBad(op, error)
        throw error
      }
    })
  const releaseProcesses = serveProcesses(peer, broker.api, handle)
  const forgetStreams = serveFiles(peer, broker.api, handle)
  serveRest(broker.api, handle)
  peer.onNote("log", (args) => {
    const parsed = LogNote.safeParse(args)
    if (!parsed.success) return logBad("log", new BadArguments(z.prettifyError(parsed.error)))
    const { level, message, data } = parsed.data
    broker.logger.log({ source: "plugin", level, message, ...(data !== undefined && { data }) })
  })
  return {
    releaseAll: async () => {
      forgetStreams()
      await releaseProcesses()
    },
  }
}

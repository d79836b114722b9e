/**
 * The plugin API as Effect services: `brokerContext` turns the PluginApi a
 * host hands to `activate` into the services the plugin's code asks for
 * (`yield* Fs`, `yield* Process`, …), and `channelApi` builds that PluginApi
 * over the channel (sdk/channel.ts) when the plugin runs in a process of its
 * own, with the same types and the same rules as an in-process broker:
 * - fs, env and storage never fail (a lost channel is a defect, as a host
 *   crash would be); process and host calls fail with NotGranted or
 *   BrokerFailure rebuilt from the host's answer.
 * - A spawned process lives as long as the caller's scope; closing it asks
 *   the host to end the process and waits for that.
 * - Byte streams and `readEnds` batches are pulled with credit, so nothing
 *   is read ahead of the plugin by more than the channel's window; both take
 *   the byte lane (`readEnds` as records of bytes, sdk/ends-wire.ts).
 */
import { Context, Effect, type Scope, Stream } from "effect"
import { ChannelError, type OpenOptions, type Peer, type WireError } from "./channel.ts"
import { makeEndsReader } from "./ends-wire.ts"
import {
  type Broker,
  BrokerFailure,
  type DirEntry,
  Env,
  type FileEnds,
  type FileStat,
  Fs,
  Host,
  Log,
  type LogShape,
  NotGranted,
  type PluginApi,
  Process,
  type ProcessExit,
  type ProcessHandle,
  type RunResult,
  Storage,
  type ToolResult,
} from "./plugin-api.ts"
import type { AgentHost, AgentProvider } from "./protocol.ts"

export const brokerContext = (api: PluginApi): Context.Context<Broker> =>
  Context.make(Process, api.process).pipe(
    Context.add(Fs, api.fs),
    Context.add(Env, api.env),
    Context.add(Storage, api.storage),
    Context.add(Host, api.host),
    Context.add(Log, api.log),
  )

/** Provide every broker service of `api` to an effect. */
export const withBroker =
  (api: PluginApi) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, Exclude<R, Broker>> =>
    Effect.provideContext(effect, brokerContext(api)) as Effect.Effect<A, E, Exclude<R, Broker>>

// ---------------------------------------------------------------------------
// Over the channel

/** What the host tells the plugin process when it activates it. */
export interface ActivateParams {
  readonly apiVersion: number
  readonly paths: { readonly home: string; readonly data: string }
}

const wireOf = (error: unknown): WireError =>
  error instanceof ChannelError ? error.wire : { _tag: "Error", message: String(error) }

const brokerError = (operation: string) => (error: unknown) => {
  const wire = wireOf(error)
  const fields = (wire.fields ?? {}) as Record<string, unknown>
  if (wire._tag === "NotGranted")
    return new NotGranted({
      capability: String(fields.capability ?? operation),
      detail: String(fields.detail ?? ""),
    })
  return new BrokerFailure({
    operation: String(fields.operation ?? operation),
    detail: typeof fields.detail === "string" ? fields.detail : wire.message,
  })
}

/** A call that never fails in a broker: a lost channel is a defect. */
const ask =
  (peer: Peer) =>
  <A>(op: string, args?: unknown): Effect.Effect<A> =>
    Effect.promise(() => peer.request(op, args) as Promise<A>)

/** A call that fails with the broker's errors. */
const askOr =
  (peer: Peer) =>
  <A, E>(op: string, args: unknown, onError: (error: unknown) => E): Effect.Effect<A, E> =>
    Effect.tryPromise({ try: () => peer.request(op, args) as Promise<A>, catch: onError })

/**
 * A stream the host produces, its batches flattened; interrupting it closes
 * it at the host. Lent (`lend`): each batch's bytes are given back to the
 * lane once the stream pulls past it (the consumer said it keeps none).
 */
export const pulled = <A>(peer: Peer, op: string, args: unknown, options?: OpenOptions): Stream.Stream<A> =>
  Stream.suspend(() =>
    Stream.fromAsyncIterable(peer.open(op, args, options) as AsyncIterable<ReadonlyArray<A>>, (e) => e).pipe(
      Stream.orDie,
      Stream.flattenIterable,
    ),
  )

export interface ChannelApiOptions extends ActivateParams {
  /** Where `agents.provide` keeps the providers, so the channel can call them. */
  readonly providers: Map<string, AgentProvider>
  /** Providers made while the host is asked to register them (callable already). */
  readonly staged: Map<string, AgentProvider>
}

export const channelApi = (peer: Peer, options: ChannelApiOptions): PluginApi => {
  const call = ask(peer)
  const callOr = askOr(peer)

  const handleOf = (id: number, pid: number | undefined, lendStdout: boolean): ProcessHandle => ({
    pid,
    stdout: pulled<Uint8Array>(peer, "process.stdout", { handle: id }, { lend: lendStdout }),
    stderr: pulled<Uint8Array>(peer, "process.stderr", { handle: id }),
    write: (text) =>
      callOr<void, BrokerFailure>("process.write", { handle: id, text }, brokerError("write") as never),
    closeStdin: call("process.closeStdin", { handle: id }),
    exit: call<ProcessExit>("process.exit", { handle: id }),
    kill: (signal) => call("process.kill", { handle: id, signal }),
  })

  // How stdout is handed over is the plugin side's business: the host gets the process's options only.
  const spawn: PluginApi["process"]["spawn"] = (command, args, { stdout, ...spawnOptions } = {}) =>
    Effect.acquireRelease(
      callOr<{ handle: number; pid: number | undefined }, NotGranted | BrokerFailure>(
        "process.spawn",
        { command, args, options: spawnOptions },
        brokerError("spawn") as never,
      ),
      ({ handle }) => call("process.release", { handle }).pipe(Effect.ignore),
    ).pipe(Effect.map(({ handle, pid }) => handleOf(handle, pid, stdout?.lend === true))) as Effect.Effect<
      ProcessHandle,
      NotGranted | BrokerFailure,
      Scope.Scope
    >

  // The host's records (ends-wire.ts) arrive as byte pieces cut anywhere: each visited as soon as it is whole.
  const readEnds: NonNullable<PluginApi["fs"]["readEnds"]> = (paths, headBytes, tailBytes, visit) =>
    Effect.promise(async () => {
      const reader = makeEndsReader(headBytes, tailBytes, visit)
      for await (const batch of peer.open("fs.readEnds", { paths, headBytes, tailBytes }))
        for (const piece of batch as Uint8Array[]) reader.push(piece)
      reader.end()
    })

  // The listing record first, then the files' records (ends-wire.ts); no listing: the folder was refused or missing.
  const listEnds: NonNullable<PluginApi["fs"]["listEnds"]> = (dir, options, visit) =>
    Effect.promise(async () => {
      let answer: { readonly withEnds: boolean } | null = null
      const file = (index: number, ends: FileEnds | null) => {
        if (answer === null) throw new Error("listEnds: a file's record before the listing")
        visit.file(index, ends)
      }
      const reader = makeEndsReader(options.headBytes, options.tailBytes, file, (entries, withEnds) => {
        answer = { withEnds }
        visit.entries(entries, withEnds)
      })
      for await (const batch of peer.open("fs.listEnds", { path: dir, ...options }))
        for (const piece of batch as Uint8Array[]) reader.push(piece)
      reader.end()
      return answer
    })

  const log = (level: keyof LogShape) => (message: string, data?: unknown) =>
    Effect.sync(() => peer.note("log", { level, message, data }))

  return {
    apiVersion: options.apiVersion,
    process: {
      spawn,
      run: (command, args, runOptions) =>
        callOr<RunResult, NotGranted | BrokerFailure>(
          "process.run",
          { command, args, options: runOptions ?? {} },
          brokerError("run") as never,
        ),
      which: (command) =>
        callOr<string | null, NotGranted>("process.which", { command }, brokerError("process") as never),
    },
    fs: {
      read: (path) => call<string | null>("fs.read", { path }),
      readRange: (path, start, end) => call<Uint8Array | null>("fs.readRange", { path, start, end }),
      stream: (path, start, streamOptions) =>
        call<number | null>("fs.streamOpen", { path, start }).pipe(
          Effect.map((token) =>
            token === null
              ? null
              : pulled<Uint8Array>(peer, "fs.stream", { token }, { lend: streamOptions?.lend === true }),
          ),
        ),
      stat: (path) => call<FileStat | null>("fs.stat", { path }),
      readEnds,
      listEnds,
      list: (dir) => call<ReadonlyArray<DirEntry> | null>("fs.list", { path: dir }),
      realpath: (path) => call<string | null>("fs.realpath", { path }),
      paths: options.paths,
    },
    env: {
      get: (name) => call<string | undefined>("env.get", { name }).pipe(Effect.map((v) => v ?? undefined)),
      all: call<Readonly<Record<string, string>>>("env.all"),
    },
    storage: {
      get: (key) => call<unknown>("storage.get", { key }),
      set: (key, value) => call<void>("storage.set", { key, value }),
      delete: (key) => call<void>("storage.delete", { key }),
      keys: call<ReadonlyArray<string>>("storage.keys"),
    },
    host: {
      callTool: (sessionId, name, input) =>
        callOr<ToolResult, BrokerFailure>(
          "host.callTool",
          { sessionId, name, input },
          brokerError("tools.call") as never,
        ),
    },
    log: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    agents: {
      // The host checks the grant and disposes a provider it replaces (asking
      // back over "agent.dispose"); a refusal is a defect, as in-process. The
      // new provider is staged meanwhile: a call may arrive before the answer.
      provide: (id, make) =>
        Effect.suspend(() => {
          const host: AgentHost = {
            emit: (event) => Effect.sync(() => peer.note("agent.emit", { agent: id, event })),
            infoChanged: (agentId) =>
              Effect.sync(() => peer.note("agent.infoChanged", { agent: id, agentId })),
          }
          const provider = make(host)
          options.staged.set(id, provider)
          return Effect.tryPromise({
            try: () => peer.request("agents.provide", { id }),
            catch: brokerError("agents.provide"),
          }).pipe(
            Effect.andThen(Effect.sync(() => options.providers.set(id, provider))),
            Effect.ensuring(Effect.sync(() => options.staged.delete(id))),
            Effect.orDie,
            Effect.asVoid,
          )
        }),
      unprovide: (id) => call<void>("agents.unprovide", { id }),
    },
  }
}

/**
 * An in-memory broker for tests: files, environment, storage, host tools and
 * commands are plain maps, so a test sets up exactly the world it needs and
 * reads back what the plugin stored and emitted.
 */
import { Effect, type Scope, Stream } from "effect"
import {
  BrokerFailure,
  type DirEntry,
  type PluginApi,
  type ProcessHandle,
  type RunResult,
  type SpawnOptions,
  NotGranted,
  type ToolResult,
} from "../plugin-api.ts"
import type { AgentEvent, AgentHost, AgentProvider } from "../protocol.ts"
import { dirname, isWithin, normalize } from "../paths.ts"

const STREAM_CHUNK = 64 * 1024

/**
 * A stream lent as a lending host lends it (`StreamOptions.lend`, a spawn's
 * `stdout.lend`): one chunk a pull, each in the same buffer, overwritten by
 * the next pull and cleared at the end, so a reader that keeps a view of a
 * chunk past its pull reads the wrong bytes in every test.
 */
const lent = (source: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => {
    let buffer = new Uint8Array(STREAM_CHUNK)
    return source.pipe(
      Stream.rechunk(1),
      Stream.mapArray(([chunk]) => {
        if (chunk.length > buffer.length) buffer = new Uint8Array(chunk.length)
        buffer.fill(0)
        buffer.set(chunk)
        return [buffer.subarray(0, chunk.length)] as const
      }),
      Stream.onEnd(Effect.sync(() => buffer.fill(0))),
    )
  })

export type FakeSpawn = (
  args: ReadonlyArray<string>,
  options: SpawnOptions,
) => Effect.Effect<ProcessHandle, BrokerFailure, Scope.Scope>

export type FakeRun = (
  args: ReadonlyArray<string>,
  options: SpawnOptions,
) => Effect.Effect<RunResult, BrokerFailure>

export interface MemoryBrokerOptions {
  readonly home?: string
  readonly data?: string
  /** Absolute path → content. Folders are implied by the paths. */
  readonly files?: Readonly<Record<string, string>>
  /** Link path → target path (followed by read, list, stat and realpath). */
  readonly links?: Readonly<Record<string, string>>
  readonly env?: Readonly<Record<string, string>>
  readonly storage?: Readonly<Record<string, unknown>>
  /** Command name → how it spawns (FakePeer.spawn for `claude`). */
  readonly spawn?: Readonly<Record<string, FakeSpawn>>
  /** Command name → one-shot runs (`--version`, `auth status --json`, …). */
  readonly run?: Readonly<Record<string, FakeRun>>
  readonly which?: Readonly<Record<string, string>>
  readonly callTool?: (
    sessionId: string,
    name: string,
    input: unknown,
  ) => Effect.Effect<ToolResult, BrokerFailure>
}

export interface MemoryBroker {
  readonly api: PluginApi
  readonly files: Map<string, string>
  readonly env: Map<string, string>
  readonly storage: Map<string, unknown>
  readonly events: AgentEvent[]
  readonly logs: Array<{ level: string; message: string }>
  readonly agents: Map<string, AgentProvider>
  /** The provider registered under `id`; fails the test when missing. */
  readonly agent: (id: string) => AgentProvider
  readonly spawned: Array<{ command: string; args: ReadonlyArray<string>; options: SpawnOptions }>
  readonly ran: Array<{ command: string; args: ReadonlyArray<string>; options: SpawnOptions }>
}

export const makeMemoryBroker = (options: MemoryBrokerOptions = {}): MemoryBroker => {
  const home = options.home ?? "/home/user"
  const data = options.data ?? "/data/plugins/convergence-claude"
  const files = new Map(Object.entries(options.files ?? {}).map(([k, v]) => [normalize(k), v]))
  const links = new Map(Object.entries(options.links ?? {}).map(([k, v]) => [normalize(k), normalize(v)]))
  const env = new Map(Object.entries(options.env ?? {}))
  const storage = new Map(Object.entries(options.storage ?? {}))
  const events: AgentEvent[] = []
  const logs: Array<{ level: string; message: string }> = []
  const agents = new Map<string, AgentProvider>()
  const spawned: MemoryBroker["spawned"] = []
  const ran: MemoryBroker["ran"] = []

  const resolve = (path: string): string => {
    let current = normalize(path)
    for (let hops = 0; hops < 16; hops++) {
      let changed = false
      for (const [link, target] of links) {
        if (isWithin(current, link)) {
          current = normalize(target + current.slice(link.length))
          changed = true
          break
        }
      }
      if (!changed) return current
    }
    return current
  }
  const isDir = (path: string) => {
    const p = resolve(path)
    for (const file of files.keys()) if (file !== p && isWithin(file, p)) return true
    return false
  }
  const encoder = new TextEncoder()

  const log = (level: string) => (message: string) => Effect.sync(() => void logs.push({ level, message }))
  const host: AgentHost = {
    emit: (event) => Effect.sync(() => void events.push(event)),
    infoChanged: () => Effect.void,
  }

  const api: PluginApi = {
    apiVersion: 2,
    process: {
      spawn: (command, args, opts = {}) => {
        const make = options.spawn?.[command]
        if (!make) return Effect.fail(new NotGranted({ capability: "process", detail: command }))
        spawned.push({ command, args, options: opts })
        const handle = make(args, opts)
        return opts.stdout?.lend === true
          ? Effect.map(handle, (h) => ({ ...h, stdout: lent(h.stdout) }))
          : handle
      },
      run: (command, args, opts = {}) => {
        const make = options.run?.[command]
        if (!make) return Effect.fail(new NotGranted({ capability: "process", detail: command }))
        ran.push({ command, args, options: opts })
        return make(args, opts)
      },
      which: (command) => Effect.succeed(options.which?.[command] ?? `/usr/local/bin/${command}`),
    },
    fs: {
      paths: { home, data },
      read: (path) => Effect.sync(() => files.get(resolve(path)) ?? null),
      readRange: (path, start, end) =>
        Effect.sync(() => {
          const text = files.get(resolve(path))
          return text === undefined ? null : encoder.encode(text).slice(start, end)
        }),
      stream: (path, start = 0, streamOptions) =>
        Effect.sync(() => {
          const text = files.get(resolve(path))
          if (text === undefined) return null
          const bytes = encoder.encode(text).slice(start)
          const chunks: Uint8Array[] = []
          for (let at = 0; at < bytes.length; at += STREAM_CHUNK)
            chunks.push(bytes.slice(at, at + STREAM_CHUNK))
          return streamOptions?.lend === true
            ? lent(Stream.fromIterable(chunks))
            : Stream.fromIterable(chunks)
        }),
      stat: (path) =>
        Effect.sync(() => {
          const p = resolve(path)
          const text = files.get(p)
          if (text !== undefined)
            return { kind: "file" as const, size: encoder.encode(text).length, mtimeMs: 0, birthtimeMs: 0 }
          return isDir(p) ? { kind: "directory" as const, size: 0, mtimeMs: 0, birthtimeMs: 0 } : null
        }),
      readEnds: (paths, headBytes, tailBytes, visit) =>
        Effect.sync(() => {
          paths.forEach((path, i) => {
            const text = files.get(resolve(path))
            if (text === undefined) {
              visit(i, null)
              return
            }
            const bytes = encoder.encode(text)
            const size = bytes.length
            visit(i, {
              head: bytes.subarray(0, Math.max(0, Math.min(headBytes, size))),
              tail: bytes.subarray(Math.max(0, size - Math.max(0, tailBytes))),
              size,
              mtimeMs: 0,
              birthtimeMs: 0,
            })
          })
        }),
      list: (dir) =>
        Effect.sync(() => {
          const p = resolve(dir)
          if (!isDir(p)) return null
          const entries = new Map<string, DirEntry["kind"]>()
          for (const file of files.keys()) {
            if (!isWithin(file, p) || file === p) continue
            const rest = file.slice(p === "/" ? 1 : p.length + 1)
            const [first, ...more] = rest.split("/")
            if (first) entries.set(first, more.length > 0 ? "directory" : "file")
          }
          for (const link of links.keys())
            if (dirname(link) === p) entries.set(link.slice(p.length + 1), "link")
          return [...entries].map(([name, kind]) => ({ name, kind }))
        }),
      realpath: (path) =>
        Effect.sync(() => {
          const p = resolve(path)
          return files.has(p) || isDir(p) ? p : null
        }),
    },
    env: {
      get: (name) => Effect.sync(() => env.get(name)),
      all: Effect.sync(() => Object.fromEntries(env)),
    },
    storage: {
      get: (key) => Effect.sync(() => structuredClone(storage.get(key))),
      set: (key, value) => Effect.sync(() => void storage.set(key, structuredClone(value))),
      delete: (key) => Effect.sync(() => void storage.delete(key)),
      keys: Effect.sync(() => [...storage.keys()]),
    },
    host: {
      callTool: (sessionId, name, input) =>
        options.callTool
          ? options.callTool(sessionId, name, input)
          : Effect.fail(new BrokerFailure({ operation: "tools.call", detail: `no tool ${name}` })),
    },
    log: { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") },
    agents: {
      provide: (id, make) => Effect.sync(() => void agents.set(id, make(host))),
      unprovide: (id) => Effect.sync(() => void agents.delete(id)),
    },
  }

  return {
    api,
    files,
    env,
    storage,
    events,
    logs,
    agents,
    spawned,
    ran,
    agent: (id) => {
      const found = agents.get(id)
      if (!found) throw new Error(`no agent ${id} registered (have: ${[...agents.keys()].join(", ")})`)
      return found
    },
  }
}

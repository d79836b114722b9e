/**
 * An in-memory broker for tests: files, environment, storage, host tools and
 * commands are plain maps, so a test sets up exactly the world it needs and
 * reads back what the plugin stored and emitted.
 */
import { Effect, type Scope } from "effect"
import {
  BrokerFailure,
  type PluginApi,
  type ProcessHandle,
  type RunResult,
  type SpawnOptions,
  NotGranted,
  type ToolResult,
} from "../plugin-api.ts"
import type { AgentEvent, AgentHost, AgentProvider } from "../protocol.ts"
import { normalize } from "../paths.ts"
import { lent, makeMemoryFs } from "./memory-fs.ts"

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
    fs: makeMemoryFs(files, links, { home, data }),
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

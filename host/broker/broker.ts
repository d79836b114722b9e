/**
 * makeBroker: the PluginApi a host hands one plugin, every capability cut to
 * what its manifest grants (fs scopes, commands, env names, agents), plus the
 * host-side controls (workspaces, tools, events, logs, close).
 */
import { mkdir } from "node:fs/promises"
import { homedir } from "node:os"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import type { LogShape, PluginApi } from "../../sdk/plugin-api.ts"
import type { AgentProvider, PluginTool } from "../../sdk/protocol.ts"
import { type AgentRegistry, makeAgentRegistry } from "../core/agents.ts"
import { type EnvSource, makeEnvBroker } from "./env-broker.ts"
import { type EventHub, type HostEvents, makeEventHub } from "../core/events.ts"
import { makeFsBroker } from "./fs-broker.ts"
import { type HostLogger, type LogLevel, makeHostLogger, REFUSED } from "../core/log.ts"
import { HOST_API_VERSION, type Manifest } from "../core/manifest.ts"
import { makeProcessBroker, type ProcessBroker } from "./process-broker.ts"
import { covers, makeScopeSet, type ScopeSet } from "./scopes.ts"
import { type JsonStorage, openPluginStorage } from "./storage.ts"
import { makeToolTable, type ToolHandler, type ToolSpec } from "../core/tools.ts"

export interface BrokerOptions {
  /** HOME for `~` in scopes and paths. Default: the env source's HOME, else the OS home. */
  readonly home?: string
  /** The host's data folder: storage goes to `<hostDataDir>/storage/<plugin id>.json`. */
  readonly hostDataDir: string
  /** The plugin's data folder (the `data` scope). Default `<hostDataDir>/plugins/<plugin id>`. */
  readonly pluginDataDir?: string
  /**
   * The login environment: a function read at every call, or an object read
   * live (changes to it apply at once). Default `process.env`.
   */
  readonly env?: EnvSource | Readonly<Record<string, string | undefined>>
  /** Workspace roots known from the start. */
  readonly workspaces?: Iterable<string>
  /** Absolute fs scope → where it really is (tests: the managed-settings paths). */
  readonly scopePaths?: Readonly<Record<string, string>>
  /** From SIGTERM to SIGKILL when a child is ended. Default 3 s. */
  readonly killGraceMs?: number
  /** Default timeout of `process.run`. Default 120 s. */
  readonly runTimeoutMs?: number
  readonly logger?: HostLogger
  readonly events?: EventHub
  /** Keep every event in `events.recorded`. Default true. */
  readonly recordEvents?: boolean
}

export interface HostBroker {
  readonly api: PluginApi
  readonly manifest: Manifest
  readonly home: string
  readonly pluginDataDir: string
  readonly logger: HostLogger
  readonly events: HostEvents
  readonly agents: ReadonlyMap<string, AgentProvider>
  readonly storage: JsonStorage
  readonly processes: ProcessBroker
  readonly scopes: ScopeSet
  readonly workspaces: () => ReadonlyArray<string>
  /** Grant the `workspace` scope over `path` (made absolute) and below. */
  readonly addWorkspace: (path: string) => void
  readonly removeWorkspace: (path: string) => void
  /** A tool plugin sessions may call (`api.host.callTool`); returns its removal. */
  readonly registerTool: (name: string, spec: ToolSpec, handler: ToolHandler) => () => void
  /** The registered tools, as `SessionParams.tools`. */
  readonly tools: () => ReadonlyArray<PluginTool>
  /** Dispose every agent, end every child (and wait), flush storage, end the event stream. */
  readonly close: () => Promise<void>
}

const envSourceOf = (env: BrokerOptions["env"]): EnvSource =>
  env === undefined ? () => process.env : typeof env === "function" ? env : () => env

export const storageFile = (hostDataDir: string, pluginId: string) =>
  join(hostDataDir, "storage", `${pluginId}.json`)

export const makeBroker = async (manifest: Manifest, options: BrokerOptions): Promise<HostBroker> => {
  const env = envSourceOf(options.env)
  const home = resolve(options.home ?? env().HOME ?? homedir())
  const pluginDataDir = resolve(options.pluginDataDir ?? join(options.hostDataDir, "plugins", manifest.id))
  await mkdir(pluginDataDir, { recursive: true })
  const logger = options.logger ?? makeHostLogger()
  const events: EventHub = options.events ?? makeEventHub({ record: options.recordEvents ?? true })
  const grants = manifest.grants

  const refuse = (capability: string, what: string, reason: string) =>
    logger.log({
      source: "broker",
      level: "warn",
      message: `${REFUSED} ${capability}: ${what} (${reason})`,
      data: { capability, what, reason },
    })
  const note = (message: string, data?: unknown) =>
    logger.log({ source: "broker", level: "debug", message, data })

  const workspaceRoots = new Set<string>()
  const addWorkspace = (path: string) => void workspaceRoots.add(resolve(path))
  for (const w of options.workspaces ?? []) addWorkspace(w)

  const scopes = makeScopeSet(
    (grants["fs.read"] ?? []).map((s) => s.scope),
    { home, data: pluginDataDir, workspaces: () => workspaceRoots, remap: options.scopePaths },
  )
  for (const scope of scopes.unknown)
    logger.log({ source: "broker", level: "warn", message: `unknown fs.read scope grants nothing: ${scope}` })

  const processes = makeProcessBroker({
    commands: grants.process?.commands ?? [],
    args: grants.process?.args,
    settableEnv: grants.process?.env,
    // A child's working directory lies in a granted fs.read scope (the workspace, mostly).
    cwdGranted: (cwd) => scopes.roots().some((root) => covers(root, cwd)),
    env,
    defaultCwd: home,
    killGraceMs: options.killGraceMs,
    runTimeoutMs: options.runTimeoutMs,
    refuse: (command, reason) => refuse("process", command, reason),
    log: note,
  })

  const storage = await openPluginStorage(storageFile(options.hostDataDir, manifest.id), (message, data) =>
    logger.log({ source: "host", level: "error", message, data }),
  )
  const tools = makeToolTable()
  const agents: AgentRegistry = makeAgentRegistry({
    granted: grants["agents.provide"] !== undefined,
    events,
    refuse: (id) => refuse("agents.provide", id, "not granted"),
    log: note,
  })

  const pluginLog = (level: LogLevel) => (message: string, data?: unknown) =>
    Effect.sync(() => logger.log({ source: "plugin", level, message, data }))
  const log: LogShape = {
    debug: pluginLog("debug"),
    info: pluginLog("info"),
    warn: pluginLog("warn"),
    error: pluginLog("error"),
  }

  const api: PluginApi = {
    apiVersion: HOST_API_VERSION,
    process: { spawn: processes.spawn, run: processes.run, which: processes.which },
    fs: makeFsBroker({
      scopes,
      home,
      data: pluginDataDir,
      refuse: (path, reason) => refuse("fs.read", path, reason),
    }),
    env: makeEnvBroker({
      names: grants.env?.names ?? [],
      source: env,
      refuse: (name) => refuse("env", name, "not in the manifest's env grant"),
    }),
    storage,
    host: { callTool: tools.call },
    log,
    agents: agents.shape,
  }

  let closing: Promise<void> | null = null
  return {
    api,
    manifest,
    home,
    pluginDataDir,
    logger,
    events,
    agents: agents.agents,
    storage,
    processes,
    scopes,
    workspaces: () => [...workspaceRoots],
    addWorkspace,
    removeWorkspace: (path) => void workspaceRoots.delete(resolve(path)),
    registerTool: tools.register,
    tools: tools.list,
    close: () => {
      closing ??= (async () => {
        await agents.disposeAll()
        await processes.closeAll()
        await storage.flush()
        events.close()
      })()
      return closing
    },
  }
}

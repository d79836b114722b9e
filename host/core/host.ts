/**
 * startHost: load a plugin folder under its grants. Reads
 * plugin.manifest.json, builds the broker, runs the plugin's `activate(api)`
 * and gives the caller the agents as Promises.
 *
 * By default the plugin runs in a process of its own under Node's
 * permission model (host/plugin-process/), reaching the broker over a
 * channel; when that process dies its runs end Failed, its processes are
 * ended, and the next call starts it again. `isolation: "in-process"`
 * imports `main` into this process instead: for unit tests only.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Cause, Effect, Exit } from "effect"
import type { Activate, PluginApi } from "../../sdk/plugin-api.ts"
import type { AgentEvent, AgentFailure, AgentProvider, PluginTool } from "../../sdk/protocol.ts"
import { type BrokerOptions, type HostBroker, makeBroker } from "../broker/broker.ts"
import { type HostEvents, makeEventHub } from "./events.ts"
import { isEnabled, PluginNotEnabled } from "./installed.ts"
import type { HostLogger } from "./log.ts"
import { loadManifest, type Manifest } from "./manifest.ts"
import type { LiveProcess } from "../broker/process-broker.ts"
import {
  exitText,
  type PluginExit,
  type PluginProcess,
  startPluginProcess,
} from "../plugin-process/parent.ts"
import type { SpawnedPlugin } from "../plugin-process/spawn.ts"
import type { JsonStorage } from "../broker/storage.ts"
import type { ToolHandler, ToolSpec } from "./tools.ts"

export interface StartHostOptions extends Omit<BrokerOptions, "hostDataDir" | "home"> {
  /** The folder with plugin.manifest.json and its `main`. */
  readonly pluginDir: string
  /** HOME for the scopes (tests: a temp folder). Default: the env source's HOME. */
  readonly home?: string
  /** The host's data folder (storage, plugin data). */
  readonly dataDir: string
  /**
   * `process` (the default): the plugin in a child process under Node's
   * permission model. `in-process`: imported into this process, with no
   * wall but the broker's: for unit tests only.
   */
  readonly isolation?: "process" | "in-process"
  /** V8 heap-size flags for the plugin process (host/plugin-process/child-flags.ts). */
  readonly pluginV8Flags?: ReadonlyArray<string>
  /** How long the plugin process may leave the host's ping unanswered before it is ended (parent.ts, UNRESPONSIVE_MS). */
  readonly pluginUnresponsiveMs?: number
  /**
   * Called as the plugin process starts (its spawn follows within this turn
   * of the event loop when its bundle is fresh): a front end can load the
   * rest of itself while the child starts on the other core (host/acp/main.ts).
   */
  readonly onPluginStarting?: () => void
  /**
   * The plugin process, spawned before the host was loaded (spawn.ts; the
   * ACP entry's): the first start takes it (when it was spawned for this
   * plugin and these flags, else it is ended); a restart spawns anew. Ended
   * when the host cannot start.
   */
  readonly spawnedPlugin?: SpawnedPlugin
  /**
   * Load the plugin only when it is installed and enabled in `dataDir`'s
   * plugins.json (installed.ts): a front end that offers install and enable
   * sets it. Otherwise startHost fails with PluginNotEnabled.
   */
  readonly requireEnabled?: boolean
}

/** Every method of an agent provider, by its camelCase name. */
export type AgentMethod = Exclude<keyof AgentProvider, "id">
export type AgentMethodParams<M extends AgentMethod> = Parameters<AgentProvider[M]>[0]
export type AgentMethodResult<M extends AgentMethod> = Effect.Success<ReturnType<AgentProvider[M]>>

/** A method failed: the AgentFailure's message, its tag kept. */
export class AgentCallError extends Error {
  override readonly name = "AgentCallError"
  constructor(
    readonly agentId: string,
    readonly method: string,
    readonly tag: string,
    message: string,
  ) {
    super(message)
  }
}

export interface Host {
  readonly manifest: Manifest
  readonly api: PluginApi
  readonly agents: ReadonlyMap<string, AgentProvider>
  /** The provider registered as `id`; throws when there is none. */
  readonly agent: (id: string) => AgentProvider
  readonly events: HostEvents
  readonly logger: HostLogger
  readonly storage: JsonStorage
  readonly broker: HostBroker
  readonly addWorkspace: (path: string) => void
  readonly registerTool: (name: string, spec: ToolSpec, handler: ToolHandler) => () => void
  readonly tools: () => ReadonlyArray<PluginTool>
  /**
   * Run one agent method to a Promise. Rejects with AgentCallError (the
   * AgentFailure's message) on failure. A `cwd` in the params of a session
   * method becomes a workspace first, so the plugin may read it.
   */
  readonly call: <M extends AgentMethod>(
    agentId: string,
    method: M,
    ...params: AgentMethodParams<M> extends undefined ? [] : [AgentMethodParams<M>]
  ) => Promise<AgentMethodResult<M>>
  /** Children the plugin started that are still running. */
  readonly processes: () => ReadonlyArray<LiveProcess>
  /** The plugin's own process, while it runs (null: in-process, or not started again yet). */
  readonly pluginProcess: () => PluginProcess | null
  /** Dispose every agent, end every child process and wait for it, flush storage. */
  readonly close: () => Promise<void>
}

const describeFailure = (error: unknown): { tag: string; message: string } => {
  if (error && typeof error === "object" && "message" in error) {
    const e = error as Partial<AgentFailure>
    return { tag: typeof e._tag === "string" ? e._tag : "Error", message: String(e.message) }
  }
  return { tag: "Error", message: String(error) }
}

/** Run an effect; a failure or defect rejects with one clear Error. */
const runToPromise = async <A>(
  effect: Effect.Effect<A, unknown>,
  wrap: (tag: string, message: string) => Error,
): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") {
    const { tag, message } = describeFailure(failure.value)
    throw wrap(tag, message)
  }
  throw wrap("Defect", Cause.pretty(exit.cause))
}

/** Import `main` into this process and run `activate` (the in-process mode). */
const activateInProcess = async (pluginDir: string, manifest: Manifest, api: PluginApi): Promise<void> => {
  const module = (await import(pathToFileURL(resolve(pluginDir, manifest.main)).href)) as Record<
    string,
    unknown
  >
  const activate = (module.activate ??
    (module.default as Record<string, unknown> | undefined)?.activate ??
    module.default) as Activate | undefined
  if (typeof activate !== "function") throw new Error(`${manifest.main} exports no activate(api)`)
  await runToPromise(
    Effect.suspend(() => activate(api)),
    (tag, message) => Object.assign(new Error(`${manifest.id}: activate failed: ${message}`), { tag }),
  )
}

/** Runs started and not ended, per agent, so a dead plugin process can end them (a run always ends). */
const openRunsOf = (events: HostEvents) => {
  const open = new Map<string, { agentId: string; event: AgentEvent & { type: "RunStarted" } }>()
  events.subscribe((e) => {
    if (e.kind !== "agent_event") return
    const key = `${e.agentId}\0${e.event.session_id}\0${e.event.run_id}`
    if (e.event.type === "RunStarted") open.set(key, { agentId: e.agentId, event: e.event })
    else if (e.event.type === "RunEnded") open.delete(key)
  })
  return {
    /** Take every open run (they are ended by the caller). */
    take: () => {
      const runs = [...open.values()]
      open.clear()
      return runs
    },
  }
}

export const startHost = async (options: StartHostOptions): Promise<Host> => {
  const pluginDir = resolve(options.pluginDir)
  let spawned = options.spawnedPlugin
  if (options.requireEnabled && !isEnabled(options.dataDir, pluginDir)) {
    spawned?.kill()
    throw new PluginNotEnabled(`the plugin in ${pluginDir} is not enabled in ${options.dataDir}`)
  }
  const [manifest, broker, events] = await (async () => {
    const manifest = await loadManifest(pluginDir)
    // The host keeps the hub's publish: a dead plugin process's runs are ended here.
    const events = options.events ?? makeEventHub({ record: options.recordEvents ?? true })
    const broker = await makeBroker(manifest, { ...options, events, hostDataDir: options.dataDir })
    return [manifest, broker, events] as const
  })().catch((error: unknown) => {
    spawned?.kill()
    throw error
  })
  const isolated = (options.isolation ?? "process") === "process"
  if (!isolated) spawned?.kill()

  let plugin: PluginProcess | null = null
  let starting: Promise<PluginProcess> | null = null
  let closed = false
  const openRuns = openRunsOf(broker.events)
  /** Agents the dead plugin process had: a call to one waits for the restarted plugin to register it again. */
  const lost = new Set<string>()
  const died = (exit: PluginExit) => {
    plugin = null
    starting = null
    // Its proxies answer nothing now: the agents are gone until the next process provides them.
    for (const id of broker.agents.keys()) {
      lost.add(id)
      void Effect.runPromise(broker.api.agents.unprovide(id))
    }
    const error = `the plugin process ${exitText(exit)}`
    for (const { agentId, event } of openRuns.take())
      events.publish({
        kind: "agent_event",
        agentId,
        event: {
          type: "RunEnded",
          session_id: event.session_id,
          run_id: event.run_id,
          outcome: "Failed",
          error,
          ...(event.delivery_ids && { delivery_ids: event.delivery_ids }),
        },
      })
  }
  /** The plugin process, started (again) when it is not running. */
  const running = (): Promise<PluginProcess> => {
    if (plugin) return Promise.resolve(plugin)
    if (closed) return Promise.reject(new Error(`${manifest.id}: the host is closed`))
    if (starting) return starting
    starting = startPluginProcess({
      pluginDir,
      broker,
      onExit: died,
      ...(options.pluginV8Flags && { v8Flags: options.pluginV8Flags }),
      ...(options.pluginUnresponsiveMs !== undefined && { unresponsiveMs: options.pluginUnresponsiveMs }),
      ...(spawned && { spawned }),
    }).then(
      (started) => (plugin = started),
      (error: unknown) => {
        starting = null
        throw error
      },
    )
    // Only the first start takes the early child.
    spawned = undefined
    options.onPluginStarting?.()
    return starting
  }

  try {
    if (isolated) await running()
    else await activateInProcess(pluginDir, manifest, broker.api)
  } catch (error) {
    await broker.close()
    throw error
  }

  const agent = (id: string) => {
    const found = broker.agents.get(id)
    if (!found) throw new Error(`no agent ${id} (have: ${[...broker.agents.keys()].join(", ") || "none"})`)
    return found
  }

  /** After a restart, an agent the dead process had is waited for (stored accounts register once storage answers). */
  const registered = async (agentId: string): Promise<void> => {
    if (broker.agents.has(agentId) || !lost.has(agentId)) return
    await events
      .waitFor((e) => e.kind === "agent_provided" && e.agentId === agentId, 10_000)
      .catch(() => undefined)
  }

  const call = (<M extends AgentMethod>(agentId: string, method: M, params?: AgentMethodParams<M>) => {
    const cwd = (params as { cwd?: unknown } | undefined)?.cwd
    if (typeof cwd === "string" && cwd !== "") broker.addWorkspace(cwd)
    return (isolated ? running().then(() => registered(agentId)) : Promise.resolve())
      .then(() => {
        const provider = agent(agentId)
        const fn = provider[method] as unknown as (p?: unknown) => Effect.Effect<unknown, unknown>
        if (typeof fn !== "function") throw new Error(`agent ${agentId} has no method ${String(method)}`)
        return runToPromise(
          Effect.suspend(() => fn.call(provider, params)),
          (tag, message) => new AgentCallError(agentId, method, tag, message),
        )
      })
      .then((value) => value as AgentMethodResult<M>)
  }) as Host["call"]

  return {
    manifest,
    api: broker.api,
    agents: broker.agents,
    agent,
    events: broker.events,
    logger: broker.logger,
    storage: broker.storage,
    broker,
    addWorkspace: broker.addWorkspace,
    registerTool: broker.registerTool,
    tools: broker.tools,
    call,
    processes: broker.processes.live,
    pluginProcess: () => plugin,
    close: async () => {
      closed = true
      // The agents are disposed through the channel first, so sessions end as they would in-process.
      await broker.close()
      await plugin?.stop()
    },
  }
}

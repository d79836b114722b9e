/**
 * startHost: load a plugin folder into this Node process under its grants.
 * Reads plugin.manifest.json, builds the broker, imports `main`, runs
 * `activate(api)`, and gives the caller the agents as Promises.
 */
import { resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Cause, Effect, Exit } from "effect"
import type { Activate, PluginApi } from "../sdk/plugin-api.ts"
import type { AgentFailure, AgentProvider, PluginTool } from "../sdk/protocol.ts"
import { type BrokerOptions, type HostBroker, makeBroker } from "./broker.ts"
import type { HostEvents } from "./events.ts"
import type { HostLogger } from "./log.ts"
import { loadManifest, type Manifest } from "./manifest.ts"
import type { LiveProcess } from "./process-broker.ts"
import type { JsonStorage } from "./storage.ts"
import type { ToolHandler, ToolSpec } from "./tools.ts"

export interface StartHostOptions extends Omit<BrokerOptions, "hostDataDir" | "home"> {
  /** The folder with plugin.manifest.json and its `main`. */
  readonly pluginDir: string
  /** HOME for the scopes (tests: a temp folder). Default: the env source's HOME. */
  readonly home?: string
  /** The host's data folder (storage, plugin data). */
  readonly dataDir: string
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

export const startHost = async (options: StartHostOptions): Promise<Host> => {
  const pluginDir = resolve(options.pluginDir)
  const manifest = await loadManifest(pluginDir)
  const broker = await makeBroker(manifest, { ...options, hostDataDir: options.dataDir })

  try {
    const module = (await import(pathToFileURL(resolve(pluginDir, manifest.main)).href)) as Record<
      string,
      unknown
    >
    const activate = (module.activate ??
      (module.default as Record<string, unknown> | undefined)?.activate ??
      module.default) as Activate | undefined
    if (typeof activate !== "function") throw new Error(`${manifest.main} exports no activate(api)`)
    await runToPromise(
      Effect.suspend(() => activate(broker.api)),
      (tag, message) => Object.assign(new Error(`${manifest.id}: activate failed: ${message}`), { tag }),
    )
  } catch (error) {
    await broker.close()
    throw error
  }

  const agent = (id: string) => {
    const found = broker.agents.get(id)
    if (!found) throw new Error(`no agent ${id} (have: ${[...broker.agents.keys()].join(", ") || "none"})`)
    return found
  }

  const call = (<M extends AgentMethod>(agentId: string, method: M, params?: AgentMethodParams<M>) => {
    const cwd = (params as { cwd?: unknown } | undefined)?.cwd
    if (typeof cwd === "string" && cwd !== "") broker.addWorkspace(cwd)
    return Promise.resolve()
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
    close: broker.close,
  }
}

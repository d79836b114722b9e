/**
 * The plugin's side of a plugin process: answers the host over the channel.
 * `activate` builds the PluginApi over the channel (sdk/context.ts) and runs
 * the plugin's own `activate`; `agent.call` runs one method of a provider the
 * plugin registered, its AgentFailure sent back whole; `agent.dispose`
 * releases one; `ping` answers the host's watchdog. Bundled into the plugin's code, so it imports no Node module.
 */
import { Cause, Effect, Exit } from "effect"
import { makePeer, type Port, toWireError } from "./channel.ts"
import { type ActivateParams, channelApi } from "./context.ts"
import type { Activate } from "./plugin-api.ts"
import type { AgentProvider } from "./protocol.ts"

/** Run an effect to a Promise that rejects with the failure itself (its tag and fields cross). */
const settle = async <A>(effect: Effect.Effect<A, unknown>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = Cause.findErrorOption(exit.cause)
  if (failure._tag === "Some") throw toWireError(failure.value)
  throw { _tag: "Defect", message: Cause.pretty(exit.cause) }
}

const activateOf = (module: Record<string, unknown>): Activate | undefined =>
  (module.activate ?? (module.default as Record<string, unknown> | undefined)?.activate ?? module.default) as
    | Activate
    | undefined

export const servePlugin = (port: Port, module: Record<string, unknown>): void => {
  const peer = makePeer(port)
  const providers = new Map<string, AgentProvider>()
  const staged = new Map<string, AgentProvider>()
  const providerOf = (id: string) => {
    const found = providers.get(id) ?? staged.get(id)
    if (!found) throw { _tag: "UnknownAgent", message: `the plugin provides no agent ${id}` }
    return found
  }

  peer.handle("activate", (args) => {
    const params = args as ActivateParams
    const activate = activateOf(module)
    if (typeof activate !== "function")
      throw { _tag: "Error", message: "the plugin's main exports no activate(api)" }
    const api = channelApi(peer, { ...params, providers, staged })
    return settle(Effect.suspend(() => activate(api)))
  })

  peer.handle("agent.call", (args) => {
    const { agent, method, params } = args as { agent: string; method: string; params?: unknown }
    const provider = providerOf(agent)
    const fn = (provider as unknown as Record<string, unknown>)[method]
    if (method === "dispose" || method === "id" || typeof fn !== "function")
      throw { _tag: "UnknownMethod", message: `agent ${agent} has no method ${method}` }
    return settle(
      Effect.suspend(() => (fn as (p?: unknown) => Effect.Effect<unknown, unknown>).call(provider, params)),
    )
  })

  // The host's watchdog (host/plugin-process/parent.ts): answered from the event loop, so a loop stuck for good goes unanswered.
  peer.handle("ping", () => undefined)

  peer.handle("agent.dispose", (args) => {
    const { agent } = args as { agent: string }
    const provider = providers.get(agent)
    if (!provider) return undefined
    providers.delete(agent)
    return settle(provider.dispose())
  })
}

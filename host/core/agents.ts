/**
 * The agents a plugin provides (`api.agents`): kept by id, each given an
 * AgentHost whose events go to the host's event hub tagged with the agent.
 */
import { Duration, Effect } from "effect"
import { type AgentsShape, NotGranted } from "../../sdk/plugin-api.ts"
import type { AgentEvent, AgentHost, AgentProvider } from "../../sdk/protocol.ts"
import type { EventHub } from "./events.ts"

/**
 * The plain publish behind each AgentHost this registry made: the plugin
 * process's relay (plugin-process/parent.ts) emits thousands of events a
 * second, and `Effect.runSync(host.emit(event))` would start a fiber for
 * each (in-process, the plugin's own fiber runs them).
 */
const publishers = new WeakMap<AgentHost, (event: AgentEvent) => void>()

/** Emit `event` through `host` now: a host made here publishes directly, any other runs its `emit`. */
export const emitNow = (host: AgentHost, event: AgentEvent): void => {
  const publish = publishers.get(host)
  if (publish) publish(event)
  else Effect.runSync(host.emit(event))
}

export interface AgentRegistry {
  readonly agents: ReadonlyMap<string, AgentProvider>
  readonly shape: AgentsShape
  /** Dispose every agent (each bounded by `timeoutMs`) and forget them. */
  readonly disposeAll: (timeoutMs?: number) => Promise<void>
}

export interface AgentRegistryOptions {
  readonly granted: boolean
  readonly events: EventHub
  readonly refuse: (agentId: string) => void
  readonly log: (message: string, data?: unknown) => void
}

export const makeAgentRegistry = (options: AgentRegistryOptions): AgentRegistry => {
  const agents = new Map<string, AgentProvider>()
  const { events } = options

  const dispose = (id: string, agent: AgentProvider, timeoutMs: number) =>
    agent.dispose().pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(timeoutMs),
        orElse: () => Effect.sync(() => options.log("agent dispose timed out", { agentId: id, timeoutMs })),
      }),
      Effect.catchCause((cause) =>
        Effect.sync(() => options.log("agent dispose failed", { agentId: id, cause })),
      ),
    )

  const remove = (id: string, timeoutMs = 10_000) =>
    Effect.suspend(() => {
      const agent = agents.get(id)
      if (!agent) return Effect.void
      agents.delete(id)
      return dispose(id, agent, timeoutMs).pipe(
        Effect.andThen(Effect.sync(() => events.publish({ kind: "agent_unprovided", agentId: id }))),
      )
    })

  const shape: AgentsShape = {
    provide: (id, make) =>
      Effect.suspend(() => {
        if (!options.granted) {
          options.refuse(id)
          return Effect.die(new NotGranted({ capability: "agents.provide", detail: id }))
        }
        const publish = (event: AgentEvent) => events.publish({ kind: "agent_event", agentId: id, event })
        const host: AgentHost = {
          emit: (event) => Effect.sync(() => publish(event)),
          infoChanged: (agentId) => Effect.sync(() => events.publish({ kind: "info_changed", agentId })),
        }
        publishers.set(host, publish)
        return remove(id).pipe(
          Effect.andThen(
            Effect.sync(() => {
              agents.set(id, make(host))
              events.publish({ kind: "agent_provided", agentId: id })
            }),
          ),
        )
      }),
    unprovide: (id) => remove(id),
  }

  return {
    agents,
    shape,
    disposeAll: (timeoutMs = 10_000) =>
      Effect.runPromise(
        Effect.forEach([...agents.keys()], (id) => remove(id, timeoutMs), {
          concurrency: "unbounded",
          discard: true,
        }),
      ),
  }
}

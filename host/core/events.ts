/**
 * What the host hears from its agents: their protocol events and changes to
 * the agent set. Listeners, async iteration (for a front end) and a recorded
 * array plus `waitFor` (for tests).
 */
import type { AgentEvent } from "../../sdk/protocol.ts"

export type HostEvent =
  | { readonly kind: "agent_event"; readonly agentId: string; readonly event: AgentEvent }
  | { readonly kind: "info_changed"; readonly agentId: string }
  | { readonly kind: "agent_provided"; readonly agentId: string }
  | { readonly kind: "agent_unprovided"; readonly agentId: string }

export interface HostEvents extends AsyncIterable<HostEvent> {
  /** Every event so far, in order (empty when recording is off). */
  readonly recorded: ReadonlyArray<HostEvent>
  /** Call `listener` for every later event; returns the unsubscribe. */
  readonly subscribe: (listener: (event: HostEvent) => void) => () => void
  /**
   * The first recorded or later event that matches; rejects after
   * `timeoutMs` (default 30 s) or when the host closes.
   */
  readonly waitFor: <E extends HostEvent>(
    match: ((event: HostEvent) => event is E) | ((event: HostEvent) => boolean),
    timeoutMs?: number,
  ) => Promise<E>
  /** Only the agent events (optionally of one agent), from the record. */
  readonly agentEvents: (agentId?: string) => ReadonlyArray<AgentEvent>
}

export interface EventHub extends HostEvents {
  readonly publish: (event: HostEvent) => void
  /** Ends every iterator and rejects every waiter. */
  readonly close: () => void
}

export const makeEventHub = (options: { readonly record?: boolean } = {}): EventHub => {
  const record = options.record ?? true
  const recorded: HostEvent[] = []
  const listeners = new Set<(event: HostEvent) => void>()
  const onClose = new Set<() => void>()
  let closed = false

  const subscribe = (listener: (event: HostEvent) => void) => {
    listeners.add(listener)
    return () => void listeners.delete(listener)
  }

  return {
    recorded,
    subscribe,
    publish: (event) => {
      if (closed) return
      if (record) recorded.push(event)
      for (const listener of [...listeners]) {
        try {
          listener(event)
        } catch {
          // One bad listener must not stop the others or the agent.
        }
      }
    },
    close: () => {
      if (closed) return
      closed = true
      for (const end of [...onClose]) end()
      listeners.clear()
    },
    agentEvents: (agentId) =>
      recorded.flatMap((e) =>
        e.kind === "agent_event" && (agentId === undefined || e.agentId === agentId) ? [e.event] : [],
      ),
    waitFor: <E extends HostEvent>(match: (event: HostEvent) => boolean, timeoutMs = 30_000) =>
      new Promise<E>((resolve, reject) => {
        const found = recorded.find(match)
        if (found) return resolve(found as E)
        if (closed) return reject(new Error("host closed"))
        const done = () => {
          clearTimeout(timer)
          unsubscribe()
          onClose.delete(closedWhileWaiting)
        }
        const closedWhileWaiting = () => {
          done()
          reject(new Error("host closed while waiting for an event"))
        }
        const timer = setTimeout(() => {
          done()
          reject(new Error(`no matching host event within ${timeoutMs} ms`))
        }, timeoutMs)
        const unsubscribe = subscribe((event) => {
          if (!match(event)) return
          done()
          resolve(event as E)
        })
        onClose.add(closedWhileWaiting)
      }),
    [Symbol.asyncIterator]: () => {
      const buffer: HostEvent[] = []
      let wake: (() => void) | undefined
      let ended = closed
      const unsubscribe = subscribe((event) => {
        buffer.push(event)
        wake?.()
      })
      const end = () => {
        ended = true
        wake?.()
      }
      onClose.add(end)
      const finish = () => {
        unsubscribe()
        onClose.delete(end)
      }
      return {
        next: async (): Promise<IteratorResult<HostEvent>> => {
          while (buffer.length === 0 && !ended) await new Promise<void>((r) => (wake = r))
          wake = undefined
          const event = buffer.shift()
          if (event) return { value: event, done: false }
          finish()
          return { value: undefined, done: true }
        },
        return: async (): Promise<IteratorResult<HostEvent>> => {
          finish()
          return { value: undefined, done: true }
        },
      }
    },
  }
}

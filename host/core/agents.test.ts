import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { AgentEvent, AgentHost, AgentProvider } from "../../sdk/protocol.ts"
import { emitNow, makeAgentRegistry } from "./agents.ts"
import { makeEventHub } from "./events.ts"

const event = (text: string) =>
  ({ type: "diagnostic", level: "info", message: text }) as unknown as AgentEvent

const registryHost = () => {
  const events = makeEventHub()
  const registry = makeAgentRegistry({ granted: true, events, refuse: () => {}, log: () => {} })
  let host: AgentHost | undefined
  Effect.runSync(
    registry.shape.provide("claude", (h) => {
      host = h
      return { id: "claude" } as unknown as AgentProvider
    }),
  )
  return { events, host: host! }
}

describe("emitNow", () => {
  it("publishes a registry host's events at once, in order with its Effect emits", () => {
    const { events, host } = registryHost()
    emitNow(host, event("one"))
    Effect.runSync(host.emit(event("two")))
    emitNow(host, event("three"))
    expect(events.agentEvents("claude").map((e) => (e as unknown as { message: string }).message)).toEqual([
      "one",
      "two",
      "three",
    ])
  })

  it("runs the emit of a host this registry did not make", () => {
    const seen: AgentEvent[] = []
    const foreign: AgentHost = {
      emit: (e) => Effect.sync(() => void seen.push(e)),
      infoChanged: () => Effect.void,
    }
    emitNow(foreign, event("elsewhere"))
    expect(seen).toHaveLength(1)
  })
})

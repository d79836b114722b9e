/**
 * The ACP agent: every ACP method on top of one provider loaded by host/,
 * through the host contract only (`host.call` and the agent events), as the
 * terminal front end drives it. Built on `@agentclientprotocol/sdk` (its
 * unstable entry, for `session/fork`), protocol version 1.
 *
 * The parts: catalog.ts follows the agent's catalog (answers never wait for
 * a CLI start when they need not), sessions.ts serves the sessions and
 * routes the host's events to them, and the methods are grouped in auth.ts
 * (initialize, authenticate, logout), session-methods.ts (new, load, resume,
 * fork, list, close) and turns.ts (prompt, cancel, modes and options).
 * Approvals and questions are asks.ts's; the pure mappings live beside it.
 */
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { Host } from "../core/host.ts"
import { onAccount } from "./auth.ts"
import { makeCatalog } from "./catalog.ts"
import type { AcpAgentOptions, AcpContext } from "./context.ts"
import { onSessions } from "./session-methods.ts"
import { makeSessions } from "./sessions.ts"
import { onTurns } from "./turns.ts"

export { type AcpAgentOptions, AUTH_METHODS } from "./context.ts"
export { stopReasonOf } from "./turns.ts"

export interface AcpAgent {
  /** The ACP app: `connect` it to a stream (main.ts: stdio) or, in tests, to a client app. */
  readonly app: acp.AgentApp
  /** Close every session this agent opened (the connection's end does it too). */
  readonly closeSessions: () => Promise<void>
}

export const makeAcpAgent = (options: AcpAgentOptions): AcpAgent => {
  const started = Promise.resolve(options.host)
  let client: acp.AgentContext | undefined
  let caps: acp.ClientCapabilities = {}
  const ctx: AcpContext = {
    options,
    agentId: options.agentId,
    log: options.log ?? (() => {}),
    // Every call waits for the host: the client's initialize need not.
    host: {
      call: ((id: string, method: never, ...params: never[]) =>
        started.then((h) =>
          (h.call as (...a: unknown[]) => Promise<unknown>)(id, method, ...params),
        )) as Host["call"],
    },
    connection: { client: () => client, caps: () => caps },
  }
  const catalog = makeCatalog(ctx)
  const sessions = makeSessions(ctx, catalog)
  let app = acp.agent({ name: "convergence/claude" }).onConnect((connection) => {
    client = connection.client
    void connection.closed.then(sessions.closeAll)
  })
  app = onAccount(app, ctx, catalog, (declared) => {
    caps = declared
  })
  app = onSessions(app, ctx, catalog, sessions)
  app = onTurns(app, ctx, catalog, sessions)
  return { app, closeSessions: sessions.closeAll }
}

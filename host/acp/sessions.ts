/**
 * The ACP sessions one connection opened: each is served at once and its
 * provider session (create, resume, fork) started behind it; the agent
 * events of the host are routed to them as `session/update`s, approvals and
 * questions (asks.ts).
 *
 * Rules kept:
 * - ACP session ids are the provider's session ids.
 * - `cwd` must be an absolute directory (it becomes a workspace grant).
 * - Provider sessions start one at a time: a session's MCP servers reach
 *   its process through the environment at launch, so the next session's
 *   must wait until this one's process has started.
 * - Closing the connection closes every session it opened (the host then
 *   ends their processes).
 */
import { statSync } from "node:fs"
import { isAbsolute } from "node:path"
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { SessionOpened } from "../../sdk/protocol.ts"
import { makeAcpAutoContinue } from "./auto-continue.ts"
import type { Catalog } from "./catalog.ts"
import { type AcpContext, messageOf } from "./context.ts"
import { followEvents } from "./events.ts"
import { mcpConfigOf } from "./mcp.ts"
import { defaultsOf } from "./options.ts"
import { AcpSession } from "./session.ts"
import { clientShows, makeUpdateState, type Update, type UpdateState } from "./updates.ts"

export interface Sessions {
  readonly get: (sessionId: string) => AcpSession | undefined
  /** The session, or resource_not_found. */
  readonly need: (sessionId: string) => AcpSession
  /** The workspace a client's `cwd` names, checked (the demo's fixed one instead). */
  readonly workspace: (cwd: string) => string
  /** A session of this connection, not yet served: its updates go to the client. */
  readonly make: (sessionId: string, cwd: string, updates?: UpdateState) => AcpSession
  /** Serve a session at once and start its provider session behind it (see `serve` below). */
  readonly serve: (
    what: string,
    sessionId: string,
    cwd: string,
    servers: ReadonlyArray<acp.McpServer> | undefined,
    start: (session: AcpSession) => Promise<SessionOpened>,
    updates?: UpdateState,
  ) => AcpSession
  readonly close: (sessionId: string) => Promise<void>
  readonly closeAll: () => Promise<void>
  /** A prompt is about to be sent in this session (auto-continue counts it). */
  readonly prompted: (sessionId: string) => void
}

export const makeSessions = (ctx: AcpContext, catalog: Catalog): Sessions => {
  const { options, agentId, host, log, connection } = ctx
  const sessions = new Map<string, AcpSession>()
  const auto =
    options.autoContinue && options.autoContinue !== "off"
      ? makeAcpAutoContinue({
          mode: options.autoContinue,
          host,
          agentId,
          session: (id) => sessions.get(id),
          log,
        })
      : undefined

  followEvents(ctx, catalog, (id) => sessions.get(id), auto)

  const send = (sessionId: string) => (update: Update) => {
    const client = connection.client()
    return client ? client.notify("session/update", { sessionId, update }) : Promise.resolve()
  }

  const make = (sessionId: string, cwd: string, updates?: UpdateState) =>
    new AcpSession(
      sessionId,
      cwd,
      catalog.live() ? defaultsOf(catalog.live()!) : {},
      send(sessionId),
      log,
      updates ?? makeUpdateState(clientShows(connection.caps())),
    )

  const mcp = (servers: ReadonlyArray<acp.McpServer> | undefined) => {
    const config = mcpConfigOf(servers)
    if (servers !== undefined) options.setMcpConfig?.(config.json)
    return config.refused
  }

  let launching: Promise<unknown> = Promise.resolve()
  const launch = <A>(
    servers: ReadonlyArray<acp.McpServer> | undefined,
    start: (refused: ReadonlyArray<string>) => Promise<A>,
  ): Promise<A> => {
    const next = launching.then(
      () => start(mcp(servers)),
      () => start(mcp(servers)),
    )
    launching = next.catch(() => {})
    return next
  }

  const warnRefused = (session: AcpSession, refused: ReadonlyArray<string>) => {
    if (refused.length === 0) return
    void session.notify({
      sessionUpdate: "agent_message_chunk",
      content: {
        type: "text",
        text: `> ⚠ MCP servers not started (a transport Claude Code cannot run): ${refused.join(", ")}\n\n`,
      },
    })
  }

  /**
   * Serve ACP session `sessionId` at once, and start its provider session
   * behind it: requests that need the process wait for `ready`; a start
   * that fails fails them with its message.
   */
  const serve: Sessions["serve"] = (what, sessionId, cwd, servers, start, updates) => {
    const session = make(sessionId, cwd, updates)
    session.hold()
    sessions.set(sessionId, session)
    session.ready = launch(servers, (refused) => {
      warnRefused(session, refused)
      return start(session)
    }).then(
      (opened) => {
        void catalog.optionsChanged(session, opened.info.options)
      },
      (error: unknown) => {
        void session.notify({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `> ✗ The session could not start: ${messageOf(error)}\n\n` },
        })
        throw acp.RequestError.internalError({}, `${what}: ${messageOf(error)}`)
      },
    )
    session.ready.catch(() => {})
    // Released once the answer is out: a client knows a new session only from it.
    setTimeout(() => session.release(), 0)
    return session
  }

  const close = async (sessionId: string) => {
    const session = sessions.get(sessionId)
    if (!session) return
    sessions.delete(sessionId)
    session.close()
    // Its start, not the probe: closing never waits for a CLI that only probes the catalog.
    await catalog.startOf(session).catch(() => {})
    await host
      .call(agentId, "closeSession", { sessionId })
      .catch((e: unknown) => log(`closeSession: ${String(e)}`))
  }

  let closingAll: Promise<void> | undefined
  const closeAll = () => {
    auto?.dispose()
    closingAll ??= Promise.all([...sessions.keys()].map(close)).then(() => {
      closingAll = undefined
    })
    return closingAll
  }

  const workspace = (cwd: string): string => {
    if (options.fixedCwd) return options.fixedCwd
    if (!isAbsolute(cwd)) throw acp.RequestError.invalidParams({ cwd }, "cwd must be an absolute path")
    try {
      if (!statSync(cwd).isDirectory()) throw new Error("not a directory")
    } catch {
      throw acp.RequestError.invalidParams({ cwd }, `cwd is not a directory: ${cwd}`)
    }
    return cwd
  }

  return {
    get: (id) => sessions.get(id),
    need: (id) => {
      const session = sessions.get(id)
      if (!session) throw acp.RequestError.resourceNotFound(id)
      return session
    },
    workspace,
    make,
    serve,
    close,
    closeAll,
    prompted: (id) => auto?.sent(id),
  }
}

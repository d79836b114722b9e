/**
 * The ACP agent: every ACP method on top of one provider loaded by host/,
 * through the host contract only (`host.call` and the agent events), as the
 * terminal front end drives it. Built on `@agentclientprotocol/sdk` (its
 * unstable entry, for `session/fork`), protocol version 1.
 *
 * Rules kept:
 * - ACP session ids are the provider's session ids.
 * - The client's input is checked before the provider sees it: `cwd` must
 *   be an absolute directory (it becomes a workspace grant), option values
 *   must be ones the agent declared, prompts carry only what the agent can
 *   send. A bad request is a JSON-RPC error; the connection goes on.
 * - Every prompt gets one answer (session.ts); a failed run is an error
 *   carrying the CLI's message (its stderr tail); the provider resumes the
 *   conversation at the next prompt.
 * - Closing the connection closes every session it opened (the host then
 *   ends their processes).
 * - No answer waits for a CLI start when it need not: the host may still be
 *   starting when `initialize` arrives (every call waits for it), and
 *   `session/new` and `session/load` answer from the catalog last seen
 *   (`knownInfo`: main.ts gives the one kept in the data folder, or at a
 *   first start the plugin's built-in one) while the probe runs; when the
 *   probe's catalog differs, the session's `config_option_update` follows.
 *   What needs the catalog (prompts, mode and option changes) waits for the
 *   probe, so a value chosen early is checked against the live catalog
 *   before the provider gets it, and a probe that finds the account signed
 *   out fails them with auth_required.
 * - With no catalog to answer from the probe starts at once (the first
 *   answer needs it); with one, it starts when something first needs it, so
 *   a `session/load` reads and replays its chat before the probe's CLIs
 *   (`--version`, `auth status`, a catalog CLI) compete for the same cores.
 * Approvals and questions are asks.ts's; the pure mappings live beside it.
 */
import { randomUUID } from "node:crypto"
import { statSync } from "node:fs"
import { isAbsolute } from "node:path"
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { AutoContinueMode } from "../core/auto-continue.ts"
import type { Host } from "../core/host.ts"
import type { AgentEvent, AgentInfo, SessionOpened } from "../../sdk/protocol.ts"
import { mcpConfigOf } from "./mcp.ts"
import { APPROVAL_OPTION, checkValue, configOptionsOf, defaultsOf, modesOf } from "./options.ts"
import { PromptRefused, promptParts } from "./prompt.ts"
import { makeAsks } from "./asks.ts"
import { makeAcpAutoContinue } from "./auto-continue.ts"
import { replayUpdates } from "./replay.ts"
import { AcpSession, type PromptEnd } from "./session.ts"
import { type Update, type UpdateState, updatesOf } from "./updates.ts"

export interface AcpAgentOptions {
  /** The host, or its start (the client's `initialize` need not wait for it). */
  readonly host: Host | Promise<Host>
  readonly agentId: string
  /**
   * The agent's info as last seen (main.ts: a file in the data folder):
   * `session/new` answers from it while the probe runs. Used only when it
   * was Ready; `rememberInfo` gets every probe answer to keep.
   */
  readonly knownInfo?: AgentInfo
  readonly rememberInfo?: (info: AgentInfo) => void
  /** Set the MCP config the next launched process gets (`CLAUDE_MCP_CONFIG`). */
  readonly setMcpConfig?: (json: string | undefined) => void
  /** The demo: every session runs in this folder, whatever the client asks. */
  readonly fixedCwd?: string
  /** From session/cancel to a `cancelled` answer when the run stays silent. Default 8 s. */
  readonly cancelGraceMs?: number
  readonly version?: string
  /** Log every agent event (CVG_ACP_DEBUG=1 in main.ts). */
  readonly debug?: boolean
  /** Diagnostics (stderr in main.ts: stdout is the protocol). */
  readonly log?: (message: string) => void
  /** Send one "continue" when a blocked run's window reopens (auto-continue.ts). Default off. */
  readonly autoContinue?: AutoContinueMode
}

/** Authentication methods: the terminal login, and an API key or gateway in the agent's environment. */
export const AUTH_METHODS = {
  login: "claude-login",
  apiKey: "anthropic-api-key",
  gateway: "gateway",
} as const

const CLIENT_ERROR = "session/prompt failed"

/** A run's stop reason: the provider's when it gives one ACP knows, else end_turn. */
export const stopReasonOf = (end: PromptEnd): acp.StopReason => {
  if (end.kind !== "ended" || end.cancelled || end.outcome === "Cancelled") return "cancelled"
  const reason = end.event.stop_reason
  if (reason === "max_tokens" || reason === "refusal" || reason === "max_turn_requests") return reason
  return "end_turn"
}

export interface AcpAgent {
  /** The ACP app: `connect` it to a stream (main.ts: stdio) or, in tests, to a client app. */
  readonly app: acp.AgentApp
  /** Close every session this agent opened (the connection's end does it too). */
  readonly closeSessions: () => Promise<void>
}

export const makeAcpAgent = (options: AcpAgentOptions): AcpAgent => {
  const { agentId } = options
  const log = options.log ?? (() => {})
  const started = Promise.resolve(options.host)
  const host = {
    call: ((id: string, method: never, ...params: never[]) =>
      started.then((h) =>
        (h.call as (...a: unknown[]) => Promise<unknown>)(id, method, ...params),
      )) as Host["call"],
  }
  /**
   * The catalog `session/new` may answer from before the probe ends: the
   * info last probed (this process's latest, else the kept one), only while
   * it says Ready; forgotten at sign-out.
   */
  let known = options.knownInfo?.status === "Ready" ? options.knownInfo : undefined
  const graceMs = options.cancelGraceMs ?? 8_000
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
  let client: acp.AgentContext | undefined
  let clientCaps: acp.ClientCapabilities = {}
  let info: AgentInfo | undefined

  let probing: Promise<AgentInfo> | undefined
  const agentInfo = (): Promise<AgentInfo> => {
    if (info) return Promise.resolve(info)
    probing ??= host.call(agentId, "initialize").then(
      (answer) => {
        probing = undefined
        info = answer
        known = answer.status === "Ready" ? answer : undefined
        options.rememberInfo?.(answer)
        return answer
      },
      (error: unknown) => {
        probing = undefined
        throw error
      },
    )
    return probing
  }
  // The catalog probe starts CLIs. With nothing to answer from, begin at once, so the first session/new
  // finds it done; with a catalog last seen, the first answer that follows the probe starts it (see above).
  if (known === undefined) agentInfo().catch((error: unknown) => log(`initialize: ${String(error)}`))

  const call = async <A>(what: string, run: () => Promise<A>): Promise<A> => {
    try {
      return await run()
    } catch (error) {
      if (error instanceof acp.RequestError) throw error
      const message = error instanceof Error ? error.message : String(error)
      const tag = (error as { tag?: unknown }).tag
      if (tag === "SessionNotFound") throw acp.RequestError.resourceNotFound(what)
      throw acp.RequestError.internalError({ tag }, `${what}: ${message}`)
    }
  }

  const need = (sessionId: string): AcpSession => {
    const session = sessions.get(sessionId)
    if (!session) throw acp.RequestError.resourceNotFound(sessionId)
    return session
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

  // -- events ---------------------------------------------------------------

  const send = (sessionId: string) => (update: Update) =>
    client ? client.notify("session/update", { sessionId, update }) : Promise.resolve()

  const onEvent = (session: AcpSession, event: AgentEvent) => {
    switch (event.type) {
      case "ApprovalRequested":
        void askApproval(session, event)
        return
      case "QuestionAsked":
        void askQuestion(session, event)
        return
      case "approval_resolved":
        session.asks.get(event.approval_id)?.abort()
        session.asks.delete(event.approval_id)
        return
      case "question_resolved":
        session.asks.get(event.question_id)?.abort()
        session.asks.delete(event.question_id)
        return
      case "Skills":
        session.skills = new Set(event.skills.filter((s) => s.hidden_from_picker !== true).map((s) => s.name))
        break
      case "SessionInfo":
        void optionsChanged(session, event.info.options)
        break
      default:
        break
    }
    for (const update of updatesOf(session.updates, event)) void session.notify(update)
    if (event.type === "RunStarted") void session.flushed().then(() => session.runStarted(event.run_id))
    if (event.type === "RunEnded") void session.flushed().then(() => session.runEnded(event))
  }

  /** The provider's option values changed: tell the client the mode and config it now has. */
  const optionsChanged = async (
    session: AcpSession,
    values: Readonly<Record<string, string | boolean>> | undefined,
  ) => {
    if (!values) return
    const before = session.values
    const next = { ...before, ...values }
    session.values = next
    // Told to the client when it can be; a provider that stopped answering fails the next call instead.
    const current = await agentInfo().catch(() => undefined)
    if (current === undefined) return
    if (next[APPROVAL_OPTION] !== before[APPROVAL_OPTION] && typeof next[APPROVAL_OPTION] === "string")
      void session.notify({ sessionUpdate: "current_mode_update", currentModeId: next[APPROVAL_OPTION] })
    tellConfig(session, current)
  }

  /** The config options each session's client was last told (its answer, or the last update). */
  const toldConfig = new WeakMap<AcpSession, string>()
  const configFor = (session: AcpSession, current: AgentInfo) => {
    const configOptions = configOptionsOf(current, session.values)
    toldConfig.set(session, JSON.stringify(configOptions))
    return configOptions
  }
  /** Send `config_option_update` when the options (catalog or values) differ from what the client has. */
  const tellConfig = (session: AcpSession, current: AgentInfo) => {
    const told = toldConfig.get(session)
    const configOptions = configFor(session, current)
    if (told !== JSON.stringify(configOptions))
      void session.notify({ sessionUpdate: "config_option_update", configOptions })
  }

  void started.then(
    (h) =>
      h.events.subscribe((hostEvent) => {
        if (hostEvent.kind === "info_changed" && hostEvent.agentId === agentId) info = undefined
        if (hostEvent.kind !== "agent_event" || hostEvent.agentId !== agentId) return
        const event = hostEvent.event
        if (options.debug)
          log(`event ${event.type} ${event.session_id}${"run_id" in event ? ` run ${event.run_id}` : ""}`)
        const session = sessions.get(event.session_id)
        if (session) onEvent(session, event)
        if (session) auto?.onEvent(event)
      }),
    () => {},
  )

  const { askApproval, askQuestion } = makeAsks({
    host,
    agentId,
    log,
    client: () => client,
    elicitation: () => clientCaps.elicitation?.form != null,
  })

  // -- sessions ---------------------------------------------------------------

  const mcp = (servers: ReadonlyArray<acp.McpServer> | undefined) => {
    const config = mcpConfigOf(servers)
    if (servers !== undefined) options.setMcpConfig?.(config.json)
    return config.refused
  }

  /**
   * Start provider sessions one at a time: a session's MCP servers reach its
   * process through the environment at launch, so the next session's must
   * wait until this one's process has started.
   */
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
        text: `> ⚠ MCP servers not started (only http and sse servers are passed to Claude Code): ${refused.join(", ")}\n\n`,
      },
    })
  }

  /**
   * Serve ACP session `sessionId` at once, and start its provider session
   * (create, resume, fork) behind it: requests that need the process wait
   * for `ready`; a start that fails fails them with its message.
   */
  const serve = (
    what: string,
    sessionId: string,
    cwd: string,
    servers: ReadonlyArray<acp.McpServer> | undefined,
    start: () => Promise<SessionOpened>,
    updates?: UpdateState,
  ): AcpSession => {
    const session = new AcpSession(
      sessionId,
      cwd,
      info ? defaultsOf(info) : {},
      send(sessionId),
      log,
      updates,
    )
    session.hold()
    sessions.set(sessionId, session)
    session.ready = launch(servers, (refused) => {
      warnRefused(session, refused)
      return start()
    }).then(
      (opened) => {
        void optionsChanged(session, opened.info.options)
      },
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error)
        void session.notify({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `> ✗ The session could not start: ${message}\n\n` },
        })
        throw acp.RequestError.internalError({}, `${what}: ${message}`)
      },
    )
    session.ready.catch(() => {})
    // Released once the answer is out: a client knows a new session only from it.
    setTimeout(() => session.release(), 0)
    return session
  }

  /** What a session answer carries: its modes and config options, the agent's defaults under its values. */
  const stateOf = (session: AcpSession, current: AgentInfo) => {
    session.values = { ...defaultsOf(current), ...session.values }
    return {
      modes: modesOf(current, session.values),
      configOptions: configFor(session, current),
    }
  }

  /**
   * A session answered from the catalog last seen: what needs the catalog
   * waits for the probe (a refusal, such as signed out, fails it then), and
   * the client hears of the live catalog's options when they differ.
   */
  /** A session's own start, where its `ready` also waits for the probe. */
  const startOf = new WeakMap<AcpSession, Promise<void>>()
  const followProbe = (session: AcpSession) => {
    const probe = ready()
    probe.then(
      (live) => tellConfig(session, live),
      (error: unknown) =>
        void session.notify({
          sessionUpdate: "agent_message_chunk",
          content: {
            type: "text",
            text: `> ✗ ${error instanceof Error ? error.message : String(error)}\n\n`,
          },
        }),
    )
    const start = session.ready
    startOf.set(session, start)
    session.ready = Promise.all([start, probe]).then(() => undefined)
    session.ready.catch(() => {})
  }

  /** Answer with the live catalog (checked), else the one last seen (then follow the probe), else wait for the probe. */
  const answer = async (session: AcpSession) => {
    const now = info ?? known
    if (now === undefined || now === info) return stateOf(session, await ready())
    const state = stateOf(session, now)
    followProbe(session)
    return state
  }

  const ready = async () => {
    const current = await agentInfo()
    if (current.status === "AuthRequired")
      throw acp.RequestError.authRequired(
        { authMethods: Object.values(AUTH_METHODS) },
        current.statusMessage ?? "Claude Code is not logged in",
      )
    if (current.status === "Unavailable")
      throw acp.RequestError.internalError({}, current.statusMessage ?? "Claude Code cannot be run")
    return current
  }

  const closeSession = async (sessionId: string) => {
    const session = sessions.get(sessionId)
    if (!session) return
    sessions.delete(sessionId)
    session.close()
    // Its start, not the probe: closing never waits for a CLI that only probes the catalog.
    await (startOf.get(session) ?? session.ready).catch(() => {})
    await host
      .call(agentId, "closeSession", { sessionId })
      .catch((e: unknown) => log(`closeSession: ${String(e)}`))
  }

  // -- the app ----------------------------------------------------------------

  let closingAll: Promise<void> | undefined
  const closeSessions = () => {
    auto?.dispose()
    closingAll ??= Promise.all([...sessions.keys()].map(closeSession)).then(() => {
      closingAll = undefined
    })
    return closingAll
  }

  const app = acp
    .agent({ name: "convergence/claude" })
    .onConnect((connection) => {
      client = connection.client
      void connection.closed.then(closeSessions)
    })
    .onRequest("initialize", async ({ params }) => {
      clientCaps = params.clientCapabilities ?? {}
      // The catalog probe runs from the start (above); initialize does not wait for it.
      const current = info ?? known
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: {
          name: "convergence-claude",
          title: "Claude Code (convergence)",
          version: options.version ?? "0",
        },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: {
            image: current?.capabilities.images ?? true,
            embeddedContext: true,
            audio: false,
          },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: { list: {}, resume: {}, close: {}, fork: {} },
        },
        authMethods: [
          ...(clientCaps.auth?.terminal
            ? [
                {
                  type: "terminal" as const,
                  id: AUTH_METHODS.login,
                  name: "Log in to Claude",
                  description:
                    "Runs `claude auth login` in a terminal (a Claude subscription or Console account)",
                  args: ["--login"],
                },
              ]
            : [
                {
                  id: AUTH_METHODS.login,
                  name: "Log in to Claude",
                  description: "Starts `claude auth login`; open the address it gives in a browser",
                },
              ]),
          {
            id: AUTH_METHODS.apiKey,
            name: "Anthropic API key",
            description: "Set ANTHROPIC_API_KEY in the agent's environment (the editor's agent settings)",
          },
          {
            id: AUTH_METHODS.gateway,
            name: "Gateway or proxy account",
            description:
              "Set ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN in the agent's environment, or run it with --account <id>",
          },
        ],
      }
    })
    .onRequest("authenticate", async ({ params }) => {
      if (params.methodId === AUTH_METHODS.login) {
        const started = await call("authenticate", () => host.call(agentId, "signIn"))
        log(`claude auth login: ${started.message}${started.url ? ` ${started.url}` : ""}`)
        info = undefined
        return {
          _meta: { claudeCode: { message: started.message, ...(started.url && { url: started.url }) } },
        }
      }
      if (params.methodId === AUTH_METHODS.apiKey || params.methodId === AUTH_METHODS.gateway) {
        info = undefined
        const current = await agentInfo()
        if (current.status !== "Ready")
          throw acp.RequestError.authRequired(
            {},
            params.methodId === AUTH_METHODS.apiKey
              ? "No usable ANTHROPIC_API_KEY in the agent's environment"
              : "No gateway (ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN) in the agent's environment",
          )
        return {}
      }
      throw acp.RequestError.invalidParams(
        { methodId: params.methodId },
        `unknown auth method ${params.methodId}`,
      )
    })
    .onRequest("logout", async () => {
      await call("logout", () => host.call(agentId, "signOut"))
      info = undefined
      known = undefined
      return {}
    })
    .onRequest("session/new", async ({ params }) => {
      const cwd = workspace(params.cwd)
      const sessionId = randomUUID()
      // The session's CLI starts alongside the catalog probe (both take a CLI start).
      const session = serve("session/new", sessionId, cwd, params.mcpServers, () =>
        host.call(agentId, "createSession", { cwd, sessionId }),
      )
      const state = await answer(session).catch(async (error: unknown) => {
        await closeSession(sessionId)
        throw error
      })
      return { sessionId, ...state }
    })
    .onRequest("session/load", async ({ params }) => {
      const cwd = workspace(params.cwd)
      const sessionId = params.sessionId
      await closeSession(sessionId)
      const t0 = performance.now()
      const transcript = await call("session/load", () =>
        host.call(agentId, "readSession", { sessionId, cwd }),
      )
      const t1 = performance.now()
      const replaying = new AcpSession(sessionId, cwd, {}, send(sessionId), log)
      let n = 0
      for (const update of replayUpdates(replaying.updates, transcript.items)) {
        // Backpressure: a long chat is written as it is walked.
        if (++n % 64 === 0) await replaying.notify(update)
        else void replaying.notify(update)
      }
      await replaying.flushed()
      if (options.debug)
        log(
          `session/load: read_session ${Math.round(t1 - t0)} ms (${transcript.items.length} items), ${n} updates mapped and written ${Math.round(performance.now() - t1)} ms`,
        )
      const session = serve(
        "session/load",
        sessionId,
        cwd,
        params.mcpServers,
        () => host.call(agentId, "resumeSession", { sessionId, cwd }),
        replaying.updates,
      )
      // The replay did not need the catalog: the probe ran meanwhile.
      return answer(session).catch(async (error: unknown) => {
        await closeSession(sessionId)
        throw error
      })
    })
    .onRequest("session/resume", async ({ params }) => {
      const cwd = workspace(params.cwd)
      const sessionId = params.sessionId
      const live = sessions.get(sessionId)
      if (live) return stateOf(live, await ready())
      if (info || !known) await ready()
      const session = serve("session/resume", sessionId, cwd, params.mcpServers, () =>
        host.call(agentId, "resumeSession", { sessionId, cwd }),
      )
      return answer(session)
    })
    .onRequest("session/fork", async ({ params }) => {
      if (info || !known) await ready()
      const cwd = workspace(params.cwd)
      const origin = params.sessionId
      const newSessionId = randomUUID()
      const waitOrigin = sessions.get(origin)?.ready.catch(() => {})
      const session = serve("session/fork", newSessionId, cwd, params.mcpServers, async () => {
        await waitOrigin
        return host.call(agentId, "forkSession", { sessionId: origin, newSessionId, cwd })
      })
      return { sessionId: newSessionId, ...(await answer(session)) }
    })
    .onRequest("session/list", async ({ params }) => {
      const cwd = params.cwd ?? undefined
      if (cwd !== undefined && !isAbsolute(cwd))
        throw acp.RequestError.invalidParams({ cwd }, "cwd must be an absolute path")
      const page = await call("session/list", () =>
        host.call(agentId, "listSessions", {
          ...(cwd !== undefined && { cwd }),
          ...(params.cursor ? { cursor: params.cursor } : {}),
        }),
      )
      return {
        sessions: page.sessions.flatMap((s) => {
          const where = s.cwd ?? cwd
          return where === undefined
            ? []
            : [{ sessionId: s.session_id, cwd: where, title: s.title, updatedAt: s.modified_at }]
        }),
        ...(page.cursor !== undefined && { nextCursor: page.cursor }),
      }
    })
    .onRequest("session/close", async ({ params }) => {
      need(params.sessionId)
      await closeSession(params.sessionId)
      return {}
    })
    .onRequest("session/set_mode", async ({ params }) => {
      const session = need(params.sessionId)
      await session.ready
      const current = await agentInfo()
      const checked = checkValue(current, session.values, APPROVAL_OPTION, params.modeId)
      if ("error" in checked) throw acp.RequestError.invalidParams({ modeId: params.modeId }, checked.error)
      await call("session/set_mode", () =>
        host.call(agentId, "setOption", {
          sessionId: session.id,
          optionId: APPROVAL_OPTION,
          value: params.modeId,
        }),
      )
      const changed = session.values[APPROVAL_OPTION] !== params.modeId
      session.values = { ...session.values, [APPROVAL_OPTION]: params.modeId }
      if (changed) void session.notify({ sessionUpdate: "current_mode_update", currentModeId: params.modeId })
      return {}
    })
    .onRequest("session/set_config_option", async ({ params }) => {
      const session = need(params.sessionId)
      await session.ready
      let current = await agentInfo()
      if (params.configId === APPROVAL_OPTION)
        throw acp.RequestError.invalidParams(
          { configId: params.configId },
          "the approval mode is set with session/set_mode",
        )
      let checked = checkValue(current, session.values, params.configId, params.value)
      // The agent's info may predate the session's start, whose CLI fills the catalog (its models
      // replace the plugin's built-in list): a value refused by it is checked once more, freshly asked.
      if ("error" in checked && current === info) {
        info = undefined
        current = await agentInfo()
        checked = checkValue(current, session.values, params.configId, params.value)
      }
      if ("error" in checked)
        throw acp.RequestError.invalidParams(
          { configId: params.configId, value: params.value },
          checked.error,
        )
      const value = checked.value
      await call("session/set_config_option", () =>
        host.call(agentId, "setOption", { sessionId: session.id, optionId: params.configId, value }),
      )
      session.values = { ...session.values, [params.configId]: value }
      return { configOptions: configFor(session, current) }
    })
    .onRequest("session/prompt", async ({ params }) => {
      const session = need(params.sessionId)
      await session.ready
      let parts: ReturnType<typeof promptParts>
      try {
        parts = promptParts(params.prompt, session.skills)
      } catch (error) {
        if (error instanceof PromptRefused) throw acp.RequestError.invalidParams({}, error.message)
        throw error
      }
      if (parts.text.trim() === "" && parts.images.length === 0 && parts.skill === undefined)
        throw acp.RequestError.invalidParams({}, "the prompt is empty")
      const deliveryId = randomUUID()
      auto?.sent(session.id)
      const accepted = await call(CLIENT_ERROR, () =>
        host.call(agentId, "prompt", {
          sessionId: session.id,
          deliveryId,
          text: parts.text,
          ...(parts.images.length > 0 && { images: parts.images }),
          ...(parts.skill !== undefined && { skill: parts.skill }),
        }),
      )
      const end = await session.waitRun(accepted.run_id, deliveryId)
      await session.flushed()
      if (end.kind === "ended" && end.outcome === "Failed" && !end.cancelled)
        throw acp.RequestError.internalError(
          { error: end.event.error },
          end.event.error ? `The run failed: ${end.event.error}` : "The run failed",
        )
      const usage = end.kind === "ended" ? end.event.usage : undefined
      return {
        stopReason: stopReasonOf(end),
        // What names this prompt in `_meta.claudeCode.inputDelivery` (updates.ts).
        _meta: { claudeCode: { deliveryId, ...(accepted.input_uuid && { inputUuid: accepted.input_uuid }) } },
        ...(usage && {
          usage: {
            inputTokens: usage.input_tokens,
            outputTokens: usage.output_tokens,
            totalTokens:
              usage.input_tokens +
              usage.output_tokens +
              (usage.cache_read_tokens ?? 0) +
              (usage.cache_write_tokens ?? 0),
            ...(usage.thinking_tokens !== undefined && { thoughtTokens: usage.thinking_tokens }),
            ...(usage.cache_read_tokens !== undefined && { cachedReadTokens: usage.cache_read_tokens }),
            ...(usage.cache_write_tokens !== undefined && { cachedWriteTokens: usage.cache_write_tokens }),
          },
        }),
      }
    })
    .onNotification("session/cancel", async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (!session) return
      session.cancel(graceMs)
      await host
        .call(agentId, "cancel", { sessionId: session.id })
        .catch((e: unknown) => log(`cancel: ${String(e)}`))
    })
  return { app, closeSessions }
}

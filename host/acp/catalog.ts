/**
 * The agent's catalog as the ACP side follows it: the info the provider's
 * `initialize` answers (its options, models, status), probed once and again
 * after the host says it changed, and what each session's client was told
 * of it.
 *
 * Rules kept:
 * - No answer waits for a CLI start when it need not: `session/new` and
 *   `session/load` answer from the catalog last seen (`knownInfo`: main.ts
 *   gives the one kept in the data folder, or at a first start the plugin's
 *   built-in one) while the probe runs; when the probe's catalog differs,
 *   the session's `config_option_update` follows. What needs the catalog
 *   (prompts, mode and option changes) waits for the probe, and a probe that
 *   finds the account signed out fails them with auth_required.
 * - With no catalog to answer from the probe starts at once (the first
 *   answer needs it); with one, it starts when something first needs it, so
 *   a `session/load` reads and replays its chat before the probe's CLIs
 *   compete for the same cores.
 */
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { AgentInfo } from "../../sdk/protocol.ts"
import { type AcpContext, AUTH_METHODS, messageOf } from "./context.ts"
import { APPROVAL_OPTION, configOptionsOf, defaultsOf, modesOf } from "./options.ts"
import type { AcpSession } from "./session.ts"
import { SIGN_IN_ADVICE } from "./sign-in.ts"

export interface Catalog {
  /** The info, probing when none is live (one probe at a time). */
  readonly info: () => Promise<AgentInfo>
  /** The info live now (undefined before the first probe, or after a change). */
  readonly live: () => AgentInfo | undefined
  /** The live info, else the one last seen while Ready. */
  readonly current: () => AgentInfo | undefined
  /** The info, failing with auth_required or an internal error when it is not Ready. */
  readonly ready: () => Promise<AgentInfo>
  /** Forget the live info (the host said it changed, a sign-in began). */
  readonly forget: () => void
  /** Forget the info last seen too (a sign-out). */
  readonly signedOut: () => void
  /** A session's modes and config options, the agent's defaults under its values. */
  readonly stateOf: (session: AcpSession, info: AgentInfo) => SessionState
  /** Answer with the live catalog, else the one last seen (then follow the probe), else wait for the probe. */
  readonly answer: (session: AcpSession) => Promise<SessionState>
  /** The config options to answer with, remembered as what the client was told. */
  readonly configFor: (session: AcpSession, info: AgentInfo) => acp.SessionConfigOption[]
  /** The provider's option values changed: tell the client the mode and config it now has. */
  readonly optionsChanged: (
    session: AcpSession,
    values: Readonly<Record<string, string | boolean>> | undefined,
  ) => Promise<void>
  /** A session's own start, without the probe its `ready` also waits for. */
  readonly startOf: (session: AcpSession) => Promise<void>
}

export interface SessionState {
  readonly modes: acp.SessionModeState | null
  readonly configOptions: acp.SessionConfigOption[]
}

export const makeCatalog = (ctx: AcpContext): Catalog => {
  const { options, agentId, host, log } = ctx
  /**
   * The catalog `session/new` may answer from before the probe ends: the
   * info last probed (this process's latest, else the kept one), only while
   * it says Ready; forgotten at sign-out.
   */
  let known = options.knownInfo?.status === "Ready" ? options.knownInfo : undefined
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
  // finds it done; with a catalog last seen, the first answer that follows the probe starts it.
  if (known === undefined) agentInfo().catch((error: unknown) => log(`initialize: ${String(error)}`))

  const ready = async () => {
    const current = await agentInfo()
    if (current.status === "AuthRequired")
      // The one advice (sign-in.ts); the account's own words (which config folder) go in the data.
      throw acp.RequestError.authRequired(
        {
          authMethods: Object.values(AUTH_METHODS),
          ...(current.statusMessage !== undefined && { detail: current.statusMessage }),
        },
        `Not signed in to Claude Code. ${SIGN_IN_ADVICE}.`,
      )
    if (current.status === "Unavailable")
      throw acp.RequestError.internalError({}, current.statusMessage ?? "Claude Code cannot be run")
    return current
  }

  /** The config options each session's client was last told (its answer, or the last update). */
  const toldConfig = new WeakMap<AcpSession, string>()
  const configFor = (session: AcpSession, current: AgentInfo) => {
    const booleans = ctx.connection.caps().session?.configOptions?.boolean != null
    const configOptions = configOptionsOf(current, session.values, booleans)
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

  const optionsChanged: Catalog["optionsChanged"] = async (session, values) => {
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

  const stateOf = (session: AcpSession, current: AgentInfo): SessionState => {
    session.values = { ...defaultsOf(current), ...session.values }
    return { modes: modesOf(current, session.values), configOptions: configFor(session, current) }
  }

  /** A session's own start, where its `ready` also waits for the probe. */
  const starts = new WeakMap<AcpSession, Promise<void>>()
  /**
   * A session answered from the catalog last seen: what needs the catalog
   * waits for the probe (a refusal, such as signed out, fails it then), and
   * the client hears of the live catalog's options when they differ.
   */
  const followProbe = (session: AcpSession) => {
    const probe = ready()
    probe.then(
      (live) => tellConfig(session, live),
      (error: unknown) =>
        void session.notify({
          sessionUpdate: "agent_message_chunk",
          content: { type: "text", text: `> ✗ ${messageOf(error)}\n\n` },
        }),
    )
    const start = session.ready
    starts.set(session, start)
    session.ready = Promise.all([start, probe]).then(() => undefined)
    session.ready.catch(() => {})
  }

  const answer = async (session: AcpSession) => {
    const now = info ?? known
    if (now === undefined || now === info) return stateOf(session, await ready())
    const state = stateOf(session, now)
    followProbe(session)
    return state
  }

  return {
    info: agentInfo,
    live: () => info,
    current: () => info ?? known,
    ready,
    forget: () => {
      info = undefined
    },
    signedOut: () => {
      info = undefined
      known = undefined
    },
    stateOf,
    answer,
    configFor,
    optionsChanged,
    startOf: (session) => starts.get(session) ?? session.ready,
  }
}

/**
 * What the parts of one account's agent share (agent.ts builds it; the
 * method groups in agent/ take it): the account, its catalog, its open
 * sessions and the few operations on them, and the session's info as the
 * host sees it.
 */
import type { Effect, Scope } from "effect"
import type { AgentCatalog } from "./catalog.ts"
import type { CliDetector } from "../cli-version.ts"
import type { SessionError, SessionNotFound } from "../errors.ts"
import type { Account } from "../instances.ts"
import { cliModeFor, optionsRecord, type SessionOptions } from "../options.ts"
import type { Broker, PluginApi } from "../sdk/plugin-api.ts"
import type {
  AgentEvent,
  AgentFailure,
  AgentHost,
  PluginTool,
  SessionInfoPayload,
  SessionLaunch,
  SessionOpened,
  SkillInfo,
} from "../sdk/protocol.ts"
import type { LiveSession } from "../session.ts"
import type { StartMode } from "../types.ts"

export interface AgentIdentity {
  /** The agent id (`claude`, `claude:<account id>`). */
  readonly id: string
  readonly name: string
  readonly account?: Account
}

/** A session this agent holds open: its live process and what the host chose for it. */
export interface OpenSession {
  readonly live: LiveSession
  readonly scope: Scope.Closeable
  readonly cwd: string
  /** The host's plugin tools and instructions every launch declares (a resume may change them). */
  tools: ReadonlyArray<PluginTool>
  instructions: string | undefined
  options: SessionOptions
  /** Host item id → the native UUID it was sent with (this process's lifetime). */
  readonly sentUuids: Map<string, string>
  skills: ReadonlyArray<SkillInfo> | undefined
  /**
   * Rewound to a point by this process since its last restart: the CLI's file
   * then names the abandoned branch as its leaf until the process exits.
   */
  rewound?: boolean
}

export interface OpenParams {
  readonly hostId: string
  readonly cwd: string
  readonly tools?: ReadonlyArray<PluginTool> | undefined
  readonly instructions?: string | undefined
  readonly options: SessionOptions
  readonly start: StartMode
  /** The front end's launch settings for this session (session/launch.ts). */
  readonly launch?: SessionLaunch | undefined
}

export interface AgentContext {
  readonly api: PluginApi
  readonly host: AgentHost
  readonly identity: AgentIdentity
  readonly acct: Account
  /** The agent's scope: sessions, probes and sign-in processes live in it. */
  readonly scope: Scope.Closeable
  readonly catalog: AgentCatalog
  /** The CLI's version and what it accepts, learned once per binary. */
  readonly cli: CliDetector
  readonly sessions: Map<string, OpenSession>
  /** Run with the broker, failing as the protocol's one-line AgentFailure. */
  readonly call: <A, E, R extends Broker>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, AgentFailure>
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  readonly lookup: (sessionId: string) => Effect.Effect<OpenSession, SessionNotFound>
  /** Open a session (closing one already open under its id) and start its process. */
  readonly openSession: (params: OpenParams) => Effect.Effect<OpenSession, SessionError, Broker>
  readonly closeOpen: (hostId: string, open: OpenSession) => Effect.Effect<void>
  /** Run an open of `hostId` (create, resume, fork) marked from its first step, so a close can overtake it. */
  readonly asOpening: <A, E, R>(hostId: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** A close for a session still being opened: its open fails and leaves no process. */
  readonly closeOpening: (hostId: string) => void
  /** Warn when ultracode was asked for and the model cannot apply it. */
  readonly checkUltracode: (open: OpenSession) => Effect.Effect<void, never, Broker>
  /** Dynamic workflows (and so ultracode) on in this workspace's merged settings. */
  readonly workflowsOn: (cwd: string) => Effect.Effect<boolean, never, Broker>
}

export const sessionInfo = (open: { cwd: string; options: SessionOptions }): SessionInfoPayload => ({
  cwd: open.cwd,
  ...(open.options.model ? { model: open.options.model } : {}),
  permission_mode: cliModeFor(open.options),
  options: optionsRecord(open.options),
})

export const opened = (hostId: string, open: OpenSession): SessionOpened => ({
  session_id: hostId,
  info: sessionInfo(open),
})

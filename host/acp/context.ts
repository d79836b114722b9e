/**
 * What every part of the ACP agent shares: the options it was made with, the
 * host's calls, and the connection's client. The parts (catalog.ts,
 * sessions.ts and the method groups) take this record instead of closing
 * over one another.
 */
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { AutoContinueMode } from "../core/auto-continue.ts"
import type { Host } from "../core/host.ts"
import type { AgentInfo } from "../../sdk/protocol.ts"

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
  /**
   * How to start this agent again (its Node and entry): the sign-in a client
   * without `auth.terminal` runs through legacy `_meta["terminal-auth"]`
   * (this command with `--login`).
   */
  readonly selfCommand?: { readonly command: string; readonly args: ReadonlyArray<string> }
}

/** Authentication methods: the terminal login, and an API key or gateway in the agent's environment. */
export const AUTH_METHODS = {
  login: "claude-login",
  apiKey: "anthropic-api-key",
  gateway: "gateway",
} as const

/** The host's one call, usable before the host has started (each call waits for it). */
export interface HostCalls {
  readonly call: Host["call"]
}

/** The connection as the parts see it. */
export interface Connection {
  readonly client: () => acp.AgentContext | undefined
  readonly caps: () => acp.ClientCapabilities
}

export interface AcpContext {
  readonly options: AcpAgentOptions
  readonly agentId: string
  readonly host: HostCalls
  readonly log: (message: string) => void
  readonly connection: Connection
}

/** Run a host call, turning its failure into the JSON-RPC error a client reads. */
export const call = async <A>(what: string, run: () => Promise<A>): Promise<A> => {
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

/** The text of an error, for a chat line or a log. */
export const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * What this agent can do, the same for every account: declared in every
 * `AgentInfo` it gives (agent/account.ts's `initialize`), and in the info a
 * front end answers from before its first probe (host/acp/built-in-info.ts).
 */
import type { AgentInfo } from "../sdk/protocol.ts"

export const CAPABILITIES: AgentInfo["capabilities"] = {
  rollback: true,
  fork: true,
  cancelTask: true,
  steering: true,
  images: true,
}

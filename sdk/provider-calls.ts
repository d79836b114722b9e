/**
 * The names of an AgentProvider's calls (sdk/protocol.ts): every method a
 * host routes to a provider, in the interface's order. `id` and `dispose`
 * are not calls. Kept beside the interface's type so the host's routing
 * (host/plugin-process/parent.ts) and the test fixtures list the same ones.
 */
import type { AgentProvider } from "./protocol.ts"

export const AGENT_PROVIDER_CALLS = [
  "initialize",
  "createSession",
  "resumeSession",
  "forkSession",
  "readSession",
  "listSessions",
  "closeSession",
  "deleteSession",
  "prompt",
  "cancel",
  "cancelTask",
  "setOption",
  "rollback",
  "answerApproval",
  "answerQuestion",
  "getUsage",
  "signIn",
  "signOut",
  "update",
] as const satisfies ReadonlyArray<Exclude<keyof AgentProvider, "id" | "dispose">>

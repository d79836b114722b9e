/**
 * ClaudeAgent: every agent method for one account. The live-session parts
 * (session.ts), history (history.ts), accounts and options are filled in by
 * their own files; this skeleton answers `initialize` so host → plugin →
 * agent runs end to end.
 */
import { Effect } from "effect"
import type { PluginApi } from "./sdk/plugin-api.ts"
import type { AgentFailure, AgentHost, AgentInfo, AgentProvider } from "./sdk/protocol.ts"

export interface AgentIdentity {
  readonly id: string
  readonly name: string
}

const notYet = (method: string): Effect.Effect<never, AgentFailure> =>
  Effect.fail({ _tag: "NotImplemented", message: `${method} is not implemented yet` })

export const makeClaudeAgent = (
  _api: PluginApi,
  _host: AgentHost,
  identity: AgentIdentity,
): AgentProvider => ({
  id: identity.id,
  initialize: () =>
    Effect.succeed<AgentInfo>({
      id: identity.id,
      name: identity.name,
      status: "Ready",
      models: [],
      options: [],
      capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
    }),
  createSession: () => notYet("create_session"),
  resumeSession: () => notYet("resume_session"),
  forkSession: () => notYet("fork_session"),
  readSession: () => notYet("read_session"),
  listSessions: () => notYet("list_sessions"),
  closeSession: () => Effect.void,
  prompt: () => notYet("prompt"),
  cancel: () => Effect.void,
  cancelTask: () => notYet("cancel_task"),
  setOption: () => notYet("set_option"),
  rollback: () => notYet("rollback"),
  answerApproval: () => notYet("answer_approval"),
  answerQuestion: () => notYet("answer_question"),
  getUsage: () => notYet("get_usage"),
  signIn: () => notYet("sign_in"),
  signOut: () => notYet("sign_out"),
  update: () => notYet("update"),
  dispose: () => Effect.void,
})

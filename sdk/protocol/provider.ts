/** The provider a plugin registers and the host it reports to. */
import type { Effect } from "effect"
import type { AgentEvent } from "./events.ts"
import type { AgentInfo, UsageLimits } from "./info.ts"
import type {
  ApprovalAnswer,
  CreateSessionParams,
  ForkSessionParams,
  ListSessionsParams,
  PromptAccepted,
  PromptParams,
  QuestionAnswer,
  ResumeSessionParams,
  SessionOpened,
  SessionPage,
} from "./methods.ts"
import type { SessionTranscript } from "./shapes.ts"

/** A protocol error a host shows to the user: one clear line. */
export interface AgentFailure {
  readonly _tag: string
  readonly message: string
}

type Call<A> = Effect.Effect<A, AgentFailure>

/** What a plugin registers for each agent it serves. */
export interface AgentProvider {
  readonly id: string
  initialize(): Call<AgentInfo>
  createSession(params: CreateSessionParams): Call<SessionOpened>
  resumeSession(params: ResumeSessionParams): Call<SessionOpened>
  forkSession(params: ForkSessionParams): Call<SessionOpened>
  readSession(params: { readonly sessionId: string; readonly cwd: string }): Call<SessionTranscript>
  listSessions(params: ListSessionsParams): Call<SessionPage>
  closeSession(params: { readonly sessionId: string }): Call<void>
  /** Delete a stored chat: gone from every list and refused on load; SessionNotFound for an unknown id. */
  deleteSession(params: { readonly sessionId: string }): Call<void>
  prompt(params: PromptParams): Call<PromptAccepted>
  cancel(params: { readonly sessionId: string }): Call<void>
  cancelTask(params: { readonly sessionId: string; readonly taskId: string }): Call<void>
  setOption(params: {
    readonly sessionId: string
    readonly optionId: string
    readonly value: string | boolean
  }): Call<void>
  /** Rewind the conversation to just before the given item. */
  rollback(params: { readonly sessionId: string; readonly itemId: string }): Call<void>
  answerApproval(params: ApprovalAnswer): Call<void>
  answerQuestion(params: QuestionAnswer): Call<void>
  getUsage(): Call<UsageLimits>
  signIn(): Call<{ readonly url?: string; readonly message: string }>
  signOut(): Call<void>
  update(): Call<{ readonly version?: string; readonly message: string }>
  /** Release every process and listener. */
  dispose(): Effect.Effect<void>
}

/** What the host gives a provider: its event sink. */
export interface AgentHost {
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  /** Tell the host that this agent's info changed (status, limits, skills). */
  readonly infoChanged: (agentId: string) => Effect.Effect<void>
}

/**
 * ClaudeAgent: one account's agent, the composition root of its parts. It
 * holds the account's live sessions (session.ts, one `claude` process each)
 * and its catalog (agent/catalog.ts: the probe's `initialize` answer and
 * `get_usage`), opens sessions (agent/open-session.ts: the launch the
 * options and knobs ask for) and serves the provider methods from their
 * groups in agent/:
 * conversations (create, resume, fork, read, list, close, rollback), runs
 * (prompt, cancel, answers, live options) and the account (info, usage,
 * sign-in, update).
 */
import { type Context, Effect, Exit, Scope } from "effect"
import { accountMethods } from "./agent/account.ts"
import type { AgentContext, AgentIdentity, OpenSession } from "./agent/context.ts"
import { conversationMethods } from "./agent/conversations.ts"
import { withDeletes } from "./agent/deleted.ts"
import { withLaunches } from "./agent/launches.ts"
import { makeSessionOpener } from "./agent/open-session.ts"
import { runMethods } from "./agent/runs.ts"
import {
  checkUltracode as checkUltracodeOf,
  refreshSkills as refreshSkillsOf,
  workflowsOnIn,
} from "./agent/session-checks.ts"
import { makeCatalog } from "./agent/catalog.ts"
import { type CliTable, makeCliDetector } from "./cli-version.ts"
import { readLaunchKnobsLogged } from "./config.ts"
import { SessionNotFound, toFailure } from "./errors.ts"
import type { Account } from "./instances.ts"
import { makeRecovery } from "./agent/recovery.ts"
import { brokerContext } from "./sdk/context.ts"
import type { Broker, PluginApi } from "./sdk/plugin-api.ts"
import type { AgentEvent, AgentFailure, AgentHost, AgentProvider, SessionLaunch } from "./sdk/protocol.ts"
import type { SessionTimeouts } from "./session.ts"
import { decodeLine } from "./wire.ts"

export type { AgentIdentity } from "./agent/context.ts"

/** Test seams: shorter timeouts for FakePeer tests; another capability table. */
export interface AgentTuning {
  readonly timeouts?: Partial<SessionTimeouts>
  readonly cliTable?: CliTable
}

/** What every call of the agent waits for first (main.ts: the Rust plugin's state read into storage). */
export type AgentReady = Effect.Effect<void>

const decode = decodeLine

/** Run with the broker once `ready` is done, failing as the protocol's one-line AgentFailure. */
const callWith =
  (services: Context.Context<Broker>, ready: AgentReady) =>
  <A, E, R extends Broker>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AgentFailure> =>
    Effect.andThen(
      ready,
      effect.pipe(Effect.mapError(toFailure), Effect.provideContext(services)) as Effect.Effect<
        A,
        AgentFailure
      >,
    )

export const makeClaudeAgent = (
  api: PluginApi,
  host: AgentHost,
  identity: AgentIdentity,
  tuning: AgentTuning = {},
  ready: AgentReady = Effect.void,
): AgentProvider => {
  const acct: Account = identity.account ?? { id: "claude", name: identity.name }
  const services = brokerContext(api)
  const agentScope = Scope.makeUnsafe()
  const sessions = new Map<string, OpenSession>()
  const launches = new Map<string, SessionLaunch>()
  const cli = makeCliDetector(tuning.cliTable) // version and flags, learned once per binary
  const catalog = makeCatalog({
    agentId: identity.id,
    api,
    account: acct,
    cli,
    scope: agentScope,
    decodeLine: decode,
    timeouts: tuning.timeouts,
    changed: host.infoChanged(identity.id),
    provide: (effect) => Effect.provideContext(effect, services),
  })
  const call = callWith(services, ready)

  const emit = (event: AgentEvent) => host.emit(event)
  const recovery = makeRecovery({
    account: acct,
    decodeLine: decode,
    knobs: readLaunchKnobsLogged,
    emit,
    provide: (effect) => Effect.provideContext(effect, services),
  })

  const lookup = (sessionId: string) =>
    Effect.suspend(() => {
      const open = sessions.get(sessionId)
      return open ? Effect.succeed(open) : Effect.fail(new SessionNotFound({ sessionId }))
    })

  const refreshSkills = (open: OpenSession, sessionId: string) =>
    refreshSkillsOf(acct, catalog, emit, open, sessionId)
  const checkUltracode = (open: OpenSession) => checkUltracodeOf(acct, open, cli)

  const { openSession, closeOpen, asOpening, closeOpening } = makeSessionOpener({
    acct,
    agentScope,
    sessions,
    launches,
    cli,
    catalog,
    recovery,
    emit,
    timeouts: tuning.timeouts,
    refreshSkills,
    checkUltracode,
  })

  const ctx: AgentContext = {
    api,
    host,
    identity,
    acct,
    scope: agentScope,
    catalog,
    cli,
    sessions,
    call,
    emit,
    lookup,
    openSession,
    closeOpen,
    asOpening,
    closeOpening,
    checkUltracode,
    workflowsOn: (cwd: string) => workflowsOnIn(acct, cwd),
  }

  return {
    id: identity.id,
    ...accountMethods(ctx),
    ...withLaunches(withDeletes(ctx, conversationMethods(ctx)), launches),
    ...runMethods(ctx),
    dispose: () =>
      Effect.gen(function* () {
        for (const [hostId, open] of [...sessions]) yield* closeOpen(hostId, open)
        yield* Scope.close(agentScope, Exit.void)
      }),
  }
}

/**
 * ClaudeAgent: one account's agent, the composition root of its parts. It
 * holds the account's live sessions (session.ts, one `claude` process each)
 * and its catalog (agent/catalog.ts: the probe's `initialize` answer and
 * `get_usage`), opens sessions with the launch the options and knobs ask
 * for, and serves the provider methods from their groups in agent/:
 * conversations (create, resume, fork, read, list, close, rollback), runs
 * (prompt, cancel, answers, live options) and the account (info, usage,
 * sign-in, update).
 */
import { type Context, Effect, Exit, Scope } from "effect"
import { accountMethods } from "./agent/account.ts"
import type { AgentContext, AgentIdentity, OpenParams, OpenSession } from "./agent/context.ts"
import { conversationMethods, recoveryFor, storedPromptFor } from "./agent/conversations.ts"
import { withDeletes } from "./agent/deleted.ts"
import { withLaunches } from "./agent/launches.ts"
import { runMethods } from "./agent/runs.ts"
import {
  checkThinking,
  checkUltracode as checkUltracodeOf,
  refreshSkills as refreshSkillsOf,
  workflowsOnIn,
} from "./agent/session-checks.ts"
import { makeCatalog } from "./agent/catalog.ts"
import { type CliDetector, type CliSupport, type CliTable, makeCliDetector } from "./cli-version.ts"
import { childEnvFor, knobFlags, type LaunchKnobs, readLaunchKnobsLogged } from "./config.ts"
import { LaunchFailed, SessionNotFound, type SessionError, toFailure } from "./errors.ts"
import type { Account } from "./instances.ts"
import { appendSystemPrompt, launchArgs, sessionLaunchFlags } from "./session/launch.ts"
import { makeRecovery } from "./agent/recovery.ts"
import { makeMapper } from "./map.ts"
import type { ClaudeModel } from "./models.ts"
import { launchFlags, refusedBypassFlag, type SessionOptions, withinWorkflowSwitch } from "./options.ts"
import { brokerContext } from "./sdk/context.ts"
import type { Broker, PluginApi } from "./sdk/plugin-api.ts"
import type { AgentEvent, AgentFailure, AgentHost, AgentProvider, SessionLaunch } from "./sdk/protocol.ts"
import { type LiveSession, makeOwnedSession, type SessionTimeouts } from "./session.ts"
import { reportUndelivered } from "./session/undelivered.ts"
import { promptWithSkill } from "./skills.ts"
import * as state from "./state.ts"
import { type TraceSessionParams, traceSession } from "./trace/session.ts"
import type { StartMode } from "./types.ts"
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

/** The options and knobs as the CLI's command line. */
const argsFor = (
  start: StartMode,
  params: OpenParams,
  options: SessionOptions,
  models: ReadonlyArray<ClaudeModel>,
  knobs: LaunchKnobs,
  allowBypass: boolean,
  cli: CliSupport,
) =>
  launchArgs({
    start,
    workspace: params.cwd,
    cli,
    optionFlags: [...launchFlags(options, models, allowBypass, cli), ...sessionLaunchFlags(params.launch)],
    knobFlags: knobFlags(knobs),
    addDirs: [...knobs.addDirs, ...(params.launch?.additionalDirectories ?? [])],
    extraArgs: knobs.extraArgs,
  })

/**
 * Agent Trace in front of one session's events (trace/session.ts): what the
 * session emits goes through `emit`; the CLI version its records name is the
 * one the process reports in its `initialize` answer, else (2.1.282 reports
 * none) the one `claude --version` printed.
 */
const tracedEmit = (
  { hostId: sessionId, cwd }: { readonly hostId: string; readonly cwd: string },
  options: () => SessionOptions,
  catalog: TraceSessionParams["catalog"],
  emit: (event: AgentEvent) => Effect.Effect<void>,
  detected: string | undefined,
) => {
  let cliVersion = detected
  return Effect.map(
    traceSession({ sessionId, cwd, options, catalog, cliVersion: () => cliVersion, emit }),
    (traced) => ({
      emit: traced,
      sawVersion: (version: string | null | undefined) => {
        cliVersion = version ?? cliVersion
      },
    }),
  )
}

/**
 * Start a session's process. A CLI that refuses the allow flag (root without
 * IS_SANDBOX) is started again without it, and so is every later launch.
 */
const startProcess = (open: OpenSession, bypass: { allowed: boolean }) =>
  open.live.ensureProcess.pipe(
    Effect.catchTag("ProcessExited", (exited) => {
      if (!bypass.allowed || !refusedBypassFlag(exited.stderr)) return Effect.fail(exited)
      bypass.allowed = false
      return open.live.ensureProcess.pipe(
        Effect.andThen(
          open.live.emitNotice(
            "info",
            "Full access is unavailable here: Claude Code refuses it as root unless IS_SANDBOX=1 is set; sessions start without it",
          ),
        ),
      )
    }),
  )

/**
 * How one session's process is launched, read afresh at every launch: its
 * command line (the options as they stand, inside the workspace's workflow
 * switch, less what this CLI lacks), the account's environment, the appended
 * prompt. A CLI older than the oldest supported one fails the launch.
 */
const launchFor =
  (
    acct: Account,
    params: OpenParams,
    models: () => ReadonlyArray<ClaudeModel>,
    bypass: { allowed: boolean },
    cli: CliDetector,
  ) =>
  (start: StartMode, open: OpenSession) =>
    Effect.gen(function* () {
      const support = yield* cli.detect
      if (support.unsupported) return yield* new LaunchFailed({ detail: support.unsupported })
      // Independent reads, each a broker round trip before the spawn: side by side.
      const [knobs, env, workflowsOn] = yield* Effect.all(
        [readLaunchKnobsLogged, childEnvFor(acct), workflowsOnIn(acct, params.cwd)],
        { concurrency: "unbounded" },
      )
      const options = withinWorkflowSwitch(open.options, workflowsOn)
      return {
        args: argsFor(start, params, options, models(), knobs, bypass.allowed, support),
        env,
        appendSystemPrompt: appendSystemPrompt(
          knobs.appendSystemPrompt,
          params.launch?.appendSystemPrompt,
          open.instructions,
        ),
      }
    })

/** The agent's record of one open session, built from its LiveSession. */
const openRecord =
  (params: OpenParams, scope: OpenSession["scope"]) =>
  (live: LiveSession): OpenSession => ({
    live,
    scope,
    cwd: params.cwd,
    tools: params.tools ?? [],
    instructions: params.instructions,
    options: params.options,
    sentUuids: new Map(),
    skills: undefined,
  })

/** What the CLI lacks (cli-version.ts), told once per session, not at every restart of its process. */
const cliNoticeOnce = (cli: CliDetector) => {
  const noticed = new Set<string>()
  return (hostId: string, open: OpenSession) =>
    Effect.gen(function* () {
      const notice = (yield* cli.detect).notice
      if (!notice || noticed.has(hostId)) return
      noticed.add(hostId)
      yield* open.live.emitNotice("warning", notice)
    })
}

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
  const noticeCli = cliNoticeOnce(cli)
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
  // The launch in openSession reads the models by name.
  const models = () => catalog.models()
  // Until a launch proves otherwise (root without IS_SANDBOX), every launch may switch to Full live.
  const bypass = { allowed: true }

  const call = callWith(services, ready)

  const emit = (event: AgentEvent) => host.emit(event)
  const recovery = makeRecovery({
    account: acct,
    decodeLine: decode,
    knobs: readLaunchKnobsLogged,
    emit,
    provide: (effect) => Effect.provideContext(effect, services),
  })

  /** Sessions being opened, each marked when a close comes first: the open then fails (close wins). */
  const opening = new Map<string, { closed: boolean }>()
  const closedWhileOpening = () =>
    new LaunchFailed({ detail: "the session was closed while Claude Code was starting" })

  const lookup = (sessionId: string) =>
    Effect.suspend(() => {
      const open = sessions.get(sessionId)
      return open ? Effect.succeed(open) : Effect.fail(new SessionNotFound({ sessionId }))
    })

  const refreshSkills = (open: OpenSession, sessionId: string) =>
    refreshSkillsOf(acct, catalog, emit, open, sessionId)
  const checkUltracode = (open: OpenSession) => checkUltracodeOf(acct, open, cli)

  /** Run `effect`, an open of `hostId`, marked from its first step on: a close before it ends makes it fail. */
  const asOpening = <A, E, R>(hostId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.suspend(() => {
      const mark = { closed: false }
      opening.set(hostId, mark)
      return effect.pipe(
        Effect.ensuring(
          Effect.sync(() => {
            if (opening.get(hostId) === mark) opening.delete(hostId)
          }),
        ),
      )
    })

  const openSession = (params: OpenParams): Effect.Effect<OpenSession, SessionError, Broker> =>
    Effect.gen(function* () {
      const scope = yield* Scope.fork(agentScope)
      const hostId = params.hostId
      const closed = () => opening.get(hostId)?.closed === true
      // The options as they stand (a live change included), read from the open session.
      const trace = yield* tracedEmit(
        params,
        () => sessions.get(hostId)?.options ?? params.options,
        models,
        emit,
        (yield* cli.detect).version?.text,
      ).pipe(Scope.provide(scope))
      // The session builds `open` from its LiveSession before it returns; every hook is handed it.
      const open = yield* makeOwnedSession<OpenSession>(
        {
          hostId,
          cwd: params.cwd,
          tools: params.tools ?? [],
          instructions: params.instructions,
          start: params.start,
          prepareLaunch: launchFor(acct, { ...params, launch: launches.get(hostId) }, models, bypass, cli),
          makeMapper: () =>
            makeMapper({
              sessionId: hostId,
              ...(params.options.model ? { model: params.options.model } : {}),
            }),
          decodeLine: decode,
          emit: recovery.sessionEmit(trace.emit, params.cwd, scope),
          promptContent: (prompt) => promptWithSkill(prompt.text, prompt.images, prompt.skill),
          hooks: {
            initialized: (answer) => {
              trace.sawVersion(answer.claude_code_version)
              recovery.launched(hostId, answer.account)
              return catalog.adopt(answer)
            },
            launched: (open) =>
              Effect.gen(function* () {
                yield* noticeCli(hostId, open)
                yield* refreshSkills(open, hostId)
                yield* checkUltracode(open)
                yield* checkThinking(open, models())
              }),
            sent: ({ itemId, uuid }, open) =>
              Effect.gen(function* () {
                if (!itemId) return
                open.sentUuids.set(itemId, uuid)
                yield* state.rememberSent(hostId, itemId, uuid)
              }),
            runEnded: (open) => refreshSkills(open, hostId),
            usageLimits: catalog.rememberLimits,
            recover: recoveryFor(acct, hostId, params.cwd),
            stored: storedPromptFor(acct, params.cwd),
          },
          ...(tuning.timeouts ? { timeouts: tuning.timeouts } : {}),
        },
        openRecord(params, scope),
      ).pipe(Scope.provide(scope))
      const previous = sessions.get(hostId)
      if (previous) yield* closeOpen(hostId, previous)
      yield* reportUndelivered(hostId, emit)
      // A close that came first wins: nothing is started (or what started is stopped).
      const closedFirst = Effect.suspend(() =>
        closed() ? Effect.andThen(closeOpen(hostId, open), Effect.fail(closedWhileOpening())) : Effect.void,
      )
      yield* closedFirst
      sessions.set(hostId, open)
      yield* startProcess(open, bypass).pipe(
        Effect.tapError(() => closeOpen(hostId, open)),
        Effect.mapError((error) => (closed() ? closedWhileOpening() : error)),
      )
      yield* closedFirst
      return open
    })

  const closeOpen = (hostId: string, open: OpenSession) =>
    Effect.gen(function* () {
      if (sessions.get(hostId) === open) sessions.delete(hostId)
      yield* open.live.close
      yield* Scope.close(open.scope, Exit.void)
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
    closeOpening: (hostId: string) => {
      const mark = opening.get(hostId)
      if (mark) mark.closed = true
    },
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

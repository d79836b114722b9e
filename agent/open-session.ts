/**
 * Opening one session for the agent: its launch (the options and knobs as
 * the CLI's command line, read afresh at every launch), Agent Trace in front
 * of its events, the hooks the session calls back, and its first process.
 * An open already under way for the same id loses to a close that comes
 * first: the open fails and leaves no process. A CLI that refuses the allow
 * flag (root without IS_SANDBOX) is started again without it, and so is
 * every later launch of the account.
 */
import { Effect, Exit, Scope } from "effect"
import type { CliDetector, CliSupport } from "../cli-version.ts"
import { childEnvFor, knobFlags, type LaunchKnobs, readLaunchKnobsLogged } from "../config.ts"
import { LaunchFailed, type SessionError } from "../errors.ts"
import type { Account } from "../instances.ts"
import { makeMapper } from "../map.ts"
import type { ClaudeModel } from "../models.ts"
import { launchFlags, refusedBypassFlag, type SessionOptions, withinWorkflowSwitch } from "../options.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentEvent, SessionLaunch } from "../sdk/protocol.ts"
import { type LiveSession, makeOwnedSession, type SessionTimeouts } from "../session.ts"
import { appendSystemPrompt, launchArgs, sessionLaunchFlags } from "../session/launch.ts"
import { reportUndelivered } from "../session/undelivered.ts"
import { promptWithSkill } from "../skills.ts"
import * as state from "../state.ts"
import { type TraceSessionParams, traceSession } from "../trace/session.ts"
import type { StartMode } from "../types.ts"
import { decodeLine as decode } from "../wire.ts"
import type { AgentCatalog } from "./catalog.ts"
import type { OpenParams, OpenSession } from "./context.ts"
import { recoveryFor, storedPromptFor } from "./conversations.ts"
import type { makeRecovery } from "./recovery.ts"
import { checkThinking, workflowsOnIn } from "./session-checks.ts"

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

/** What opening a session needs from the agent. */
export interface OpenerParts {
  readonly acct: Account
  /** The agent's scope: each session's scope is forked from it. */
  readonly agentScope: Scope.Closeable
  /** The open sessions by host id (the agent's own map). */
  readonly sessions: Map<string, OpenSession>
  /** The front end's launch settings by host id (agent/launches.ts). */
  readonly launches: ReadonlyMap<string, SessionLaunch>
  readonly cli: CliDetector
  readonly catalog: AgentCatalog
  readonly recovery: Pick<ReturnType<typeof makeRecovery>, "sessionEmit" | "launched">
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  readonly timeouts: Partial<SessionTimeouts> | undefined
  /** Re-read the session's skills (after a launch and each run). */
  readonly refreshSkills: (open: OpenSession, hostId: string) => Effect.Effect<void, never, Broker>
  /** Warn when ultracode was asked for and the model cannot apply it. */
  readonly checkUltracode: (open: OpenSession) => Effect.Effect<void, never, Broker>
}

/** The agent's opens and closes of sessions (agent/context.ts names each). */
export const makeSessionOpener = (parts: OpenerParts) => {
  const { acct, agentScope, sessions, launches, cli, catalog, recovery, emit, timeouts } = parts
  const noticeCli = cliNoticeOnce(cli)
  // The launch in openSession reads the models by name.
  const models = () => catalog.models()
  // Until a launch proves otherwise (root without IS_SANDBOX), every launch may switch to Full live.
  const bypass = { allowed: true }

  /** Sessions being opened, each marked when a close comes first: the open then fails (close wins). */
  const opening = new Map<string, { closed: boolean }>()
  const closedWhileOpening = () =>
    new LaunchFailed({ detail: "the session was closed while Claude Code was starting" })

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
                yield* parts.refreshSkills(open, hostId)
                yield* parts.checkUltracode(open)
                yield* checkThinking(open, models())
              }),
            sent: ({ itemId, uuid }, open) =>
              Effect.gen(function* () {
                if (!itemId) return
                open.sentUuids.set(itemId, uuid)
                yield* state.rememberSent(hostId, itemId, uuid)
              }),
            runEnded: (open) => parts.refreshSkills(open, hostId),
            usageLimits: catalog.rememberLimits,
            recover: recoveryFor(acct, hostId, params.cwd),
            stored: storedPromptFor(acct, params.cwd),
          },
          ...(timeouts ? { timeouts } : {}),
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

  return {
    openSession,
    closeOpen,
    asOpening,
    closeOpening: (hostId: string) => {
      const mark = opening.get(hostId)
      if (mark) mark.closed = true
    },
  }
}

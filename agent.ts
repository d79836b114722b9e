/**
 * ClaudeAgent: every agent method for one account. It owns the account's
 * live sessions (session.ts), its catalog (the probe's `initialize` answer
 * and `get_usage`), and wires the other files in: options and models for the
 * launch, history and session state for resume, rewind and fork, skills,
 * limits and the account's sign-in.
 */
import { Deferred, Effect, Exit, type Option, Scope } from "effect"
import * as account from "./account.ts"
import { type CliSupport, type CliTable, makeCliDetector } from "./cli-version.ts"
import {
  childEnvFor,
  configDirFor,
  continuationKey,
  type LaunchKnobs,
  readLaunchKnobsLogged,
  readMergedSettings,
} from "./config.ts"
import { LaunchFailed, RewindImpossible, SessionNotFound, type SessionError, toFailure } from "./errors.ts"
import * as history from "./history.ts"
import type { Account } from "./instances.ts"
import { appendSystemPrompt, launchArgs, PROTOCOL_ARGS } from "./launch.ts"
import { limitsFromGetUsage } from "./limits.ts"
import { makeMapper } from "./map.ts"
import { type ClaudeModel, modelCatalog } from "./models.ts"
import {
  agentOptions,
  applyOption,
  launchFlags,
  liveRequests,
  OPTION_IDS,
  optionsRecord,
  parseOptions,
  permissionModeFor,
  promptKeywords,
  type SessionOptions,
  ULTRACODE,
} from "./options.ts"
import { brokerContext } from "./sdk/context.ts"
import type { Broker, PluginApi } from "./sdk/plugin-api.ts"
import type {
  AgentEvent,
  AgentFailure,
  AgentHost,
  AgentInfo,
  AgentProvider,
  Maintenance,
  PluginTool,
  SessionInfoPayload,
  SessionOpened,
  SkillInfo,
  UsageLimits,
} from "./sdk/protocol.ts"
import { type Frame, type LiveSession, makeSession, type SessionTimeouts } from "./session.ts"
import { promptWithSkill, readSkills, skillsChanged } from "./skills.ts"
import * as state from "./state.ts"
import type { DecodedLine } from "./transport.ts"
import type { StartMode } from "./types.ts"
import { decodeLine, GetSettingsResponse, GetUsageResponse, InitializeResponse } from "./wire.ts"

export interface AgentIdentity {
  /** The agent id (`claude`, `claude:<account id>`). */
  readonly id: string
  readonly name: string
  readonly account?: Account
}

/** Test seams: shorter timeouts for FakePeer tests; another capability table. */
export interface AgentTuning {
  readonly timeouts?: Partial<SessionTimeouts>
  readonly cliTable?: CliTable
}

/** What the catalog probe learned: the CLI's own view of models, commands and account. */
interface Catalog {
  readonly models: ClaudeModel[]
  readonly initialize: InitializeResponse
  readonly usage?: UsageLimits
}

/** Where a rollback resumes (`resumeAt` absent: nothing is left) and the prompts it keeps. */
type RewindPoint =
  | { readonly resumeAt?: string; readonly kept: ReadonlySet<string> }
  | { readonly error: string }

interface OpenSession {
  readonly live: LiveSession
  readonly scope: Scope.Closeable
  readonly cwd: string
  readonly tools: ReadonlyArray<PluginTool>
  readonly instructions: string | undefined
  options: SessionOptions
  /** Host item id → the native UUID it was sent with (this process's lifetime). */
  readonly sentUuids: Map<string, string>
  skills: ReadonlyArray<SkillInfo> | undefined
}

const decode = (line: string) => decodeLine(line) as DecodedLine<Frame>

/** The options and knobs as the CLI's command line. */
const argsFor = (
  start: StartMode,
  cwd: string,
  options: SessionOptions,
  models: ReadonlyArray<ClaudeModel>,
  knobs: LaunchKnobs,
  cli: CliSupport,
) =>
  launchArgs({
    start,
    workspace: cwd,
    cli,
    optionFlags: launchFlags(options, models, cli),
    knobFlags: [
      ...knobs.mcpConfigs.flatMap((config) => ["--mcp-config", config]),
      ...(knobs.strictMcpConfig ? ["--strict-mcp-config"] : []),
      ...(knobs.settingSources !== undefined ? ["--setting-sources", knobs.settingSources] : []),
    ],
    addDirs: knobs.addDirs,
    extraArgs: knobs.extraArgs,
  })

export const makeClaudeAgent = (
  api: PluginApi,
  host: AgentHost,
  identity: AgentIdentity,
  tuning: AgentTuning = {},
): AgentProvider => {
  const acct: Account = identity.account ?? { id: "claude", name: identity.name }
  const services = brokerContext(api)
  const agentScope = Scope.makeUnsafe()
  const sessions = new Map<string, OpenSession>()
  let catalog: Catalog | undefined
  let probing: Deferred.Deferred<Catalog, SessionError> | undefined
  let lastLimits: UsageLimits | undefined
  let maintenanceInfo: Option.Option<Maintenance> | undefined
  // The CLI's version and what it accepts (cli-version.ts), learned once per binary.
  const cli = makeCliDetector(tuning.cliTable)
  const cliNoticed = new Set<string>()

  /** Run with the broker, failing as the protocol's one-line AgentFailure. */
  const call = <A, E, R extends Broker>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, AgentFailure> =>
    effect.pipe(Effect.mapError(toFailure), Effect.provideContext(services)) as Effect.Effect<A, AgentFailure>

  const emit = (event: AgentEvent) => host.emit(event)
  const models = () => catalog?.models ?? modelCatalog(undefined)

  const cliCommands = () =>
    (catalog?.initialize.commands ?? []).map((command) => ({
      name: command.name,
      ...(command.description ? { description: command.description } : {}),
    }))

  const lookup = (sessionId: string) =>
    Effect.suspend(() => {
      const open = sessions.get(sessionId)
      return open ? Effect.succeed(open) : Effect.fail(new SessionNotFound({ sessionId }))
    })

  const sessionInfo = (open: { cwd: string; options: SessionOptions }): SessionInfoPayload => ({
    cwd: open.cwd,
    ...(open.options.model ? { model: open.options.model } : {}),
    permission_mode: permissionModeFor(open.options.approval),
    options: optionsRecord(open.options),
  })

  // -- catalog probe ------------------------------------------------------------

  const rememberLimits = (limits: UsageLimits) =>
    Effect.gen(function* () {
      lastLimits = limits
      yield* host.infoChanged(identity.id)
    })

  /** A prompt-free, MCP-free launch: read `initialize`, ask `get_usage`, stop. */
  const probeOnce: Effect.Effect<Catalog, SessionError, Broker> = Effect.gen(function* () {
    const support = yield* cli.detect
    if (support.unsupported) return yield* Effect.fail(new LaunchFailed({ detail: support.unsupported }))
    const scope = yield* Scope.fork(agentScope)
    const cliId = crypto.randomUUID()
    let answer: InitializeResponse | undefined
    const env = yield* childEnvFor(acct)
    const fs = api.fs
    const live = yield* makeSession({
      hostId: `probe-${cliId}`,
      cwd: fs.paths.home,
      tools: [],
      start: { kind: "new", cliId },
      prepareLaunch: (start) =>
        Effect.succeed({
          args: [...PROTOCOL_ARGS, "--session-id", start.cliId, "--strict-mcp-config"],
          env,
        }),
      makeMapper: (id) => makeMapper({ sessionId: id }),
      decodeLine: decode,
      emit: () => Effect.void,
      hooks: {
        initialized: (response) =>
          Effect.sync(() => {
            const parsed = InitializeResponse.safeParse(response)
            answer = parsed.success ? parsed.data : {}
          }),
      },
      ...(tuning.timeouts ? { timeouts: tuning.timeouts } : {}),
    }).pipe(Scope.provide(scope))
    const result = yield* Effect.gen(function* () {
      yield* live.ensureProcess
      const usage = yield* live.request("get_usage").pipe(Effect.option)
      const parsedUsage =
        usage._tag === "Some" && usage.value ? GetUsageResponse.safeParse(usage.value) : undefined
      const initialize = answer ?? {}
      return {
        models: modelCatalog(initialize),
        initialize,
        ...(parsedUsage?.success ? { usage: limitsFromGetUsage(parsedUsage.data) } : {}),
      } satisfies Catalog
    }).pipe(Effect.ensuring(live.close.pipe(Effect.andThen(Scope.close(scope, Exit.void)))))
    return result
  })

  /** One probe at a time: concurrent callers share the one in flight. */
  const probe: Effect.Effect<Catalog, SessionError, Broker> = Effect.gen(function* () {
    if (probing) return yield* Deferred.await(probing)
    const mine = Deferred.makeUnsafe<Catalog, SessionError>()
    probing = mine
    const exit = yield* Effect.exit(probeOnce)
    probing = undefined
    if (Exit.isSuccess(exit)) {
      catalog = exit.value
      if (exit.value.usage) lastLimits = exit.value.usage
    }
    yield* Deferred.done(mine, exit)
    return yield* exit
  })

  /** Fill the catalog in the background; tell the host when it arrives. */
  const warmCatalog = Effect.gen(function* () {
    if (catalog || probing) return
    yield* probe.pipe(
      Effect.andThen(host.infoChanged(identity.id)),
      Effect.catchCause((cause) => api.log.warn(`${identity.id}: catalog probe failed`, String(cause))),
      Effect.provideContext(services),
      Effect.forkIn(agentScope),
    )
  })

  // -- sessions -----------------------------------------------------------------

  const refreshSkills = (open: OpenSession, sessionId: string) =>
    Effect.gen(function* () {
      const configDir = yield* configDirFor(acct)
      const skills = yield* readSkills(configDir, open.cwd, cliCommands())
      if (open.skills && !skillsChanged(open.skills, skills)) return
      open.skills = skills
      yield* emit({ type: "Skills", session_id: sessionId, skills })
    })

  /** Ultracode is accepted silently where it cannot apply: ask and warn. */
  const checkUltracode = (open: OpenSession) =>
    Effect.gen(function* () {
      // A CLI without ultracode was launched at xhigh and told so in the version notice.
      if (open.options.effort !== ULTRACODE || !(yield* cli.detect).has("ultracodeEffort")) return
      const answer = yield* open.live.request("get_settings").pipe(Effect.option)
      if (answer._tag === "None" || !answer.value) return
      const parsed = GetSettingsResponse.safeParse(answer.value)
      if (parsed.success && parsed.data.applied?.ultracode === false)
        yield* open.live.emitNotice(
          "warning",
          "Ultracode did not turn on for this model (it needs a model with extra high effort); the session runs without it",
        )
    })

  interface OpenParams {
    readonly hostId: string
    readonly cwd: string
    readonly tools?: ReadonlyArray<PluginTool> | undefined
    readonly instructions?: string | undefined
    readonly options: SessionOptions
    readonly start: StartMode
  }

  const openSession = (params: OpenParams): Effect.Effect<OpenSession, SessionError, Broker> =>
    Effect.gen(function* () {
      const scope = yield* Scope.fork(agentScope)
      const hostId = params.hostId
      // Filled below; the hooks only run once the session exists.
      let open: OpenSession | undefined
      const live = yield* makeSession({
        hostId,
        cwd: params.cwd,
        tools: params.tools ?? [],
        instructions: params.instructions,
        start: params.start,
        prepareLaunch: (start) =>
          Effect.gen(function* () {
            const knobs = yield* readLaunchKnobsLogged
            const env = yield* childEnvFor(acct)
            const options = open?.options ?? params.options
            const support = yield* cli.detect
            if (support.unsupported)
              return yield* Effect.fail(new LaunchFailed({ detail: support.unsupported }))
            return {
              args: argsFor(start, params.cwd, options, models(), knobs, support),
              env,
              appendSystemPrompt: appendSystemPrompt(knobs.appendSystemPrompt, params.instructions),
            }
          }),
        makeMapper: () =>
          makeMapper({ sessionId: hostId, ...(params.options.model ? { model: params.options.model } : {}) }),
        decodeLine: decode,
        emit,
        promptContent: (prompt) => promptWithSkill(prompt.text, prompt.images, prompt.skill),
        hooks: {
          initialized: (response) =>
            Effect.gen(function* () {
              if (catalog) return
              const parsed = InitializeResponse.safeParse(response)
              if (!parsed.success) return
              catalog = {
                models: modelCatalog(parsed.data),
                initialize: parsed.data,
                ...(lastLimits ? { usage: lastLimits } : {}),
              }
              yield* host.infoChanged(identity.id)
            }),
          launched: () =>
            Effect.gen(function* () {
              if (!open) return
              const notice = (yield* cli.detect).notice
              if (notice && !cliNoticed.has(hostId)) {
                cliNoticed.add(hostId)
                yield* open.live.emitNotice("warning", notice)
              }
              yield* refreshSkills(open, hostId)
              yield* checkUltracode(open)
            }),
          sent: ({ itemId, uuid }) =>
            Effect.gen(function* () {
              if (!open || !itemId) return
              open.sentUuids.set(itemId, uuid)
              yield* state.rememberSent(hostId, itemId, uuid)
            }),
          runEnded: () => (open ? refreshSkills(open, hostId) : Effect.void),
          usageLimits: (limits) => rememberLimits(limits),
        },
        ...(tuning.timeouts ? { timeouts: tuning.timeouts } : {}),
      }).pipe(Scope.provide(scope))
      open = {
        live,
        scope,
        cwd: params.cwd,
        tools: params.tools ?? [],
        instructions: params.instructions,
        options: params.options,
        sentUuids: new Map(),
        skills: undefined,
      }
      const previous = sessions.get(hostId)
      if (previous) yield* closeOpen(hostId, previous)
      sessions.set(hostId, open)
      yield* live.ensureProcess.pipe(Effect.tapError(() => closeOpen(hostId, open as OpenSession)))
      return open
    })

  const closeOpen = (hostId: string, open: OpenSession) =>
    Effect.gen(function* () {
      if (sessions.get(hostId) === open) sessions.delete(hostId)
      yield* open.live.close
      yield* Scope.close(open.scope, Exit.void)
    })

  const opened = (hostId: string, open: OpenSession): SessionOpened => ({
    session_id: hostId,
    info: sessionInfo(open),
  })

  const promptCountOf = (cliId: string, cwd: string) =>
    Effect.gen(function* () {
      const configDir = yield* configDirFor(acct)
      return yield* history.promptCount(configDir, cwd, cliId)
    })

  // -- the provider -------------------------------------------------------------

  const provider: AgentProvider = {
    id: identity.id,

    initialize: () =>
      call(
        Effect.gen(function* () {
          const support = yield* cli.detect
          const status = support.unsupported
            ? { status: "Unavailable" as const, message: support.unsupported }
            : yield* account.authStatus(acct)
          const configDir = yield* configDirFor(acct)
          const settings = yield* readMergedSettings(configDir)
          const skills = yield* readSkills(configDir, undefined, cliCommands())
          // `--version` and the owner's npm are asked once per agent (again after an update).
          maintenanceInfo ??= yield* account.maintenance().pipe(Effect.option)
          const maintenance = maintenanceInfo
          const list = models()
          if (status.status === "Ready") yield* warmCatalog
          return {
            id: identity.id,
            name: identity.name,
            status: status.status,
            ...(status.message ? { statusMessage: status.message } : {}),
            ...(status.description ? { description: status.description } : {}),
            ...(maintenance._tag === "Some" && maintenance.value.version
              ? { version: maintenance.value.version }
              : {}),
            continuationKey: yield* continuationKey(acct),
            ...(lastLimits ? { usageLimits: lastLimits } : {}),
            promptKeywords: promptKeywords(settings),
            models: list,
            options: agentOptions(list, settings, support),
            skills,
            ...(maintenance._tag === "Some" ? { maintenance: maintenance.value } : {}),
            capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
          } satisfies AgentInfo
        }),
      ),

    createSession: (params) =>
      call(
        Effect.gen(function* () {
          const hostId = params.sessionId ?? crypto.randomUUID()
          const stored = yield* state.loadSessionState(hostId)
          const cliId = stored.cli ?? hostId
          const open = yield* openSession({
            hostId,
            cwd: params.cwd,
            tools: params.tools,
            instructions: params.instructions,
            options: parseOptions(params.options),
            start: { kind: "new", cliId },
          })
          return opened(hostId, open)
        }),
      ),

    resumeSession: (params) =>
      call(
        Effect.gen(function* () {
          const hostId = params.sessionId
          // Already open and alive: keep its process (and any turn it is running).
          const existing = sessions.get(hostId)
          if (existing?.live.isRunning()) return opened(hostId, existing)
          const cliId = yield* state.cliIdFor(hostId)
          const count = yield* promptCountOf(cliId, params.cwd)
          const base = {
            hostId,
            cwd: params.cwd,
            tools: params.tools,
            instructions: params.instructions,
            options: parseOptions(params.options),
          }
          // A chat that never got a prompt has no file to resume: start it anew under its id.
          const open = yield* openSession({
            ...base,
            start: count > 0 ? { kind: "resume", cliId } : { kind: "new", cliId },
          }).pipe(
            Effect.catchTag("ProcessExited", (error) =>
              count > 0 ? Effect.fail(error) : openSession({ ...base, start: { kind: "resume", cliId } }),
            ),
          )
          return opened(hostId, open)
        }),
      ),

    forkSession: (params) =>
      call(
        Effect.gen(function* () {
          const origin = yield* state.cliIdFor(params.sessionId)
          const hostId = params.newSessionId ?? crypto.randomUUID()
          const originOpen = sessions.get(params.sessionId)
          // A fork is the same conversation taken elsewhere: it keeps the origin's options.
          const options = { ...(originOpen?.options ?? {}), ...parseOptions(params.options) }
          const open = yield* openSession({
            hostId,
            cwd: params.cwd,
            tools: params.tools,
            instructions: params.instructions,
            options,
            start: { kind: "fork", origin, cliId: hostId },
          })
          return opened(hostId, open)
        }),
      ),

    readSession: (params) =>
      call(
        Effect.gen(function* () {
          const configDir = yield* configDirFor(acct)
          const cliId = yield* state.cliIdFor(params.sessionId)
          const transcript = yield* history.readSession(configDir, params.cwd, cliId)
          if (!transcript) return yield* Effect.fail(new SessionNotFound({ sessionId: params.sessionId }))
          return { ...transcript, session_id: params.sessionId }
        }),
      ),

    listSessions: (params) =>
      call(
        Effect.gen(function* () {
          const configDir = yield* configDirFor(acct)
          return yield* history.listSessions(configDir, params)
        }),
      ),

    closeSession: ({ sessionId }) =>
      call(
        Effect.gen(function* () {
          const open = sessions.get(sessionId)
          if (open) yield* closeOpen(sessionId, open)
        }),
      ),

    prompt: (params) => call(Effect.flatMap(lookup(params.sessionId), (open) => open.live.prompt(params))),

    cancel: ({ sessionId }) => call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancel)),

    cancelTask: ({ sessionId, taskId }) =>
      call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancelTask(taskId))),

    setOption: ({ sessionId, optionId, value }) =>
      call(
        Effect.gen(function* () {
          const open = yield* lookup(sessionId)
          open.options = applyOption(open.options, optionId, value)
          const support = yield* cli.detect
          for (const { subtype, ...fields } of liveRequests(optionId, value, open.options, models(), support))
            yield* open.live.request(subtype, fields)
          if (optionId === OPTION_IDS.effort || optionId === OPTION_IDS.model) yield* checkUltracode(open)
          yield* emit({ type: "SessionInfo", session_id: sessionId, info: sessionInfo(open) })
        }),
      ),

    rollback: ({ sessionId, itemId }) =>
      call(
        Effect.gen(function* () {
          const open = yield* lookup(sessionId)
          const configDir = yield* configDirFor(acct)
          const cliId = open.live.cliId()
          const point = yield* rewindPoint(configDir, open.cwd, cliId, sessionId, open, itemId)
          if ("error" in point) return yield* Effect.fail(new RewindImpossible({ reason: point.error }))
          if (point.resumeAt !== undefined) {
            yield* open.live.restart({ kind: "resumeAt", cliId, at: point.resumeAt })
            yield* state.keepSent(sessionId, point.kept, point.kept.size)
          } else {
            // Nothing left: a new conversation, under an alias (the CLI refuses an id it has a file for).
            const fresh = crypto.randomUUID()
            yield* open.live.restart({ kind: "new", cliId: fresh })
            yield* state.setCliAlias(sessionId, fresh)
          }
          for (const [item, sentUuid] of [...open.sentUuids])
            if (!point.kept.has(sentUuid)) open.sentUuids.delete(item)
        }),
      ),

    answerApproval: (answer) =>
      call(Effect.flatMap(lookup(answer.sessionId), (open) => open.live.answerApproval(answer))),

    answerQuestion: (answer) =>
      call(Effect.flatMap(lookup(answer.sessionId), (open) => open.live.answerQuestion(answer))),

    getUsage: () =>
      call(
        Effect.gen(function* () {
          const fresh = yield* probe
          const limits = fresh.usage ??
            lastLimits ?? { windows: [], reset_credits: [], updated_at: new Date().toISOString() }
          if (fresh.usage) yield* rememberLimits(fresh.usage)
          return limits
        }),
      ),

    signIn: () =>
      call(
        Effect.gen(function* () {
          // The login process waits for the browser; it lives in the agent's scope.
          const started = yield* account.signIn(acct).pipe(Scope.provide(agentScope))
          yield* started.done.pipe(Effect.andThen(host.infoChanged(identity.id)), Effect.forkIn(agentScope))
          return { ...(started.url ? { url: started.url } : {}), message: started.message }
        }),
      ),
    signOut: () => call(account.signOut(acct).pipe(Effect.andThen(host.infoChanged(identity.id)))),
    update: () =>
      call(
        account.update().pipe(
          Effect.tap(() =>
            Effect.sync(() => {
              maintenanceInfo = undefined
              cli.forget()
            }),
          ),
        ),
      ),

    dispose: () =>
      Effect.gen(function* () {
        for (const [hostId, open] of [...sessions]) yield* closeOpen(hostId, open)
        yield* Scope.close(agentScope, Exit.void)
      }),
  }

  /**
   * Where rolling back to just before `itemId` resumes. The item is a prompt
   * this process sent (its native UUID), one stored in the session state (its
   * record uuid, or the prompt index older versions kept), or a user item of
   * `readSession` (its id is the record's uuid). It must be a prompt of the
   * conversation as it stands; the kept prompts are those before it.
   */
  const rewindPoint = (
    configDir: string,
    cwd: string,
    cliId: string,
    sessionId: string,
    open: OpenSession,
    itemId: string,
  ): Effect.Effect<RewindPoint, never, Broker> =>
    Effect.gen(function* () {
      const dir = yield* history.projectDir(configDir, cwd)
      const chain = yield* history.readChain(history.sessionFile(dir, cliId))
      const prompts = history.promptRecords(chain.records)
      const stored = yield* state.sentRecordOf(sessionId, itemId)
      const at =
        typeof stored === "number"
          ? stored < prompts.length
            ? stored
            : -1
          : prompts.findIndex((r) => r.uuid === (open.sentUuids.get(itemId) ?? stored ?? itemId))
      const target = prompts[at]
      if (target === undefined) return { error: `the message ${itemId} is not known to this chat` }
      const kept = new Set(prompts.slice(0, at).map((r) => r.uuid as string))
      // No parent: the first record of the conversation, so nothing is left.
      const resumeAt = typeof target.parentUuid === "string" ? target.parentUuid : undefined
      return resumeAt === undefined ? { kept } : { resumeAt, kept }
    })

  return provider
}

/**
 * One account's catalog: what the CLI says about itself (models, commands,
 * account) in its `initialize` answer, and the usage limits it reports
 * (`get_usage`, the stream's rate-limit frames).
 *
 * The first session's `initialize` answer fills it; before that, a probe
 * does: a prompt-free, MCP-free launch that reads `initialize`, asks
 * `get_usage` and stops. One probe at a time: concurrent callers share the
 * one in flight. Every change is told to the host (`changed`).
 */
import { Deferred, Effect, Exit, Scope } from "effect"
import type { CliDetector } from "../cli-version.ts"
import { childEnvFor, readLaunchKnobs } from "../config.ts"
import { LaunchFailed, type SessionError } from "../errors.ts"
import type { Account } from "../instances.ts"
import { limitsFromGetUsage } from "../limits.ts"
import { makeProbeSession } from "./probe-session.ts"
import { type ClaudeModel, modelCatalog } from "../models.ts"
import type { Broker, PluginApi } from "../sdk/plugin-api.ts"
import type { UsageLimits } from "../sdk/protocol.ts"
import type { SessionSetup, SessionTimeouts } from "../session.ts"
import { GetUsageResponse, InitializeResponse } from "../wire.ts"

/** What a probe (or the first session) learned: the CLI's own view of models, commands and account. */
export interface CatalogEntry {
  readonly models: ClaudeModel[]
  readonly initialize: InitializeResponse
  readonly usage?: UsageLimits
}

export interface CatalogSetup {
  /** The agent's id, for the log. */
  readonly agentId: string
  readonly api: PluginApi
  readonly account: Account
  /** The CLI's version: one older than the oldest supported is not probed. */
  readonly cli: CliDetector
  /** The agent's scope: probe processes and background probes live in it. */
  readonly scope: Scope.Scope
  readonly decodeLine: SessionSetup["decodeLine"]
  readonly timeouts?: Partial<SessionTimeouts> | undefined
  /** Tell the host the agent's info changed. */
  readonly changed: Effect.Effect<void>
  /** Provides the broker to a background probe. */
  readonly provide: <A, E>(effect: Effect.Effect<A, E, Broker>) => Effect.Effect<A, E>
}

export interface AgentCatalog {
  /** The models to offer: the CLI's list once known, else the built-in one. */
  readonly models: () => ClaudeModel[]
  /** The CLI's slash commands, as skills are listed beside them. */
  readonly commands: () => Array<{ name: string; description?: string }>
  /** The last limits reported, if any. */
  readonly limits: () => UsageLimits | undefined
  /** A session's `initialize` answer; taken only while no catalog is known. */
  readonly adopt: (response: Readonly<Record<string, unknown>>) => Effect.Effect<void>
  readonly rememberLimits: (limits: UsageLimits) => Effect.Effect<void>
  /** Probe now (sharing a probe in flight) and keep what it learns. */
  readonly probe: Effect.Effect<CatalogEntry, SessionError, Broker>
  /** Fill the catalog in the background when it is empty; tell the host when it arrives. */
  readonly warm: Effect.Effect<void>
  /** The limits for `get_usage`: fresh from a probe, else the last known, else empty windows. */
  readonly usage: Effect.Effect<UsageLimits, SessionError, Broker>
}

/** A prompt-free, MCP-free launch: read `initialize`, ask `get_usage`, stop. */
const probeOnce = (setup: CatalogSetup): Effect.Effect<CatalogEntry, SessionError, Broker> =>
  Effect.gen(function* () {
    const support = yield* setup.cli.detect
    if (support.unsupported) return yield* new LaunchFailed({ detail: support.unsupported })
    const scope = yield* Scope.fork(setup.scope)
    let answer: InitializeResponse | undefined
    const env = yield* childEnvFor(setup.account)
    // The commands (skills among them) of the settings the sessions read.
    const { settingSources } = yield* readLaunchKnobs
    const live = yield* makeProbeSession({
      name: "probe",
      cwd: setup.api.fs.paths.home,
      env,
      extraArgs: settingSources === undefined ? [] : ["--setting-sources", settingSources],
      decodeLine: setup.decodeLine,
      initialized: (response) => {
        const parsed = InitializeResponse.safeParse(response)
        answer = parsed.success ? parsed.data : {}
      },
      ...(setup.timeouts ? { timeouts: setup.timeouts } : {}),
    }).pipe(Scope.provide(scope))
    return yield* Effect.gen(function* () {
      yield* live.ensureProcess
      const usage = yield* live.request("get_usage").pipe(Effect.option)
      const parsedUsage =
        usage._tag === "Some" && usage.value ? GetUsageResponse.safeParse(usage.value) : undefined
      const initialize = answer ?? {}
      return {
        models: modelCatalog(initialize),
        initialize,
        ...(parsedUsage?.success ? { usage: limitsFromGetUsage(parsedUsage.data) } : {}),
      } satisfies CatalogEntry
    }).pipe(Effect.ensuring(live.close.pipe(Effect.andThen(Scope.close(scope, Exit.void)))))
  })

export const makeCatalog = (setup: CatalogSetup): AgentCatalog => {
  let entry: CatalogEntry | undefined
  let probing: Deferred.Deferred<CatalogEntry, SessionError> | undefined
  let lastLimits: UsageLimits | undefined

  const rememberLimits = (limits: UsageLimits) =>
    Effect.suspend(() => {
      lastLimits = limits
      return setup.changed
    })

  const probe: Effect.Effect<CatalogEntry, SessionError, Broker> = Effect.fn("catalog.probe")(function* () {
    if (probing) return yield* Deferred.await(probing)
    const mine = Deferred.makeUnsafe<CatalogEntry, SessionError>()
    probing = mine
    const exit = yield* Effect.exit(probeOnce(setup))
    probing = undefined
    if (Exit.isSuccess(exit)) {
      entry = exit.value
      if (exit.value.usage) lastLimits = exit.value.usage
    }
    yield* Deferred.done(mine, exit)
    return yield* exit
  })()

  return {
    models: () => entry?.models ?? modelCatalog(undefined),
    commands: () =>
      (entry?.initialize.commands ?? []).map((command) => ({
        name: command.name,
        ...(command.description ? { description: command.description } : {}),
      })),
    limits: () => lastLimits,
    adopt: (response) =>
      Effect.suspend(() => {
        if (entry) return Effect.void
        const parsed = InitializeResponse.safeParse(response)
        if (!parsed.success) return Effect.void
        entry = {
          models: modelCatalog(parsed.data),
          initialize: parsed.data,
          ...(lastLimits ? { usage: lastLimits } : {}),
        }
        return setup.changed
      }),
    rememberLimits,
    probe,
    warm: Effect.suspend(() => {
      if (entry || probing) return Effect.void
      return probe.pipe(
        Effect.andThen(setup.changed),
        Effect.catchCause((cause) =>
          setup.api.log.warn(`${setup.agentId}: catalog probe failed`, String(cause)),
        ),
        setup.provide,
        Effect.forkIn(setup.scope),
        Effect.asVoid,
      )
    }),
    usage: Effect.gen(function* () {
      const fresh = yield* probe
      const limits = fresh.usage ??
        lastLimits ?? { windows: [], reset_credits: [], updated_at: new Date().toISOString() }
      if (fresh.usage) yield* rememberLimits(fresh.usage)
      return limits
    }),
  }
}

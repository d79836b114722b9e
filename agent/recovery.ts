/**
 * Whose quota a blocked run was on: when a session emits `usage_blocked`,
 * the agent establishes the recovery identity afresh and emits
 * `recovery_identity` for that run. Never from cached facts:
 *
 * - the session's own `initialize` account (kept per session as it launches),
 * - a new prompt-free, hook-free (`disableAllHooks`), MCP-free
 *   (`--strict-mcp-config`, no SDK server) probe process in the session's
 *   folder with the environment as it is now, never a relabelled old process,
 * - `claude auth status --json` in that folder and environment;
 * all three must agree (agent/identity.ts) or the run's account stays unidentified.
 * A probe that fails reports unidentified with the failure: no earlier
 * identity stands in for it.
 */
import { Effect, Exit, Scope } from "effect"
import { authStatusIn } from "../account.ts"
import { childEnvFor, configDirFor, type LaunchKnobs } from "../config.ts"
import { pairIdentity } from "./identity.ts"
import type { Account } from "../instances.ts"
import { makeProbeSession } from "./probe-session.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentEvent, RecoveryIdentity } from "../sdk/protocol.ts"
import type { SessionSetup } from "../session.ts"

export interface RecoverySetup {
  readonly account: Account
  readonly decodeLine: SessionSetup["decodeLine"]
  /** The launch knobs as they are now. */
  readonly knobs: Effect.Effect<LaunchKnobs, never, Broker>
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  /** Provides the broker to the background identification. */
  readonly provide: <A, E>(effect: Effect.Effect<A, E, Broker>) => Effect.Effect<A, E>
}

/** The account a fresh probe process reports in `initialize` (prompt-, hook- and MCP-free). */
export const probeAccount = (
  account: Account,
  cwd: string,
  decodeLine: SessionSetup["decodeLine"],
): Effect.Effect<unknown, Error, Broker> =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const env = yield* childEnvFor(account)
    let native: unknown
    const live = yield* makeProbeSession({
      name: "identity-probe",
      cwd,
      env,
      extraArgs: ["--settings", JSON.stringify({ disableAllHooks: true })],
      decodeLine,
      initialized: (answer) => {
        native = answer.account
      },
    }).pipe(Scope.provide(scope))
    return yield* live.ensureProcess.pipe(
      Effect.map(() => native),
      Effect.ensuring(live.close.pipe(Effect.andThen(Scope.close(scope, Exit.void)))),
    )
  })

export const makeRecovery = (setup: RecoverySetup) => {
  /** Each session's native account, from its latest launch's `initialize`. */
  const natives = new Map<string, unknown>()

  const identify = (sessionId: string, cwd: string): Effect.Effect<RecoveryIdentity, never, Broker> =>
    Effect.gen(function* () {
      const knobs = yield* setup.knobs
      const configDir = yield* configDirFor(setup.account)
      const fresh = yield* probeAccount(setup.account, cwd, setup.decodeLine)
      const auth = yield* authStatusIn(setup.account, cwd)
      const facts = {
        auth,
        configDir,
        customFlags: knobs.extraArgs.length > 0,
        settingSources: knobs.settingSources !== undefined,
      }
      const own = pairIdentity({ ...facts, native: natives.get(sessionId) })
      const now = pairIdentity({ ...facts, native: fresh })
      if (!own.identified) return own
      if (!now.identified) return now
      return own.key === now.key
        ? own
        : { identified: false as const, reason: "the account changed since the session started" }
    }).pipe(
      Effect.catch((error: { readonly message: string }) =>
        Effect.succeed<RecoveryIdentity>({
          identified: false,
          reason: `the account could not be checked: ${error.message}`,
        }),
      ),
    )

  return {
    /** A session's launch answered `initialize`: its own account. */
    launched: (sessionId: string, account: unknown) => void natives.set(sessionId, account),
    /** A session's `emit` that also identifies the account of each blocked run, on a fiber in `scope`. */
    sessionEmit:
      (emit: (event: AgentEvent) => Effect.Effect<void>, cwd: string, scope: Scope.Scope) =>
      (event: AgentEvent): Effect.Effect<void> =>
        event.type !== "usage_blocked"
          ? emit(event)
          : emit(event).pipe(
              Effect.andThen(
                identify(event.session_id, cwd).pipe(
                  Effect.flatMap((identity) =>
                    setup.emit({
                      type: "recovery_identity",
                      session_id: event.session_id,
                      run_id: event.run_id,
                      identity,
                    }),
                  ),
                  setup.provide,
                  Effect.forkIn(scope),
                ),
              ),
              Effect.asVoid,
            ),
  }
}

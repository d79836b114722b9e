/**
 * The provider methods about the account rather than a session: the agent's
 * info (sign-in state, version and installer, models, options, skills,
 * limits), usage, sign in and out, and the CLI's update. `--version` and the
 * owner's npm are asked once per agent, and again after an update; never
 * while `CLAUDE_MAINTENANCE_CHECK` is off (options.ts).
 */
import { Effect, Option, Scope } from "effect"
import * as account from "../account.ts"
import { CAPABILITIES } from "./capabilities.ts"
import { configDirFor, continuationKey, readMergedSettings, readSettingSources } from "../config.ts"
import { agentOptions, MAINTENANCE_KNOB, maintenanceCheckOn, promptKeywords } from "../options.ts"
import { Env } from "../sdk/plugin-api.ts"
import type { AgentInfo, AgentProvider, Maintenance } from "../sdk/protocol.ts"
import { readSkills } from "../skills.ts"
import type { AgentContext } from "./context.ts"

type AccountMethods = Pick<AgentProvider, "initialize" | "getUsage" | "signIn" | "signOut" | "update">

export const accountMethods = (ctx: AgentContext): AccountMethods => {
  const { acct, call, catalog, cli, host, identity, scope } = ctx
  let maintenanceInfo: Option.Option<Maintenance> | undefined

  return {
    initialize: () =>
      call(
        Effect.gen(function* () {
          const support = yield* cli.detect
          const status = support.unsupported
            ? { status: "Unavailable" as const, message: support.unsupported }
            : yield* account.authStatus(acct)
          const configDir = yield* configDirFor(acct)
          const sources = yield* readSettingSources
          const settings = yield* readMergedSettings(configDir, undefined, sources)
          const skills = yield* readSkills(configDir, undefined, catalog.commands(), sources)
          // Read at every call, as the launch knobs are; a skipped check is not remembered.
          const checked = maintenanceCheckOn(yield* (yield* Env).get(MAINTENANCE_KNOB))
          if (checked) maintenanceInfo ??= yield* account.maintenance().pipe(Effect.option)
          const maintenance: Option.Option<Maintenance> =
            checked && maintenanceInfo ? maintenanceInfo : Option.none()
          const list = catalog.models()
          if (status.status === "Ready") yield* catalog.warm
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
            ...(catalog.limits() ? { usageLimits: catalog.limits() } : {}),
            promptKeywords: promptKeywords(settings),
            models: list,
            options: agentOptions(list, settings, support),
            skills,
            ...(maintenance._tag === "Some" ? { maintenance: maintenance.value } : {}),
            capabilities: CAPABILITIES,
          } satisfies AgentInfo
        }),
      ),

    getUsage: () => call(catalog.usage),

    signIn: () =>
      call(
        Effect.gen(function* () {
          // The login process waits for the browser; it lives in the agent's scope.
          const started = yield* account.signIn(acct).pipe(Scope.provide(scope))
          yield* started.done.pipe(Effect.andThen(host.infoChanged(identity.id)), Effect.forkIn(scope))
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
  }
}

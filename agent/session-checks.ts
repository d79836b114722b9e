/**
 * What the agent checks on an open session after each launch (and, for the
 * skills, after each run): the skill list, emitted only when it changed, and
 * whether ultracode, which the CLI accepts silently where it cannot apply,
 * turned on.
 */
import { Effect } from "effect"
import { configDirFor } from "../config.ts"
import type { Account } from "../instances.ts"
import { ULTRACODE } from "../options.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { readSkills, skillsChanged } from "../skills.ts"
import { GetSettingsResponse } from "../wire.ts"
import type { AgentCatalog } from "../catalog.ts"
import type { OpenSession } from "./context.ts"

/** Re-read the skills of a session's account and workspace; emit `Skills` when they changed. */
export const refreshSkills = (
  acct: Account,
  catalog: AgentCatalog,
  emit: (event: AgentEvent) => Effect.Effect<void>,
  open: OpenSession,
  sessionId: string,
): Effect.Effect<void, never, Broker> =>
  Effect.gen(function* () {
    const configDir = yield* configDirFor(acct)
    const skills = yield* readSkills(configDir, open.cwd, catalog.commands())
    if (open.skills && !skillsChanged(open.skills, skills)) return
    open.skills = skills
    yield* emit({ type: "Skills", session_id: sessionId, skills })
  })

/** Ultracode is accepted silently where it cannot apply: ask and warn. */
export const checkUltracode = (open: OpenSession): Effect.Effect<void, never, Broker> =>
  Effect.gen(function* () {
    if (open.options.effort !== ULTRACODE) return
    const answer = yield* open.live.request("get_settings").pipe(Effect.option)
    if (answer._tag === "None" || !answer.value) return
    const parsed = GetSettingsResponse.safeParse(answer.value)
    if (parsed.success && parsed.data.applied?.ultracode === false)
      yield* open.live.emitNotice(
        "warning",
        "Ultracode did not turn on for this model (it needs a model with extra high effort); the session runs without it",
      )
  })

/**
 * What the agent checks on an open session after each launch (and, for the
 * skills, after each run): the skill list, emitted only when it changed,
 * whether ultracode, which the CLI accepts silently where it cannot apply,
 * turned on, and whether the workspace's settings allow it at all; and
 * thinking turned off where the model keeps it on.
 */
import { Effect } from "effect"
import type { AgentCatalog } from "./catalog.ts"
import type { CliDetector } from "../cli-version.ts"
import { configDirFor, readMergedSettings, readSettingSources } from "../config.ts"
import type { Account } from "../instances.ts"
import { thinkingStaysOn, ULTRACODE, workflowsEnabled } from "../options.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentEvent, ModelEntry } from "../sdk/protocol.ts"
import { readSkills, skillsChanged } from "../skills.ts"
import { GetSettingsResponse } from "../wire.ts"
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
    const skills = yield* readSkills(configDir, open.cwd, catalog.commands(), yield* readSettingSources)
    if (open.skills && !skillsChanged(open.skills, skills)) return
    open.skills = skills
    yield* emit({ type: "Skills", session_id: sessionId, skills })
  })

/**
 * Are dynamic workflows (and so ultracode) on in this workspace? The user's
 * settings with the project's `.claude/settings*.json` over them decide, of
 * those the CLI reads (CLAUDE_SETTING_SOURCES).
 */
export const workflowsOnIn = (acct: Account, cwd: string): Effect.Effect<boolean, never, Broker> =>
  Effect.gen(function* () {
    const configDir = yield* configDirFor(acct)
    return workflowsEnabled(yield* readMergedSettings(configDir, cwd, yield* readSettingSources))
  })

/** Thinking turned off on a model that cannot turn it off: it stays on, and the session says so. */
export const checkThinking = (open: OpenSession, models: ReadonlyArray<ModelEntry>): Effect.Effect<void> => {
  const model = thinkingStaysOn(open.options, models)
  return model === undefined
    ? Effect.void
    : open.live.emitNotice("warning", `Thinking stays on: ${model.label} cannot turn it off`)
}

/** Ultracode is accepted silently where it cannot apply: ask and warn. */
export const checkUltracode = (
  acct: Account,
  open: OpenSession,
  cli: CliDetector,
): Effect.Effect<void, never, Broker> =>
  Effect.gen(function* () {
    if (open.options.effort !== ULTRACODE) return
    // A CLI without ultracode was launched at xhigh and told so in the version notice.
    if (!(yield* cli.detect).has("ultracodeEffort")) return
    if (!(yield* workflowsOnIn(acct, open.cwd)))
      return yield* open.live.emitNotice(
        "warning",
        "Ultracode is off: this workspace's settings turn dynamic workflows off; the session runs at extra high effort",
      )
    const answer = yield* open.live.request("get_settings").pipe(Effect.option)
    if (answer._tag === "None" || !answer.value) return
    const parsed = GetSettingsResponse.safeParse(answer.value)
    if (parsed.success && parsed.data.applied?.ultracode === false)
      yield* open.live.emitNotice(
        "warning",
        "Ultracode did not turn on for this model (it needs a model with extra high effort); the session runs without it",
      )
  })

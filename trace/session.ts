/**
 * Agent Trace for one live session: reads the knobs, makes the tracker in the
 * session's scope, and gives back the session's event sink with the tracker
 * in front of it. This is the one entry the agent calls (agent.ts, where a
 * session is opened).
 */
import { Effect, type Scope } from "effect"
import { launchedModel, type SessionOptions, traceEnabled, traceKnobs } from "../options.ts"
import { Env, type Log, type Process, type Storage } from "../sdk/plugin-api.ts"
import type { AgentEvent, ModelEntry } from "../sdk/protocol.ts"
import { makeTracker } from "./tracker.ts"

export interface TraceSessionParams {
  /** The host's session id: the storage key, so a resumed session keeps its fingerprints. */
  readonly sessionId: string
  /** The session's folder (its repository is watched from the first run on). */
  readonly cwd: string
  readonly options: () => SessionOptions
  readonly catalog: () => ReadonlyArray<ModelEntry>
  readonly cliVersion: () => string | undefined
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
}

/** The session's event sink, every event shown to the tracker first. */
export const traceSession = (
  params: TraceSessionParams,
): Effect.Effect<
  (event: AgentEvent) => Effect.Effect<void>,
  never,
  Env | Process | Storage | Log | Scope.Scope
> =>
  Effect.gen(function* () {
    const env = yield* Env
    const knobs = traceKnobs(yield* env.all)
    const tracker = yield* makeTracker({
      sessionId: params.sessionId,
      cwd: params.cwd,
      enabled: () => traceEnabled(params.options(), knobs),
      model: () => launchedModel(params.options(), params.catalog()),
      toolVersion: params.cliVersion,
      push: Effect.map(env.all, (all) => {
        const now = traceKnobs(all)
        return { enabled: now.push, timeoutMs: now.pushTimeoutMs }
      }),
      notice: (level, text) => params.emit({ type: "Notice", session_id: params.sessionId, level, text }),
    })
    return (event: AgentEvent) => Effect.andThen(tracker.feed(event), params.emit(event))
  })

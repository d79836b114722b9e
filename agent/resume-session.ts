/**
 * Resuming a conversation (the provider's `resumeSession`). An open session
 * whose process is alive is kept (and any turn it runs), unless the host
 * gives it other tools or instructions: those reach a launch, or, while a
 * turn is running, apply from the process's next start. Otherwise the
 * transcript decides how the CLI joins it again (agent/restart.ts), and a
 * start the CLI refuses moves to the next try.
 */
import { Effect } from "effect"
import type { SessionError } from "../errors.ts"
import { parseOptions } from "../options.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import type { AgentProvider, PluginTool } from "../sdk/protocol.ts"
import { type Recovery, refusedConversation } from "../session.ts"
import * as state from "../state.ts"
import { type AgentContext, keepOptions, type OpenSession, opened } from "./context.ts"
import { restartOf } from "./restart.ts"

/**
 * The tools and instructions a resume gives an open session, when they differ
 * from what it runs with (a value the call leaves out is kept); undefined when
 * nothing changes.
 */
const reconfigured = (
  open: OpenSession,
  params: {
    readonly tools?: ReadonlyArray<PluginTool> | undefined
    readonly instructions?: string | undefined
  },
): { tools: ReadonlyArray<PluginTool>; instructions: string | undefined } | undefined => {
  const tools = params.tools ?? open.tools
  const instructions = params.instructions ?? open.instructions
  const same = JSON.stringify(tools) === JSON.stringify(open.tools) && instructions === open.instructions
  return same ? undefined : { tools, instructions }
}

export const resumeSessionMethod = (ctx: AgentContext): AgentProvider["resumeSession"] => {
  const { acct, call, openSession, sessions } = ctx
  return (params) =>
    ctx.asOpening(
      params.sessionId,
      call(
        Effect.fn("agent.resumeSession")(function* () {
          const hostId = params.sessionId
          // Already open and alive: keep its process (and any turn it is running)...
          const existing = sessions.get(hostId)
          if (existing?.live.isRunning()) {
            const changed = reconfigured(existing, params)
            if (changed === undefined) return opened(hostId, existing)
            // ...unless the host gives it other tools or instructions: they reach a launch.
            // A turn in flight keeps its process: they apply from its next start, and it says so.
            if (existing.live.runId() !== undefined) {
              existing.tools = changed.tools
              existing.instructions = changed.instructions
              existing.live.setTools(changed.tools)
              yield* existing.live.emitNotice(
                "warning",
                "A turn is running: the tools and instructions this resume gave apply from Claude Code's next start for this chat",
              )
              return opened(hostId, existing)
            }
          }
          const cliId = yield* state.cliIdFor(hostId)
          // What the host leaves out of the call, an open session keeps, else the chat's stored
          // options (a mode set in an earlier process); what the host gives wins.
          const kept = existing?.options ?? parseOptions((yield* state.loadSessionState(hostId)).options)
          const base = {
            hostId,
            cwd: params.cwd,
            tools: params.tools ?? existing?.tools,
            instructions: params.instructions ?? existing?.instructions,
            options: params.options ? { ...kept, ...parseOptions(params.options) } : kept,
          }
          // The transcript decides (agent/restart.ts); a start the CLI refuses moves to the next try.
          const openAs = (recovery: Recovery): Effect.Effect<OpenSession, SessionError, Broker> =>
            openSession({ ...base, start: recovery.start }).pipe(
              Effect.tap((open) =>
                recovery.notice ? open.live.emitNotice("warning", recovery.notice) : Effect.void,
              ),
              Effect.catchTag("ProcessExited", (error) =>
                recovery.orElse && refusedConversation(error.stderr)
                  ? Effect.flatMap(recovery.orElse, openAs)
                  : Effect.fail(error),
              ),
            )
          const open = yield* openAs(yield* restartOf(acct, hostId, params.cwd, cliId, false))
          yield* keepOptions(hostId, open)
          return opened(hostId, open)
        })(),
      ),
    )
}

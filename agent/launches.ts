/**
 * Each session's own launch settings (a front end's session options:
 * system prompt, allowed tools, max turns, extra directories), by host id,
 * kept while the session is open so every launch of it (a restart, a
 * rewind) runs with them. Create, resume and fork record the request's
 * before the conversation methods open the session; close forgets them.
 */
import { Effect } from "effect"
import type { AgentProvider, SessionLaunch } from "../sdk/protocol.ts"

type Opening = Pick<AgentProvider, "createSession" | "resumeSession" | "forkSession" | "closeSession">

export const withLaunches = <M extends Opening>(methods: M, launches: Map<string, SessionLaunch>): M => {
  const keep = (hostId: string, launch: SessionLaunch | undefined) =>
    Effect.sync(() => {
      if (launch) launches.set(hostId, launch)
      else launches.delete(hostId)
    })
  return {
    ...methods,
    createSession: (params) => {
      // The id made here rather than by the plugin's own default, so the settings can be kept under it.
      const sessionId = params.sessionId ?? crypto.randomUUID()
      return Effect.andThen(keep(sessionId, params.launch), methods.createSession({ ...params, sessionId }))
    },
    resumeSession: (params) =>
      Effect.andThen(keep(params.sessionId, params.launch), methods.resumeSession(params)),
    forkSession: (params) => {
      const newSessionId = params.newSessionId ?? crypto.randomUUID()
      return Effect.andThen(
        keep(newSessionId, params.launch),
        methods.forkSession({ ...params, newSessionId }),
      )
    },
    closeSession: (params) =>
      Effect.ensuring(
        methods.closeSession(params),
        Effect.sync(() => launches.delete(params.sessionId)),
      ),
  }
}

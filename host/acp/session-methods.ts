/**
 * The session methods: `session/new`, `load`, `resume`, `fork`, `list` and
 * `close`. Each answers from the catalog it has (catalog.ts) while the
 * provider session starts behind it (sessions.ts).
 */
import { randomUUID } from "node:crypto"
import { isAbsolute } from "node:path"
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { SessionParams } from "../../sdk/protocol.ts"
import type { Catalog } from "./catalog.ts"
import { type AcpContext, call } from "./context.ts"
import { APPROVAL_OPTION, checkValue, PLAN_OPTION } from "./options.ts"
import { replayUpdates } from "./replay.ts"
import type { AcpSession } from "./session.ts"
import { clientSessionOptions } from "./session-options.ts"
import type { Sessions } from "./sessions.ts"

type Asked = Parameters<typeof clientSessionOptions>[0]

/**
 * What the provider session starts with beyond its cwd: the client's launch
 * settings, its model (checked against the catalog, so an unknown one is an
 * error before anything starts), and for a new chat the mode the client is
 * shown (the declared defaults, the user's own default mode among them); a
 * stored chat keeps the options it had (the plugin's session state), and
 * the client hears them once it runs.
 */
const startParams = async (catalog: Catalog, asked: Asked, stored = false) => {
  const { model, launch } = clientSessionOptions(asked)
  // A chosen model is checked against a catalog: the probe's, when none was seen yet.
  const current =
    catalog.current() ?? (model !== undefined ? await catalog.info().catch(() => undefined) : undefined)
  let chosen: string | undefined
  if (model !== undefined && current) {
    const checked = checkValue(current, {}, "model", model)
    // A family word (`haiku`, `sonnet`) names the family's first model, as the CLI's own aliases do.
    const family = current.models.find((m) => m.value.startsWith(`claude-${model.toLowerCase()}-`))
    if ("error" in checked && family === undefined)
      throw acp.RequestError.invalidParams({ model }, `unknown model ${model}: ${checked.error}`)
    chosen = "error" in checked ? family!.value : (checked.value as string)
  } else chosen = model
  return (session: AcpSession): Pick<SessionParams, "options" | "launch"> => {
    const shown = session.values
    const options: Record<string, string | boolean> = {
      ...(!stored && shown[APPROVAL_OPTION] !== undefined && { [APPROVAL_OPTION]: shown[APPROVAL_OPTION] }),
      ...(!stored && shown[PLAN_OPTION] !== undefined && { [PLAN_OPTION]: shown[PLAN_OPTION] }),
      ...(chosen !== undefined && { model: chosen }),
    }
    if (chosen !== undefined) session.values = { ...session.values, model: chosen }
    return { ...(Object.keys(options).length > 0 && { options }), ...(launch && { launch }) }
  }
}

/** Answer for a session just served; a session whose answer fails is closed again. */
const answered = async <A>(sessions: Sessions, sessionId: string, answer: Promise<A>): Promise<A> =>
  answer.catch(async (error: unknown) => {
    await sessions.close(sessionId)
    throw error
  })

/** `session/load`: the stored chat replayed as updates, then the conversation resumed behind it. */
const load = async (
  ctx: AcpContext,
  catalog: Catalog,
  sessions: Sessions,
  params: acp.LoadSessionRequest,
) => {
  const cwd = sessions.workspace(params.cwd)
  const sessionId = params.sessionId
  const more = await startParams(catalog, params, true)
  await sessions.close(sessionId)
  const t0 = performance.now()
  const transcript = await call("session/load", () =>
    ctx.host.call(ctx.agentId, "readSession", { sessionId, cwd }),
  )
  const t1 = performance.now()
  const replaying = sessions.make(sessionId, cwd)
  let n = 0
  for (const update of replayUpdates(replaying.updates, transcript.items)) {
    // Backpressure: a long chat is written as it is walked.
    if (++n % 64 === 0) await replaying.notify(update)
    else void replaying.notify(update)
  }
  await replaying.flushed()
  if (ctx.options.debug)
    ctx.log(
      `session/load: read_session ${Math.round(t1 - t0)} ms (${transcript.items.length} items), ${n} updates mapped and written ${Math.round(performance.now() - t1)} ms`,
    )
  const session = sessions.serve(
    "session/load",
    sessionId,
    cwd,
    params.mcpServers,
    (session) => ctx.host.call(ctx.agentId, "resumeSession", { sessionId, cwd, ...more(session) }),
    replaying.updates,
  )
  // The replay did not need the catalog: the probe ran meanwhile.
  return answered(sessions, sessionId, catalog.answer(session))
}

const list = async (ctx: AcpContext, params: acp.ListSessionsRequest) => {
  const cwd = params.cwd ?? undefined
  if (cwd !== undefined && !isAbsolute(cwd))
    throw acp.RequestError.invalidParams({ cwd }, "cwd must be an absolute path")
  const page = await call("session/list", () =>
    ctx.host.call(ctx.agentId, "listSessions", {
      ...(cwd !== undefined && { cwd }),
      ...(params.cursor ? { cursor: params.cursor } : {}),
    }),
  )
  return {
    sessions: page.sessions.flatMap((s) => {
      const where = s.cwd ?? cwd
      return where === undefined
        ? []
        : [{ sessionId: s.session_id, cwd: where, title: s.title, updatedAt: s.modified_at }]
    }),
    ...(page.cursor !== undefined && { nextCursor: page.cursor }),
  }
}

export const onSessions = (
  app: acp.AgentApp,
  ctx: AcpContext,
  catalog: Catalog,
  sessions: Sessions,
): acp.AgentApp =>
  app
    .onRequest("session/new", async ({ params }) => {
      const cwd = sessions.workspace(params.cwd)
      const more = await startParams(catalog, params)
      const sessionId = randomUUID()
      // The session's CLI starts alongside the catalog probe (both take a CLI start).
      const session = sessions.serve("session/new", sessionId, cwd, params.mcpServers, (s) =>
        ctx.host.call(ctx.agentId, "createSession", { cwd, sessionId, ...more(s) }),
      )
      return { sessionId, ...(await answered(sessions, sessionId, catalog.answer(session))) }
    })
    .onRequest("session/load", ({ params }) => load(ctx, catalog, sessions, params))
    .onRequest("session/resume", async ({ params }) => {
      const cwd = sessions.workspace(params.cwd)
      const sessionId = params.sessionId
      const live = sessions.get(sessionId)
      if (live) return catalog.stateOf(live, await catalog.ready())
      if (catalog.live() || !catalog.current()) await catalog.ready()
      const more = await startParams(catalog, params, true)
      const session = sessions.serve("session/resume", sessionId, cwd, params.mcpServers, (s) =>
        ctx.host.call(ctx.agentId, "resumeSession", { sessionId, cwd, ...more(s) }),
      )
      return catalog.answer(session)
    })
    .onRequest("session/fork", async ({ params }) => {
      if (catalog.live() || !catalog.current()) await catalog.ready()
      const cwd = sessions.workspace(params.cwd)
      const more = await startParams(catalog, params)
      const origin = params.sessionId
      const newSessionId = randomUUID()
      const waitOrigin = sessions.get(origin)?.ready.catch(() => {})
      const session = sessions.serve("session/fork", newSessionId, cwd, params.mcpServers, async (s) => {
        await waitOrigin
        const { launch } = more(s)
        // A fork keeps its origin's options; only the client's launch settings are its own.
        return ctx.host.call(ctx.agentId, "forkSession", {
          sessionId: origin,
          newSessionId,
          cwd,
          ...(launch && { launch }),
        })
      })
      return { sessionId: newSessionId, ...(await catalog.answer(session)) }
    })
    .onRequest("session/list", ({ params }) => list(ctx, params))
    .onRequest("session/close", async ({ params }) => {
      sessions.need(params.sessionId)
      await sessions.close(params.sessionId)
      return {}
    })
    .onRequest("session/delete", async ({ params }) => {
      const sessionId = params.sessionId
      await sessions.close(sessionId)
      try {
        await ctx.host.call(ctx.agentId, "deleteSession", { sessionId })
      } catch (error) {
        if ((error as { tag?: unknown }).tag === "SessionNotFound")
          throw acp.RequestError.invalidParams(
            { sessionId },
            `no chat ${sessionId} to delete: it is not stored here`,
          )
        return call("session/delete", () => Promise.reject(error))
      }
      return {}
    })

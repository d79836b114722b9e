/**
 * The host's agent events → the sessions of this connection: approvals and
 * questions become client requests (asks.ts), everything else the
 * `session/update`s updates.ts maps; a run's start and end reach the
 * prompts waiting on it once every update before them was written.
 */
import type { AgentEvent } from "../../sdk/protocol.ts"
import { makeAsks } from "./asks.ts"
import type { AcpAutoContinue } from "./auto-continue.ts"
import type { Catalog } from "./catalog.ts"
import type { AcpContext } from "./context.ts"
import type { AcpSession } from "./session.ts"
import { updatesOf } from "./updates.ts"

export const followEvents = (
  ctx: AcpContext,
  catalog: Catalog,
  sessionOf: (sessionId: string) => AcpSession | undefined,
  auto: AcpAutoContinue | undefined,
): void => {
  const { options, agentId, host, log, connection } = ctx
  const { askApproval, askQuestion } = makeAsks({
    host,
    agentId,
    log,
    client: connection.client,
    elicitation: () => connection.caps().elicitation?.form != null,
  })

  const onEvent = (session: AcpSession, event: AgentEvent) => {
    switch (event.type) {
      case "ApprovalRequested":
        void askApproval(session, event)
        return
      case "QuestionAsked":
        void askQuestion(session, event)
        return
      case "approval_resolved":
        session.asks.get(event.approval_id)?.abort()
        session.asks.delete(event.approval_id)
        return
      case "question_resolved":
        session.asks.get(event.question_id)?.abort()
        session.asks.delete(event.question_id)
        return
      case "Skills":
        session.skills = new Set(event.skills.filter((s) => s.hidden_from_picker !== true).map((s) => s.name))
        break
      case "SessionInfo":
        void catalog.optionsChanged(session, event.info.options)
        break
      default:
        break
    }
    for (const update of updatesOf(session.updates, event)) void session.notify(update)
    if (event.type === "RunStarted") void session.flushed().then(() => session.runStarted(event.run_id))
    if (event.type === "RunEnded") void session.flushed().then(() => session.runEnded(event))
  }

  void Promise.resolve(options.host).then(
    (h) =>
      h.events.subscribe((hostEvent) => {
        if (hostEvent.kind === "info_changed" && hostEvent.agentId === agentId) catalog.forget()
        if (hostEvent.kind !== "agent_event" || hostEvent.agentId !== agentId) return
        const event = hostEvent.event
        if (options.debug)
          log(`event ${event.type} ${event.session_id}${"run_id" in event ? ` run ${event.run_id}` : ""}`)
        const session = sessionOf(event.session_id)
        if (session) onEvent(session, event)
        if (session) auto?.onEvent(event)
      }),
    () => {},
  )
}

/**
 * Continue at the reset in the ACP server (opt-in: `npm run acp --
 * --auto-continue identified|any`), as ACP lets an agent do it: the rules
 * are host/core/auto-continue.ts's (a blocked run with a known reset, an
 * identified account unless `any`, nothing sent meanwhile, once), and here:
 * - what it schedules, holds, cancels or sends is a quoted notice line in
 *   the chat, like the front end's other notices (ACP v1 has no notice update);
 * - the "continue" is a prompt the agent sends itself: shown to the client
 *   as the user's line (`user_message_chunk`), its run's updates streamed as
 *   any turn's; no `session/prompt` answers it (the client sent none);
 * - any `session/prompt` of the client cancels a pending continue.
 */
import { randomUUID } from "node:crypto"
import type { Host } from "../core/host.ts"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { type AutoContinueMode, makeAutoContinue } from "../core/auto-continue.ts"
import type { AcpSession } from "./session.ts"
import { note } from "./updates.ts"

export interface AcpAutoContinueOptions {
  readonly mode: AutoContinueMode
  readonly host: Pick<Host, "call">
  readonly agentId: string
  /** The served session of an id (a closed one is gone: nothing is sent to it). */
  readonly session: (sessionId: string) => AcpSession | undefined
  readonly log: (message: string) => void
  /** Extra wait after the reset (host/core/auto-continue.ts; tests shorten it). */
  readonly marginMs?: number
}

export interface AcpAutoContinue {
  /** Every agent event of a served session. */
  readonly onEvent: (event: AgentEvent) => void
  /** The client sent a prompt to the session. */
  readonly sent: (sessionId: string) => void
  readonly dispose: () => void
}

export const makeAcpAutoContinue = (options: AcpAutoContinueOptions): AcpAutoContinue => {
  const say = (sessionId: string, text: string) => {
    const session = options.session(sessionId)
    if (session) void session.notify(note(session.updates, `⏲ ${text}`))
  }
  const auto = makeAutoContinue({
    mode: options.mode,
    ...(options.marginMs !== undefined && { marginMs: options.marginMs }),
    notify: say,
    send: async (sessionId, text) => {
      const session = options.session(sessionId)
      if (!session) return
      void session.notify({
        sessionUpdate: "user_message_chunk",
        content: { type: "text", text },
        messageId: `auto-continue-${randomUUID()}`,
      })
      await options.host
        .call(options.agentId, "prompt", { sessionId, text, deliveryId: randomUUID() })
        .catch((error: unknown) => {
          options.log(`auto-continue: ${String(error)}`)
          say(
            sessionId,
            `The automatic continue failed: ${error instanceof Error ? error.message : String(error)}`,
          )
        })
    },
  })
  return { onEvent: auto.onEvent, sent: auto.sent, dispose: auto.dispose }
}

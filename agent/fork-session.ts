/**
 * Forking a conversation (the provider's `forkSession`): the same
 * conversation taken elsewhere, with the origin's options and its prompts
 * (each can be rewound to). Until the CLI writes the fork, agent/forks.ts
 * keeps its record and serves it from its origin.
 */
import { Effect } from "effect"
import { configDirFor } from "../config.ts"
import * as history from "../history.ts"
import { parseOptions } from "../options.ts"
import type { AgentProvider } from "../sdk/protocol.ts"
import * as state from "../state.ts"
import { type AgentContext, keepOptions, type OpenSession, opened } from "./context.ts"
import { forkOf, forkStart } from "./forks.ts"

/**
 * The CLI resumes from the leaf its last `last-prompt` record names (or
 * below it), and a process writes that record only at its next prompt or
 * its exit: after a rewind, the pre-rewind process's exit named the
 * abandoned branch. A rewound, idle origin process is restarted on its
 * conversation first, which writes the current leaf.
 */
const settleLeaf = (acct: AgentContext["acct"], open: OpenSession, cliId: string, cwd: string) =>
  Effect.gen(function* () {
    if (!open.rewound || !open.live.isRunning() || open.live.runId() !== undefined) return
    const leaf = yield* history.readLeaf(yield* configDirFor(acct), cwd, cliId)
    if (leaf !== undefined) yield* open.live.restart({ kind: "resume", cliId })
    open.rewound = false
  })

export const forkSessionMethod = (ctx: AgentContext): AgentProvider["forkSession"] => {
  const { acct, call, openSession, sessions } = ctx
  return (params) => {
    const hostId = params.newSessionId ?? crypto.randomUUID()
    return ctx.asOpening(
      hostId,
      call(
        Effect.fn("agent.forkSession")(function* () {
          const originOpen = sessions.get(params.sessionId)
          if (originOpen) yield* settleLeaf(acct, originOpen, originOpen.live.cliId(), params.cwd)
          // What it copies (an unwritten fork's own origin), and what the list shows until the CLI writes it.
          const fork = yield* forkOf(acct, params.sessionId, params.cwd)
          // A fork is the same conversation taken elsewhere: it keeps the origin's options,
          // from its open session or, for a stored chat, from its session state.
          const originOptions =
            originOpen?.options ?? parseOptions((yield* state.loadSessionState(params.sessionId)).options)
          const options = { ...originOptions, ...parseOptions(params.options) }
          const open = yield* openSession({
            hostId,
            cwd: params.cwd,
            tools: params.tools,
            instructions: params.instructions,
            options,
            start: forkStart(fork, hostId),
          })
          yield* keepOptions(hostId, open)
          // The origin's prompts are the fork's too (the CLI copies them with their uuids): each can be rewound to.
          const originSent = (yield* state.loadSessionState(params.sessionId)).sent
          yield* state.rememberFork(hostId, fork, {
            ...originSent,
            ...Object.fromEntries(originOpen?.sentUuids ?? []),
          })
          return opened(hostId, open)
        })(),
      ),
    )
  }
}

/**
 * The provider methods that act on an open session's live process: prompts
 * (and steering), cancel, a task's cancel, answers to approvals and
 * questions, and options changed live. Each fails with SessionNotFound when
 * the session is not open.
 */
import { Effect } from "effect"
import { applyOption, liveRequests, OPTION_IDS } from "../options.ts"
import type { AgentProvider } from "../sdk/protocol.ts"
import { type AgentContext, sessionInfo } from "./context.ts"

type RunMethods = Pick<
  AgentProvider,
  "prompt" | "cancel" | "cancelTask" | "setOption" | "answerApproval" | "answerQuestion"
>

export const runMethods = (ctx: AgentContext): RunMethods => {
  const { call, lookup, emit, catalog, checkUltracode } = ctx
  return {
    prompt: (params) => call(Effect.flatMap(lookup(params.sessionId), (open) => open.live.prompt(params))),

    cancel: ({ sessionId }) => call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancel)),

    cancelTask: ({ sessionId, taskId }) =>
      call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancelTask(taskId))),

    setOption: ({ sessionId, optionId, value }) =>
      call(
        Effect.gen(function* () {
          const open = yield* lookup(sessionId)
          open.options = applyOption(open.options, optionId, value)
          for (const { subtype, ...fields } of liveRequests(optionId, value, open.options, catalog.models()))
            yield* open.live.request(subtype, fields)
          if (optionId === OPTION_IDS.effort || optionId === OPTION_IDS.model) yield* checkUltracode(open)
          yield* emit({ type: "SessionInfo", session_id: sessionId, info: sessionInfo(open) })
        }),
      ),

    answerApproval: (answer) =>
      call(Effect.flatMap(lookup(answer.sessionId), (open) => open.live.answerApproval(answer))),

    answerQuestion: (answer) =>
      call(Effect.flatMap(lookup(answer.sessionId), (open) => open.live.answerQuestion(answer))),
  }
}

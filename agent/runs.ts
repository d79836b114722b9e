/**
 * The provider methods that act on an open session's live process: prompts
 * (and steering), cancel, a task's cancel, answers to approvals and
 * questions, and options changed live. Each fails with SessionNotFound when
 * the session is not open.
 */
import { Effect } from "effect"
import { InvalidOption } from "../errors.ts"
import {
  applyOption,
  cliModeFor,
  OPTION_IDS,
  optionsRecord,
  ULTRACODE,
  withinWorkflowSwitch,
} from "../options.ts"
import { liveRequests } from "../options/live.ts"
import type { AgentProvider } from "../sdk/protocol.ts"
import * as state from "../state.ts"
import { checkThinking } from "./session-checks.ts"
import { type AgentContext, sessionInfo } from "./context.ts"

/** The tool with which the model hands its plan in for approval (plan mode). */
const EXIT_PLAN_TOOL = "ExitPlanMode"

type RunMethods = Pick<
  AgentProvider,
  "prompt" | "cancel" | "cancelTask" | "setOption" | "answerApproval" | "answerQuestion"
>

export const runMethods = (ctx: AgentContext): RunMethods => {
  const { call, lookup, emit, catalog, cli, checkUltracode, workflowsOn } = ctx
  return {
    prompt: (params) => call(Effect.flatMap(lookup(params.sessionId), (open) => open.live.prompt(params))),

    cancel: ({ sessionId }) => call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancel)),

    cancelTask: ({ sessionId, taskId }) =>
      call(Effect.flatMap(lookup(sessionId), (open) => open.live.cancelTask(taskId))),

    setOption: ({ sessionId, optionId, value }) =>
      call(
        Effect.gen(function* () {
          const open = yield* lookup(sessionId)
          const next = applyOption(open.options, optionId, value)
          const workflows = yield* workflowsOn(open.cwd)
          if (optionId === OPTION_IDS.effort && next.effort === ULTRACODE && !workflows)
            return yield* new InvalidOption({
              detail: "Ultracode needs dynamic workflows, which this workspace's settings turn off",
            })
          const sent = withinWorkflowSwitch(next, workflows)
          // Kept only once the CLI took it: a refused value must not come back at the next launch.
          const support = yield* cli.detect
          for (const { subtype, ...fields } of liveRequests(optionId, value, sent, catalog.models(), support))
            yield* open.live.request(subtype, fields)
          open.options = next
          yield* state.rememberOptions(sessionId, optionsRecord(next))
          if (optionId === OPTION_IDS.effort || optionId === OPTION_IDS.model) yield* checkUltracode(open)
          if (optionId === OPTION_IDS.thinking || optionId === OPTION_IDS.model)
            yield* checkThinking(open, catalog.models())
          yield* emit({ type: "SessionInfo", session_id: sessionId, info: sessionInfo(open) })
        }),
      ),

    answerApproval: (answer) =>
      call(
        Effect.gen(function* () {
          const open = yield* lookup(answer.sessionId)
          const next = { ...open.options, plan: false }
          let acceptsPlan = false
          // The plan accepted: plan mode ends for the approval mode the user had, in the same answer.
          yield* open.live.answerApproval(answer, (tool) => {
            acceptsPlan = answer.decision !== "deny" && open.options.plan === true && tool === EXIT_PLAN_TOOL
            return acceptsPlan ? cliModeFor(next) : undefined
          })
          if (!acceptsPlan) return
          open.options = next
          // Said before it is stored: the turn goes on at once, and must not end before the front end knows.
          yield* emit({ type: "SessionInfo", session_id: answer.sessionId, info: sessionInfo(open) })
          yield* state.rememberOptions(answer.sessionId, optionsRecord(next))
        }),
      ),

    answerQuestion: (answer) =>
      call(Effect.flatMap(lookup(answer.sessionId), (open) => open.live.answerQuestion(answer))),
  }
}

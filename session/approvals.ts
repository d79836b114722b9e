/**
 * Approvals and questions: the CLI's `can_use_tool` requests waiting for the
 * user, by request id.
 *
 * - Open: `AskUserQuestion` becomes QuestionAsked, anything else
 *   ApprovalRequested; a subagent's request (`agent_id`) lands in its task,
 *   which shows Waiting while any of its requests is open.
 * - Answer: allow (with the input, or the suggestions as updatedPermissions
 *   for allow_always), deny with a message; a question's answers go back in
 *   `updatedInput`, keyed by question text, next to the untouched questions.
 * - Withdraw: the CLI's `control_cancel_request` resolves it as withdrawn.
 * - Settle all: cancel denies every open request; a process that is gone
 *   drops them. The host hears `_resolved` for each.
 */
import { Effect } from "effect"
import { ApprovalNotFound } from "../errors.ts"
import type { AgentEvent, ApprovalAnswer, Question, QuestionAnswer } from "../sdk/protocol.ts"
import type { PendingRequest } from "../types.ts"
import { asRecord, asString } from "../values.ts"
import type { CanUseToolRequest } from "../wire.ts"
import type { SessionContext } from "./context.ts"
import type { ControlChannel } from "./control.ts"

export interface Approvals {
  /** A `can_use_tool` request of run `runId`. */
  readonly open: (requestId: string, request: CanUseToolRequest, runId: string) => Effect.Effect<void>
  /**
   * Answer through `channel`, the running process's (none: the request is gone with its process).
   * `modeFor`: given the approval's tool, a permission mode an allow also switches the CLI to (a plan accepted).
   */
  readonly answerApproval: (
    answer: ApprovalAnswer,
    channel: ControlChannel | undefined,
    modeFor?: (toolName: string) => string | undefined,
  ) => Effect.Effect<void, ApprovalNotFound>
  readonly answerQuestion: (
    answer: QuestionAnswer,
    channel: ControlChannel | undefined,
  ) => Effect.Effect<void, ApprovalNotFound>
  /** The CLI withdrew its request. */
  readonly withdraw: (requestId: string) => Effect.Effect<void>
  /** Resolve every open request with `reason`; with `denyThrough` (cancel) each is also denied to the CLI. */
  readonly settleAll: (reason: string, denyThrough?: ControlChannel) => Effect.Effect<void>
  /** How many requests wait for the user now. */
  readonly openCount: () => number
}

/** AskUserQuestion input → the protocol's questions (lenient: the tool's input is the model's). */
export const questionsOf = (input: Readonly<Record<string, unknown>>): Question[] => {
  const list = Array.isArray(input.questions) ? input.questions : []
  return list.map((raw) => {
    const q = asRecord(raw)
    const options = Array.isArray(q.options) ? q.options : []
    const header = asString(q.header)
    return {
      question: asString(q.question) ?? "",
      ...(header !== undefined ? { header } : {}),
      multi_select: q.multiSelect === true || q.multi_select === true,
      options: options.map((rawOption) => {
        const o = asRecord(rawOption)
        const description = asString(o.description)
        return { label: asString(o.label) ?? "", ...(description !== undefined ? { description } : {}) }
      }),
    }
  })
}

export const makeApprovals = (
  ctx: SessionContext,
  /** The run in flight (a task's Waiting flag is cleared under it). */
  runId: () => string | undefined,
): Approvals => {
  const requests = new Map<string, PendingRequest>()

  const resolvedEvent = (pending: PendingRequest, reason: string): AgentEvent => {
    const where = {
      session_id: ctx.sid,
      reason,
      ...(pending.runId ? { run_id: pending.runId } : {}),
      ...(pending.taskId ? { task_id: pending.taskId } : {}),
    }
    return pending.kind === "question"
      ? { type: "question_resolved", question_id: pending.requestId, ...where }
      : { type: "approval_resolved", approval_id: pending.requestId, ...where }
  }

  /** Forget a request; its task stops waiting unless another of its requests is open. */
  const release = (pending: PendingRequest) =>
    Effect.suspend(() => {
      requests.delete(pending.requestId)
      const taskId = pending.taskId
      if (!taskId || [...requests.values()].some((other) => other.taskId === taskId)) return Effect.void
      return ctx.emitAll(ctx.mapper.setTaskWaiting(taskId, false, runId()))
    })

  const open = (requestId: string, request: CanUseToolRequest, runId: string) =>
    Effect.gen(function* () {
      const toolName = request.tool_name
      const input = asRecord(request.input)
      const taskId = request.agent_id ? ctx.mapper.taskForAgent(request.agent_id) : undefined
      const suggestions = request.permission_suggestions ?? undefined
      const pending: PendingRequest = {
        requestId,
        kind: toolName === "AskUserQuestion" ? "question" : "approval",
        toolName,
        toolUseId: request.tool_use_id ?? undefined,
        input,
        suggestions,
        taskId,
        runId,
      }
      requests.set(requestId, pending)
      const base = { session_id: ctx.sid, run_id: runId, ...(taskId ? { task_id: taskId } : {}) }
      if (taskId) yield* ctx.emitAll(ctx.mapper.setTaskWaiting(taskId, true, runId))
      if (pending.kind === "question")
        return yield* ctx.emit({
          ...base,
          type: "QuestionAsked",
          question_id: requestId,
          questions: questionsOf(input),
        })
      const description = request.description ?? undefined
      yield* ctx.emit({
        ...base,
        type: "ApprovalRequested",
        approval_id: requestId,
        ...(pending.toolUseId ? { tool_call_id: pending.toolUseId } : {}),
        tool_name: toolName,
        title: request.title ?? request.display_name ?? description ?? toolName,
        input,
        ...(description ? { description } : {}),
        can_always: (suggestions?.length ?? 0) > 0,
      })
    })

  const answer = Effect.fn("claude.session.answer")(function* (
    requestId: string,
    kind: PendingRequest["kind"],
    channel: ControlChannel | undefined,
    response: (p: PendingRequest) => unknown,
  ) {
    const pending = requests.get(requestId)
    if (!pending || pending.kind !== kind || !channel)
      return yield* Effect.fail(new ApprovalNotFound({ approvalId: requestId }))
    yield* release(pending)
    yield* channel.respond(requestId, response(pending))
  })

  const answerApproval = (
    reply: ApprovalAnswer,
    channel: ControlChannel | undefined,
    modeFor?: (toolName: string) => string | undefined,
  ) =>
    answer(reply.approvalId, "approval", channel, (pending) => {
      if (reply.decision === "deny")
        return { behavior: "deny", message: reply.message ?? "The user declined this action." }
      const setMode = modeFor?.(pending.toolName)
      const updates = [
        ...(reply.decision === "allow_always" ? (pending.suggestions ?? []) : []),
        // In the same answer, so no call after the accepted plan runs in plan mode.
        ...(setMode ? [{ type: "setMode", mode: setMode, destination: "session" }] : []),
      ]
      return {
        behavior: "allow",
        updatedInput: reply.updatedInput ?? pending.input,
        ...(updates.length > 0 ? { updatedPermissions: updates } : {}),
      }
    })

  const answerQuestion = (reply: QuestionAnswer, channel: ControlChannel | undefined) =>
    answer(reply.questionId, "question", channel, (pending) => ({
      behavior: "allow",
      // `questions` must survive untouched: the CLI validates updatedInput against the tool's schema.
      updatedInput: {
        ...pending.input,
        answers: reply.answers,
        ...(reply.response !== undefined ? { response: reply.response } : {}),
      },
    }))

  const withdraw = (requestId: string) =>
    Effect.gen(function* () {
      const pending = requests.get(requestId)
      if (!pending) return
      yield* release(pending)
      yield* ctx.emit(resolvedEvent(pending, "withdrawn"))
    })

  const settleAll = (reason: string, denyThrough?: ControlChannel) =>
    Effect.gen(function* () {
      for (const pending of [...requests.values()]) {
        yield* release(pending)
        if (denyThrough)
          yield* denyThrough.respond(pending.requestId, { behavior: "deny", message: "The user cancelled." })
        yield* ctx.emit(resolvedEvent(pending, reason))
      }
    })

  return {
    open,
    answerApproval,
    answerQuestion,
    withdraw,
    settleAll,
    openCount: () => requests.size,
  }
}

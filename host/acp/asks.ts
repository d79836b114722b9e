/**
 * Approvals and questions as the client's requests: an `ApprovalRequested`
 * becomes `session/request_permission`, a `QuestionAsked` an
 * `elicitation/create` form (when the client declares form elicitation) or
 * one permission request per question; the answer goes back to the provider.
 * Rules kept: every open request is registered on its session (`asks`), so a
 * withdrawal (the CLI's, a cancel, a close) aborts it and the SDK sends
 * `$/cancel_request`; a withdrawn request answers nothing; a client request
 * that fails is a denial (or no answer to a question), never a hang.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { AgentEvent } from "../../sdk/protocol.ts"
import type { Host } from "../core/host.ts"
import {
  answerFromOption,
  type Answers,
  answersFromForm,
  approvalOptions,
  DECLINED,
  decisionOf,
  questionForm,
  questionOptions,
} from "./questions.ts"
import type { AcpSession } from "./session.ts"
import { acpKind, parentMeta } from "./updates.ts"

export interface AsksOptions {
  /** The host's `call` (the host may still be starting: calls wait for it). */
  readonly host: Pick<Host, "call">
  readonly agentId: string
  readonly log: (message: string) => void
  /** The connection's client, once connected. */
  readonly client: () => acp.AgentContext | undefined
  /** Did the client declare form elicitation? */
  readonly elicitation: () => boolean
}

export const makeAsks = (options: AsksOptions) => {
  const ask = async <R>(session: AcpSession, id: string, request: (signal: AbortSignal) => Promise<R>) => {
    const controller = new AbortController()
    session.asks.set(id, controller)
    try {
      return await request(controller.signal)
    } catch (error) {
      // Withdrawn (by the CLI, a cancel or a close): the provider already settled it.
      if (controller.signal.aborted) return undefined
      options.log(`client request failed: ${error instanceof Error ? error.message : String(error)}`)
      return null
    } finally {
      if (session.asks.get(id) === controller) session.asks.delete(id)
    }
  }

  const askApproval = async (session: AcpSession, e: Extract<AgentEvent, { type: "ApprovalRequested" }>) => {
    const toolCallId = e.tool_call_id ?? e.approval_id
    const known = session.updates.calls.get(toolCallId)
    const response = await ask(session, e.approval_id, (signal) =>
      options.client()!.request(
        "session/request_permission",
        {
          sessionId: session.id,
          toolCall: {
            toolCallId,
            title: e.title,
            status: "pending",
            rawInput: e.input,
            ...(known === undefined && { kind: acpKind(e.tool_name === "Bash" ? "execute" : "other") }),
            ...parentMeta(e.task_id, e.tool_name),
          },
          options: approvalOptions(e.tool_name, e.can_always === true),
        },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      ),
    )
    if (response === undefined) return
    const decision = response === null ? "deny" : decisionOf(response.outcome)
    await options.host
      .call(options.agentId, "answerApproval", {
        sessionId: session.id,
        approvalId: e.approval_id,
        decision,
        ...(decision === "deny" && { message: "The user rejected this action." }),
      })
      .catch((error: unknown) => options.log(`answerApproval: ${String(error)}`))
  }

  const askQuestion = async (session: AcpSession, e: Extract<AgentEvent, { type: "QuestionAsked" }>) => {
    let answers: Answers = {}
    if (options.elicitation()) {
      const response = await ask(session, e.question_id, (signal) =>
        options.client()!.request(
          "elicitation/create",
          {
            mode: "form",
            sessionId: session.id,
            message: e.questions.map((q) => q.question).join("\n"),
            requestedSchema: questionForm(e.questions),
          },
          { cancellationSignal: signal, stopWaitingOnCancel: true },
        ),
      )
      if (response === undefined) return
      if (response?.action === "accept")
        answers = answersFromForm(e.questions, (response as { content?: Record<string, unknown> }).content)
    } else {
      for (const [index, question] of e.questions.entries()) {
        const response = await ask(session, e.question_id, (signal) =>
          options.client()!.request(
            "session/request_permission",
            {
              sessionId: session.id,
              toolCall: {
                toolCallId: `${e.question_id}/${index + 1}`,
                title: question.header ? `${question.header}: ${question.question}` : question.question,
                kind: "other",
                status: "pending",
                rawInput: question,
                ...parentMeta(e.task_id, "AskUserQuestion"),
              },
              options: questionOptions(question),
            },
            { cancellationSignal: signal, stopWaitingOnCancel: true },
          ),
        )
        if (response === undefined) return
        const label = response ? answerFromOption(question, response.outcome) : undefined
        if (label !== undefined) answers[question.question] = question.multi_select ? [label] : label
      }
    }
    const none = Object.keys(answers).length === 0
    await options.host
      .call(options.agentId, "answerQuestion", {
        sessionId: session.id,
        questionId: e.question_id,
        answers,
        ...(none && { response: DECLINED }),
      })
      .catch((error: unknown) => options.log(`answerQuestion: ${String(error)}`))
  }

  return { askApproval, askQuestion }
}

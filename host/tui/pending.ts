/**
 * The approvals and questions waiting for the person, oldest first: the
 * next typed line answers the head (answers.ts reads it), and its prompt
 * says what is asked. Nobody at a keyboard (a one-shot run, a pipe):
 * answered at once by the chat's policy, saying so.
 */
import type { AgentEvent, ApprovalDecision, Question } from "../../sdk/protocol.ts"
import { answerFor, parseApprovalAnswer, parseQuestionReply } from "./answers.ts"
import type { ChatContext, Pending as PendingView } from "./context.ts"

type Pending =
  | { readonly kind: "approval"; readonly id: string; readonly tool: string; readonly canAlways: boolean }
  | {
      readonly kind: "question"
      readonly id: string
      readonly questions: ReadonlyArray<Question>
      readonly answers: Record<string, string | ReadonlyArray<string>>
      response?: string
    }

/** What "always" holds for: the plugin answers with a session-scoped rule, never a saved one. */
export const ALWAYS_HOLDS = "until this session ends (not saved to settings)"

export class PendingAnswers implements PendingView {
  private readonly list: Pending[] = []

  constructor(private readonly ctx: ChatContext) {}

  get waiting(): boolean {
    return this.list.length > 0
  }

  clear(): void {
    this.list.length = 0
  }

  /** Answered elsewhere, or withdrawn by the agent. */
  resolved(id: string): void {
    const at = this.list.findIndex((p) => p.id === id)
    if (at >= 0) this.list.splice(at, 1)
  }

  private get reason(): string {
    return this.ctx.options.policyReason ?? "policy"
  }

  onApproval(e: Extract<AgentEvent, { type: "ApprovalRequested" }>): void {
    const policy = this.ctx.options.approvals ?? "ask"
    if (policy !== "ask") {
      const decision: ApprovalDecision = policy
      this.ctx.say(
        this.ctx.paint("dim", `  → ${decision === "allow" ? "allowed" : "denied"} (${this.reason})`),
      )
      void this.answerApproval(e.approval_id, decision)
      return
    }
    this.list.push({
      kind: "approval",
      id: e.approval_id,
      tool: e.tool_name,
      canAlways: e.can_always !== false,
    })
  }

  onQuestion(e: Extract<AgentEvent, { type: "QuestionAsked" }>): void {
    if ((this.ctx.options.questions ?? "ask") === "first") {
      const answers: Record<string, string | ReadonlyArray<string>> = {}
      for (const q of e.questions) {
        const first = q.options[0]?.label ?? ""
        answers[q.question] = q.multi_select ? [first] : first
      }
      this.ctx.say(
        this.ctx.paint("dim", `  → answered: ${Object.values(answers).flat().join(", ")} (${this.reason})`),
      )
      void this.answerQuestion(e.question_id, answers)
      return
    }
    this.list.push({ kind: "question", id: e.question_id, questions: e.questions, answers: {} })
  }

  /** The input line's prompt while something waits; undefined when nothing does. */
  prompt(): string | undefined {
    const head = this.list[0]
    const { paint } = this.ctx
    if (head?.kind === "approval")
      return `${paint(["yellow", "bold"], `allow ${head.tool}?`)} ${paint("dim", head.canAlways ? "a/d/A" : "a/d")} › `
    if (head?.kind === "question") {
      const q = head.questions[Object.keys(head.answers).length]
      return `${paint(["yellow", "bold"], q?.header ?? "answer")} ${paint("dim", q?.multi_select ? "1,2…/text" : "number/text")} › `
    }
    return undefined
  }

  /** A typed line answers the head: a bad answer is asked again, a whole one is sent. */
  answer(line: string): void {
    const head = this.list[0]
    if (!head) return
    if (head.kind === "approval") {
      this.answerHeadApproval(head, line)
      return
    }
    const question = head.questions[Object.keys(head.answers).length]
    if (!question) return
    const reply = parseQuestionReply(question, line)
    if (!reply || reply.kind === "invalid") {
      this.ctx.say(
        this.ctx.paint("yellow", `  ${reply?.message ?? "type an option number, or your own answer"}`),
      )
      return
    }
    head.answers[question.question] = answerFor(question, reply)
    if (reply.kind === "text") head.response = reply.text
    if (Object.keys(head.answers).length < head.questions.length) return
    this.list.shift()
    void this.answerQuestion(head.id, head.answers, head.response)
  }

  private answerHeadApproval(head: Extract<Pending, { kind: "approval" }>, line: string): void {
    const { say, paint } = this.ctx
    const answer = parseApprovalAnswer(line)
    if (!answer || (answer.decision === "allow_always" && !head.canAlways)) {
      say(
        paint(
          "yellow",
          `  answer a (allow), d (deny; d <reason> tells the agent why)${head.canAlways ? ` or A (always, ${ALWAYS_HOLDS})` : ""}`,
        ),
      )
      return
    }
    this.list.shift()
    if (answer.decision === "allow_always") say(paint("dim", `  → ${head.tool} allowed ${ALWAYS_HOLDS}`))
    if (answer.message) say(paint("dim", `  → denied; the agent is told: ${answer.message}`))
    void this.answerApproval(head.id, answer.decision, answer.message)
  }

  private answerApproval(approvalId: string, decision: ApprovalDecision, message?: string) {
    const sessionId = this.ctx.state.sessionId!
    return this.ctx.attempt(undefined, "the request may have been withdrawn; the run goes on", () =>
      this.ctx.call("answerApproval", {
        sessionId,
        approvalId,
        decision,
        ...(message !== undefined && { message }),
      }),
    )
  }

  private answerQuestion(
    questionId: string,
    answers: Record<string, string | ReadonlyArray<string>>,
    response?: string,
  ) {
    const sessionId = this.ctx.state.sessionId!
    return this.ctx.attempt(undefined, "the question may have been withdrawn", () =>
      this.ctx.call("answerQuestion", {
        sessionId,
        questionId,
        answers,
        ...(response !== undefined && { response }),
      }),
    )
  }
}

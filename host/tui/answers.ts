/**
 * What a line typed at the prompt means while the agent waits for an answer:
 * an approval (a = allow, d = deny, A = always for the session) or a question
 * (option numbers, or free text).
 */
import type { ApprovalDecision, Question } from "../../sdk/protocol.ts"

/**
 * A deny may carry the reason the agent is told: `d <reason>`,
 * `deny <reason>`. Other answers are one word.
 */
export const parseApprovalAnswer = (
  line: string,
): { readonly decision: ApprovalDecision; readonly message?: string } | undefined => {
  const [word = "", ...rest] = line.trim().split(/\s+/)
  const decision = parseApproval(word)
  const reason = rest.join(" ").trim()
  if (!decision) return undefined
  if (reason === "") return { decision }
  return decision === "deny" ? { decision, message: reason } : undefined
}

/** The decision a typed word names, or undefined when it names none. */
export const parseApproval = (line: string): ApprovalDecision | undefined => {
  const word = line.trim()
  // Case matters for the one-letter answers: `A` is "always", `a` is "once".
  if (word === "A") return "allow_always"
  switch (word.toLowerCase()) {
    case "a":
    case "y":
    case "yes":
    case "allow":
      return "allow"
    case "always":
      return "allow_always"
    case "d":
    case "n":
    case "no":
    case "deny":
      return "deny"
    default:
      return undefined
  }
}

export type QuestionReply =
  | { readonly kind: "options"; readonly labels: ReadonlyArray<string> }
  | { readonly kind: "text"; readonly text: string }
  /** Numbers only, but not the options' numbers: asked again, never sent as text. */
  | { readonly kind: "invalid"; readonly message: string }

/**
 * Option numbers (one, or several separated by commas or spaces for a
 * multi-select question) choose labels; anything else is the person's own
 * answer. An empty line answers nothing.
 */
export const parseQuestionReply = (question: Question, line: string): QuestionReply | undefined => {
  const text = line.trim()
  if (text === "") return undefined
  if (/^\d+([\s,]+\d+)*$/.test(text)) {
    const numbers = text.split(/[\s,]+/).map(Number)
    const picked = numbers.map((n) => question.options[n - 1]?.label)
    if (!picked.every((label): label is string => label !== undefined))
      return {
        kind: "invalid",
        message: `pick from 1 to ${question.options.length}, or type your own answer in words`,
      }
    if (!question.multi_select && picked.length > 1) return { kind: "invalid", message: "pick one option" }
    return { kind: "options", labels: [...new Set(picked)] }
  }
  return { kind: "text", text }
}

/** The answer map `answerQuestion` takes: labels (an array for multi-select), or the free text. */
export const answerFor = (
  question: Question,
  reply: Exclude<QuestionReply, { kind: "invalid" }>,
): string | ReadonlyArray<string> =>
  reply.kind === "text" ? reply.text : question.multi_select ? reply.labels : (reply.labels[0] ?? "")

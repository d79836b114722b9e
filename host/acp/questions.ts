/**
 * AskUserQuestion and approvals as ACP requests, as plain functions:
 * - an approval → `session/request_permission` options (allow once, allow
 *   always with what "always" means in its name, reject once), and the
 *   chosen option back to a decision;
 * - questions → one `elicitation/create` form (one property per question,
 *   its options as titled choices) when the client declares form
 *   elicitation, else one permission request per question (its options as
 *   `allow_once` choices, plus a skip); the answers keyed by question text,
 *   as the provider takes them.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { ApprovalDecision, Question } from "../../sdk/protocol.ts"

// ---------------------------------------------------------------------------
// Approvals

export const APPROVAL_OPTIONS = {
  once: "allow_once",
  always: "allow_always",
  reject: "reject_once",
} as const

export const approvalOptions = (toolName: string, canAlways: boolean): acp.PermissionOption[] => [
  { optionId: APPROVAL_OPTIONS.once, name: "Allow once", kind: "allow_once" },
  ...(canAlways
    ? [
        {
          optionId: APPROVAL_OPTIONS.always,
          // What "always" does: the CLI's own suggested rule, saved to the project's local settings.
          name: `Always allow — save Claude Code's suggested ${toolName} rule for this project`,
          kind: "allow_always" as const,
        },
      ]
    : []),
  { optionId: APPROVAL_OPTIONS.reject, name: "Reject", kind: "reject_once" },
]

/** The chosen option → the provider's decision; a cancelled request is a denial. */
export const decisionOf = (outcome: acp.RequestPermissionOutcome): ApprovalDecision =>
  outcome.outcome === "selected" && outcome.optionId === APPROVAL_OPTIONS.once
    ? "allow"
    : outcome.outcome === "selected" && outcome.optionId === APPROVAL_OPTIONS.always
      ? "allow_always"
      : "deny"

// ---------------------------------------------------------------------------
// Questions

export type Answers = Record<string, string | ReadonlyArray<string>>

const key = (index: number) => `q${index + 1}`

/** One form for every question of the call. */
export const questionForm = (questions: ReadonlyArray<Question>): acp.ElicitationSchema => {
  const properties: Record<string, acp.ElicitationPropertySchema> = {}
  questions.forEach((q, i) => {
    const choices = q.options.map((o) => ({
      const: o.label,
      title: o.label,
      ...(o.description !== undefined && { description: o.description }),
    }))
    properties[key(i)] = q.multi_select
      ? { type: "array", title: q.header ?? q.question, description: q.question, items: { anyOf: choices } }
      : { type: "string", title: q.header ?? q.question, description: q.question, oneOf: choices }
  })
  return { type: "object", properties, required: questions.map((_, i) => key(i)) }
}

/** The form's content → answers keyed by question text. Unknown or empty values are left out. */
export const answersFromForm = (
  questions: ReadonlyArray<Question>,
  content: Readonly<Record<string, unknown>> | null | undefined,
): Answers => {
  const answers: Answers = {}
  questions.forEach((q, i) => {
    const value = content?.[key(i)]
    if (typeof value === "string" && value !== "") answers[q.question] = value
    else if (Array.isArray(value)) {
      const labels = value.filter((v): v is string => typeof v === "string")
      if (labels.length > 0) answers[q.question] = labels
    }
  })
  return answers
}

const SKIP = "skip"

/** One question as a permission request's options: each choice, then a skip. */
export const questionOptions = (question: Question): acp.PermissionOption[] => [
  ...question.options.map((o, i) => ({
    optionId: `choice_${i}`,
    name: o.description ? `${o.label} — ${o.description}` : o.label,
    kind: "allow_once" as const,
  })),
  { optionId: SKIP, name: "Skip this question", kind: "reject_once" },
]

/** The option picked for a question → its label (undefined for skip or cancel). */
export const answerFromOption = (
  question: Question,
  outcome: acp.RequestPermissionOutcome,
): string | undefined => {
  if (outcome.outcome !== "selected" || outcome.optionId === SKIP) return undefined
  const index = Number(outcome.optionId.replace(/^choice_/, ""))
  return question.options[index]?.label
}

/** What the provider is told when the user gives no answer at all. */
export const DECLINED = "The user declined to answer."

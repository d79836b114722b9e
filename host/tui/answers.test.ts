import { describe, expect, it } from "vitest"
import type { Question } from "../../sdk/protocol.ts"
import { answerFor, parseApproval, parseApprovalAnswer, parseQuestionReply } from "./answers.ts"

const single: Question = {
  question: "Which color?",
  multi_select: false,
  options: [{ label: "Blue" }, { label: "Red" }, { label: "Green" }],
}
const multi: Question = { ...single, question: "Which colors?", multi_select: true }

describe("approval answers", () => {
  it("reads a, d and A, case mattering only for the one-letter always", () => {
    expect(parseApproval("a")).toBe("allow")
    expect(parseApproval(" yes ")).toBe("allow")
    expect(parseApproval("A")).toBe("allow_always")
    expect(parseApproval("always")).toBe("allow_always")
    expect(parseApproval("d")).toBe("deny")
    expect(parseApproval("D")).toBe("deny")
    expect(parseApproval("no")).toBe("deny")
    expect(parseApproval("maybe")).toBeUndefined()
    expect(parseApproval("")).toBeUndefined()
  })
})

describe("question answers", () => {
  it("takes an option number for a single choice", () => {
    const reply = parseQuestionReply(single, "2")
    expect(reply).toEqual({ kind: "options", labels: ["Red"] })
    expect(answerFor(single, reply as Extract<typeof reply, { kind: "options" }>)).toBe("Red")
  })

  it("takes several numbers for a multi-select, as an array", () => {
    const reply = parseQuestionReply(multi, "1, 3 1")
    expect(reply).toEqual({ kind: "options", labels: ["Blue", "Green"] })
    expect(answerFor(multi, reply as Extract<typeof reply, { kind: "options" }>)).toEqual(["Blue", "Green"])
  })

  it("reads anything else as the person's own answer", () => {
    expect(parseQuestionReply(single, "Purple, please")).toEqual({ kind: "text", text: "Purple, please" })
    expect(answerFor(single, { kind: "text", text: "Purple" })).toBe("Purple")
    expect(parseQuestionReply(single, "   ")).toBeUndefined()
  })

  it("asks again for a number that names no option, instead of sending it as text", () => {
    expect(parseQuestionReply(single, "9")).toEqual({
      kind: "invalid",
      message: `pick from 1 to ${single.options.length}, or type your own answer in words`,
    })
    expect(parseQuestionReply(single, "1,2")).toEqual({ kind: "invalid", message: "pick one option" })
  })
})

describe("approval answers with a reason", () => {
  it("takes a reason after a deny, and nothing after the other answers", () => {
    expect(parseApprovalAnswer("d not in prod")).toEqual({ decision: "deny", message: "not in prod" })
    expect(parseApprovalAnswer("deny  use the staging copy ")).toEqual({
      decision: "deny",
      message: "use the staging copy",
    })
    expect(parseApprovalAnswer("A")).toEqual({ decision: "allow_always" })
    expect(parseApprovalAnswer("a because")).toBeUndefined()
  })
})

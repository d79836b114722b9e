/** The offline demo ends with the same sign-in advice the ACP agent's auth error and chat give. */
import { describe, expect, it } from "vitest"
import { demoScenario } from "../../testkit/demo.ts"
import { makeView } from "../../testkit/request-view.ts"
import { SIGN_IN_ADVICE } from "./sign-in.ts"

describe("the sign-in advice", () => {
  it("is the demo's last words, with no front end's own command in it", async () => {
    const scenario = demoScenario("/w")
    const last = scenario.main.at(-1)
    const ended = scenario.exhausted?.(
      "main",
      makeView({ messages: [{ role: "user", content: "hi" }] }, "main", 0),
    )
    const words = JSON.stringify([
      typeof last === "function" ? await last(makeView({}, "main", 0)) : last,
      ended,
    ])
    expect(words.split(SIGN_IN_ADVICE)).toHaveLength(3)
    expect(words).not.toContain("npm start")
  })
})

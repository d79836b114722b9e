/**
 * What a stored chat reads back as, against the real CLI: a live option
 * change (set_model) is the CLI's own record, not a message the user typed;
 * the chat keeps the title the list gives it.
 */
import { describe, expect, it } from "vitest"
import { type RequestView, text } from "../testkit/model-server.ts"
import { closeWorldsAfterEach, createSession, promptItem, startWorld, type World } from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

describe("a stored chat reads back as it was had", () => {
  it("a live model change is not a user message, and a rewind after it still finds its prompts", async () => {
    world = await startWorld({ main: ["A1", "A2", "A3"].map((r) => (_: RequestView) => [text(r)]) })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "alpha", "i1")
    await w.host.call(w.agentId, "setOption", {
      sessionId: session_id,
      optionId: "model",
      value: "claude-haiku-5-5",
    })
    await promptItem(w, session_id, "beta", "i2")
    const read = await w.host.call(w.agentId, "readSession", { sessionId: session_id, cwd: w.sandbox.ws })
    const users = read.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : ""))
    expect(users).toEqual(["alpha", "beta"])
    const listed = await w.host.call(w.agentId, "listSessions", { cwd: w.sandbox.ws })
    expect(listed.sessions.find((s) => s.session_id === session_id)?.title).toBe("alpha")
    expect(read.title).toBe("alpha")
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i2" })
    await promptItem(w, session_id, "gamma", "i3")
    const after = await w.host.call(w.agentId, "readSession", { sessionId: session_id, cwd: w.sandbox.ws })
    expect(
      after.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : "")),
    ).toEqual(["alpha", "gamma"])
  })
})

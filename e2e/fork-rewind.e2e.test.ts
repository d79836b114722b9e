/**
 * A fork continues the branch the chat is on: after a rewind, the abandoned
 * branch is still in the CLI's file, and the fork must not take it. Proven by
 * what the scripted model receives in the fork's first request.
 */
import { describe, expect, it } from "vitest"
import { type RequestView, text } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  promptItem,
  startWorld,
  userTexts,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

describe("fork after rewind", () => {
  const scripted = () => {
    const seen: string[][] = []
    const answer = (reply: string) => (req: RequestView) => {
      seen.push(userTexts(req))
      return [text(reply)]
    }
    return { seen, main: ["A1", "A2", "A3", "A4", "A5"].map(answer) }
  }

  it("alpha, beta, rewind to beta, gamma, fork: the fork's model sees alpha and gamma, never beta", async () => {
    const { seen, main } = scripted()
    world = await startWorld({ main })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "alpha", "i1")
    await promptItem(w, session_id, "beta", "i2")
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i2" })
    await promptItem(w, session_id, "gamma", "i3")
    expect(seen[2]).toEqual(["alpha", "gamma"])
    const fork = await w.host.call(w.agentId, "forkSession", { sessionId: session_id, cwd: w.sandbox.ws })
    await promptItem(w, fork.session_id, "delta", "f1")
    expect(seen[3]).toEqual(["alpha", "gamma", "delta"])
    // The fork reads back as the branch it continued.
    const read = await w.host.call(w.agentId, "readSession", {
      sessionId: fork.session_id,
      cwd: w.sandbox.ws,
    })
    const users = read.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : ""))
    expect(users).toEqual(["alpha", "gamma", "delta"])
  })

  it("a fork of a chat rewound to nothing continues the new conversation", async () => {
    const { seen, main } = scripted()
    world = await startWorld({ main })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "alpha", "i1")
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i1" })
    await promptItem(w, session_id, "gamma", "i2")
    const fork = await w.host.call(w.agentId, "forkSession", { sessionId: session_id, cwd: w.sandbox.ws })
    await promptItem(w, fork.session_id, "delta", "f1")
    expect(seen.at(-1)).toEqual(["gamma", "delta"])
  })

  it("a stored chat rewound then resumed in a new host process forks its current branch too", async () => {
    const { seen, main } = scripted()
    world = await startWorld({ main })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "alpha", "i1")
    await promptItem(w, session_id, "beta", "i2")
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i2" })
    await promptItem(w, session_id, "gamma", "i3")
    await w.host.call(w.agentId, "closeSession", { sessionId: session_id })
    const fork = await w.host.call(w.agentId, "forkSession", { sessionId: session_id, cwd: w.sandbox.ws })
    await promptItem(w, fork.session_id, "delta", "f1")
    expect(seen.at(-1)).toEqual(["alpha", "gamma", "delta"])
  })
})

/**
 * A fork continues the branch the chat is on: after a rewind, the abandoned
 * branch is still in the CLI's file, and the fork must not take it. Proven by
 * what the scripted model receives in the fork's first request. And a fork
 * is a chat with the origin's history from the moment it is made (the CLI
 * writes its file only at its first prompt): it lists, reads back, and every
 * prompt it shows can be rewound to by the host's own item ids.
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
    return { seen, main: ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8"].map(answer) }
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

  it("a fork lists before its first prompt, reads back the origin's chat, and rewinds to any prompt it shows", async () => {
    const { seen, main } = scripted()
    world = await startWorld({ main })
    const w = world
    const cwd = w.sandbox.ws
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "alpha", "i1")
    await promptItem(w, session_id, "beta", "i2")
    await promptItem(w, session_id, "gamma", "i3")
    const fork = (await w.host.call(w.agentId, "forkSession", { sessionId: session_id, cwd })).session_id
    // Before any prompt in it (the CLI has written nothing of it yet): listed, under the origin's title.
    const listed = (await w.host.call(w.agentId, "listSessions", { cwd })).sessions
    expect(listed.map((s) => s.session_id).sort()).toEqual([session_id, fork].sort())
    expect(listed.find((s) => s.session_id === fork)?.title).toBe("alpha")
    const users = async (id: string) =>
      (await w.host.call(w.agentId, "readSession", { sessionId: id, cwd })).items
        .filter((i) => i.type === "user")
        .map((i) => (i.type === "user" ? i.text : ""))
    expect(await users(fork)).toEqual(["alpha", "beta", "gamma"])
    // Rewound by the origin's item id before its first prompt: it copies the origin again, cut there.
    await w.host.call(w.agentId, "rollback", { sessionId: fork, itemId: "i3" })
    expect(await users(fork)).toEqual(["alpha", "beta"])
    await promptItem(w, fork, "delta", "f1")
    expect(seen.at(-1)).toEqual(["alpha", "beta", "delta"])
    // Written now: an inherited prompt is still one to rewind to, by the host's id.
    await w.host.call(w.agentId, "rollback", { sessionId: fork, itemId: "i2" })
    await promptItem(w, fork, "epsilon", "f2")
    expect(seen.at(-1)).toEqual(["alpha", "epsilon"])
    // The origin is untouched.
    await promptItem(w, session_id, "zeta", "i4")
    expect(seen.at(-1)).toEqual(["alpha", "beta", "gamma", "zeta"])
    // A fork closed before its first prompt resumes as that fork, not as an empty chat.
    const second = (await w.host.call(w.agentId, "forkSession", { sessionId: session_id, cwd })).session_id
    await w.host.call(w.agentId, "closeSession", { sessionId: second })
    await w.host.call(w.agentId, "resumeSession", { sessionId: second, cwd })
    await promptItem(w, second, "eta", "s1")
    expect(seen.at(-1)).toEqual(["alpha", "beta", "gamma", "zeta", "eta"])
  })
})

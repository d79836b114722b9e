/**
 * Rollback and fork end to end: the real CLI resumes exactly the kept
 * messages (as the scripted model sees them in its next request).
 */
import { describe, expect, it } from "vitest"
import { type RequestView, text } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  ofType,
  promptItem,
  startWorld,
  userTexts,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

describe("rollback and fork against the real CLI", () => {
  it("rewinds to before a prompt, and to nothing under a new conversation", async () => {
    const seen: string[][] = []
    const answer = (reply: string) => (req: RequestView) => {
      seen.push(userTexts(req))
      return [text(reply)]
    }
    world = await startWorld({
      main: [answer("A1"), answer("A2"), answer("A3"), answer("A4")],
    })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "first question", "i1")
    await promptItem(w, session_id, "second question", "i2")
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i2" })
    await promptItem(w, session_id, "third question", "i3")
    expect(seen[2]).toEqual(["first question", "third question"])

    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: "i1" })
    await promptItem(w, session_id, "fourth question", "i4")
    expect(seen[3]).toEqual(["fourth question"])
    // The chat reads back from the new conversation its alias names.
    const transcript = await w.host.call(w.agentId, "readSession", {
      sessionId: session_id,
      cwd: w.sandbox.ws,
    })
    const users = transcript.items
      .filter((i) => i.type === "user")
      .map((i) => (i.type === "user" ? i.text : ""))
    expect(users).toEqual(["fourth question"])
    expect(ofType(w.events(session_id), "RunEnded").every((e) => e.outcome === "Completed")).toBe(true)
  })

  it("rewinds by a stored user item's id (from readSession) after the chat was resumed", async () => {
    const seen: string[][] = []
    const answer = (reply: string) => (req: RequestView) => {
      seen.push(userTexts(req))
      return [text(reply)]
    }
    world = await startWorld({ main: [answer("A1"), answer("A2"), answer("A3")] })
    const w = world
    const { session_id } = await createSession(w)
    await promptItem(w, session_id, "first question", "i1")
    await promptItem(w, session_id, "second question", "i2")
    // A new process on the stored conversation: the live prompt ids are gone with the old one.
    await w.host.call(w.agentId, "closeSession", { sessionId: session_id })
    await w.host.call(w.agentId, "resumeSession", { sessionId: session_id, cwd: w.sandbox.ws })
    const stored = await w.host.call(w.agentId, "readSession", { sessionId: session_id, cwd: w.sandbox.ws })
    const users = stored.items.filter((i) => i.type === "user")
    expect(users.map((u) => (u.type === "user" ? u.text : ""))).toEqual(["first question", "second question"])
    // The id is the record's uuid, which is the UUID the prompt went out with.
    expect(users[1]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/)
    await w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: users[1]!.id })
    await promptItem(w, session_id, "replacement question", "i3")
    expect(seen[2]).toEqual(["first question", "replacement question"])
    const after = await w.host.call(w.agentId, "readSession", { sessionId: session_id, cwd: w.sandbox.ws })
    expect(
      after.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : "")),
    ).toEqual(["first question", "replacement question"])
    // The rewound prompt's id is gone with its branch.
    await expect(
      w.host.call(w.agentId, "rollback", { sessionId: session_id, itemId: users[1]!.id }),
    ).rejects.toThrow(/not known/)
  })

  it("forks a conversation into a new chat that keeps its history and options", async () => {
    const seen: Array<{ texts: string[]; model: string }> = []
    const answer = (reply: string) => (req: RequestView) => {
      seen.push({ texts: userTexts(req), model: req.model })
      return [text(reply)]
    }
    world = await startWorld({ main: [answer("A1"), answer("F1"), answer("A2")] })
    const w = world
    const { session_id } = await createSession(w, { options: { model: "claude-sonnet-5-5" } })
    await promptItem(w, session_id, "origin question", "o1")
    const forked = await w.host.call(w.agentId, "forkSession", {
      sessionId: session_id,
      newSessionId: "00000000-0000-4000-8000-00000000f0a1",
      cwd: w.sandbox.ws,
    })
    expect(forked.session_id).toBe("00000000-0000-4000-8000-00000000f0a1")
    await promptItem(w, forked.session_id, "fork question", "f1")
    expect(seen[1]).toEqual({ texts: ["origin question", "fork question"], model: "claude-sonnet-5-5" })
    await promptItem(w, session_id, "origin again", "o2")
    expect(seen[2]?.texts).toEqual(["origin question", "origin again"])
    const list = await w.host.call(w.agentId, "listSessions", { cwd: w.sandbox.ws })
    expect(list.sessions.map((s) => s.session_id).sort()).toEqual([session_id, forked.session_id].sort())
  })
})

/**
 * Live sessions end to end: the plugin inside host/, the real CLI, the
 * scripted model. Each test has its own model script, sandbox and host.
 */
import { afterEach, describe, expect, it } from "vitest"
import { text, thinking } from "../testkit/model-server.ts"
import { createSession, ofType, promptAndWait, startWorld, type World } from "./harness.ts"

let world: World | undefined
afterEach(async () => {
  await world?.close()
  world = undefined
})

describe("live sessions against the real CLI", () => {
  it("streams reasoning and text and ends the run Completed with usage", async () => {
    world = await startWorld({
      main: [[thinking("Let me think about greetings."), text("Hello from the scripted model.")]],
    })
    const { session_id } = await createSession(world)
    const { ended } = await promptAndWait(world, session_id, "Say hello")
    expect(ended.outcome).toBe("Completed")
    const events = world.events(session_id)
    const reasoning = ofType(events, "ReasoningDelta")
      .map((e) => e.text)
      .join("")
    const said = ofType(events, "TextDelta")
      .map((e) => e.text)
      .join("")
    expect(reasoning).toContain("Let me think about greetings.")
    expect(said).toBe("Hello from the scripted model.")
    expect(ofType(events, "RunStarted")).toHaveLength(1)
    expect(ended.usage?.output_tokens).toBeGreaterThan(0)
  })
})

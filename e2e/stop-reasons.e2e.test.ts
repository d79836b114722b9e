/**
 * Why the model stopped, end to end: the scripted model ends its messages
 * max_tokens or refusal, the real CLI retries as it does (2.1.332: three
 * more requests after max_tokens, one after a refusal) and ends the turn
 * with its own error message, and the run ends Completed with
 * `RunEnded.stop_reason` saying why (map/turn.ts).
 */
import { describe, expect, it } from "vitest"
import { message, type Scenario, text } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  ofType,
  promptAndWait,
  startWorld,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

/** Every main request answered with `reason`, then a plain answer for the next prompt. */
const stoppingWith = (reason: string): Scenario => ({
  main: [],
  exhausted: (_conversation, req) =>
    req.lastUserText().includes("Say fine")
      ? [text("Fine.")]
      : message([text("Cut short")], { stopReason: reason }),
})

describe("stop reasons against the real CLI", () => {
  for (const reason of ["max_tokens", "refusal"]) {
    it(`a turn the model ends ${reason} (after the CLI's retries) ends Completed, stop_reason ${reason}; the next ends end_turn`, async () => {
      world = await startWorld(stoppingWith(reason))
      const { session_id } = await createSession(world)
      const first = await promptAndWait(world, session_id, "Write a lot")
      expect(first.ended.outcome).toBe("Completed")
      expect(first.ended.stop_reason).toBe(reason)
      // The CLI's own message saying what happened reaches the host as text.
      expect(
        ofType(world.events(session_id), "TextDelta")
          .map((e) => e.text)
          .join(""),
      ).toContain("API Error")
      const next = await promptAndWait(world, session_id, "Say fine")
      expect(next.ended.outcome).toBe("Completed")
      expect(next.ended.stop_reason).toBe("end_turn")
    })
  }
})

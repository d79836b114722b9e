/**
 * A followed workflow is let go once it finished (workflow/follow.ts): its
 * record handed to the mapper once, the follower idle again (no polling per
 * frame), and a late signal for it ignored; a session running workflow
 * after workflow keeps none of them.
 */
import { Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import type { Mapper } from "../map.ts"
import { brokerContext } from "../sdk/context.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { makeWorkflowFollower } from "./follow.ts"

describe("following workflows", () => {
  it("lets a finished workflow go, and ignores a late signal for it", async () => {
    const finished: string[] = []
    const mapper = {
      taskForAgent: () => undefined,
      mapAgentRecords: () => [],
      finishWorkflow: (taskId: string) => {
        finished.push(taskId)
        return []
      },
    } as unknown as Mapper
    const forks: Array<Fiber.Fiber<unknown>> = []
    const follower = makeWorkflowFollower({
      mapper: () => mapper,
      runId: () => undefined,
      emitAll: () => Effect.void,
      fork: (effect) =>
        Effect.forkDetach(Effect.ignore(effect)).pipe(
          Effect.tap((fiber) => Effect.sync(() => void forks.push(fiber))),
        ),
      record: { attempts: 1, delayMs: 0 },
    })
    const context = brokerContext(makeMemoryBroker().api)
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let n = 0; n < 3; n++) {
          const taskId = `toolu_wf_${n}`
          const transcriptDir = `/home/user/.claude/projects/x/s/workflows/wf_${n}`
          yield* follower.onSignal({ type: "workflow", taskId, transcriptDir, finished: false })
          expect(follower.active()).toBe(true)
          yield* follower.onSignal({ type: "workflow", taskId, finished: true })
          yield* Fiber.joinAll(forks.splice(0))
          expect(follower.active()).toBe(false)
          // The CLI repeats itself: nothing is read or handed on again.
          yield* follower.onSignal({ type: "workflow", taskId, finished: true })
          yield* Fiber.joinAll(forks.splice(0))
          expect(follower.active()).toBe(false)
        }
      }).pipe(Effect.provideContext(context)),
    )
    expect(finished).toEqual(["toolu_wf_0", "toolu_wf_1", "toolu_wf_2"])
  })
})

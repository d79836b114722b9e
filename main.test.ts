/**
 * activate's order (main.ts): the default agent is provided before the Rust
 * plugin's legacy state is read into storage, yet a call made in between
 * (an early resume) waits for that import and finds the imported state.
 */
import { Deferred, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { activate } from "./main.ts"
import { makeFakePeer } from "./sdk/testing/fake-peer.ts"
import { makeMemoryBroker } from "./sdk/testing/memory-broker.ts"

const DATA = "/data/plugins/convergence-claude"
const WS = "/work/ws"

describe("activate", () => {
  it("a resume called before the legacy import ends waits for it: the imported alias is resumed", () =>
    Effect.runPromise(
      Effect.gen(function* () {
        const peer = yield* makeFakePeer
        const broker = makeMemoryBroker({
          data: DATA,
          files: {
            [`${WS}/README.md`]: "ws",
            [`${DATA}/legacy/sessions/s-1.json`]: JSON.stringify({ cli: "c-1", sent: {} }),
          },
          spawn: { claude: peer.spawn },
          run: { claude: () => Effect.succeed({ code: 0, stdout: "2.1.332 (Claude Code)", stderr: "" }) },
        })
        // The legacy folder answers only when the test says so (a slow disk, a busy host).
        const gate = yield* Deferred.make<void>()
        const api = {
          ...broker.api,
          fs: {
            ...broker.api.fs,
            list: (dir: string) =>
              dir.includes("/legacy/")
                ? Effect.andThen(Deferred.await(gate), broker.api.fs.list(dir))
                : broker.api.fs.list(dir),
          },
        }
        const activating = yield* Effect.forkChild(activate(api, { timeouts: { controlMs: 2_000 } }))
        while (!broker.agents.has("claude")) yield* Effect.sleep(1)
        const resuming = yield* Effect.forkChild(
          broker.agent("claude").resumeSession({ sessionId: "s-1", cwd: WS }),
        )
        yield* Effect.sleep(20)
        expect(peer.processes).toEqual([])
        yield* Deferred.succeed(gate, undefined)
        yield* Fiber.join(activating)
        const proc = yield* peer.nextProcess
        // No stored transcript for c-1: it starts anew, under the imported alias, not the host's id.
        expect(proc.flag("--session-id")).toBe("c-1")
        const init = yield* proc.expectControl("initialize")
        yield* proc.respond(init.request_id, {})
        yield* Fiber.join(resuming)
        yield* broker.agent("claude").dispose()
      }),
    ))
})

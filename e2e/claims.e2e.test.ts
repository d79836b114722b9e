/**
 * Claims of the product notes that only the real CLI can settle (2.1.332,
 * scripted model): ultracode checked with `get_settings` at launch and sent
 * again after a model change; Full access chosen live on a session launched
 * in another mode (the allow flag on every launch); and, as root without
 * `IS_SANDBOX`, the CLI's refusal of that flag answered by launching without
 * it.
 */
import { describe, expect, it } from "vitest"
import { text } from "../testkit/model-server.ts"
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

const ALLOW = "--allow-dangerously-skip-permissions"
const isRoot = process.getuid?.() === 0

const ultracodeWarnings = (w: World, sessionId: string) =>
  ofType(w.events(sessionId), "Notice").filter((n) => n.level === "warning" && n.text.includes("Ultracode"))

describe("the product notes' claims against the real CLI", () => {
  it("ultracode: off at launch on a model without xhigh (a warning), on after switching to one", async () => {
    world = await startWorld({ main: [[text("one")], [text("two")]] })
    const w = world
    const { session_id } = await createSession(w, {
      options: { model: "claude-haiku-4-5", effort: "ultracode" },
    })
    await promptAndWait(w, session_id, "first")
    // get_settings at launch said ultracode did not apply.
    await w.waitFor(session_id, "Notice", (n) => n.text.includes("Ultracode"))
    await w.host.call(w.agentId, "setOption", {
      sessionId: session_id,
      optionId: "model",
      value: "claude-opus-5-5",
    })
    await promptAndWait(w, session_id, "second")
    const main = w.server.requests.filter((r) => r.conversation === "main")
    expect(main[0]?.effort).not.toBe("xhigh")
    const last = main[main.length - 1]
    expect(last?.model).toBe("claude-opus-5-5")
    // Ultracode runs as xhigh; get_settings after the change said it applied: no second warning.
    expect(last?.effort).toBe("xhigh")
    expect(ultracodeWarnings(w, session_id)).toHaveLength(1)
  })

  it("Full access chosen live on a session launched supervised", async () => {
    world = await startWorld({ main: [[text("one")]] })
    const w = world
    const { session_id } = await createSession(w, { options: { approval_mode: "supervised" } })
    expect(w.host.processes().some((p) => p.args.includes(ALLOW))).toBe(true)
    await w.host.call(w.agentId, "setOption", {
      sessionId: session_id,
      optionId: "approval_mode",
      value: "full",
    })
    await promptAndWait(w, session_id, "go")
    expect(ofType(w.events(session_id), "Notice").filter((n) => n.level === "error")).toEqual([])
  })

  it("as root without IS_SANDBOX the CLI refuses the allow flag: the session starts without it", async () => {
    world = await startWorld({ main: [[text("one")]] })
    const w = world
    w.env.IS_SANDBOX = undefined
    const { session_id } = await createSession(w)
    const args = w.host.processes().find((p) => p.args.includes("--session-id"))?.args ?? []
    // Not root: the CLI allows the flag, so it stays.
    expect(args.includes(ALLOW)).toBe(!isRoot)
    const { ended } = await promptAndWait(w, session_id, "hello")
    expect(ended.outcome).toBe("Completed")
  })
})

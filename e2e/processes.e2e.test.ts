/**
 * Nothing left behind: every process the CLI starts (a Bash command and its
 * children, in groups of their own) ends with its session, and a dead CLI
 * leaves host.processes() at once. Counted from /proc by the sandbox's HOME,
 * not from the broker's bookkeeping.
 */
import { describe, expect, it } from "vitest"
import { toolUse, text } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  eventually,
  processesOf,
  startWorld,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const SLEEP = "sleep 27"
/** The CLI refuses a bare long sleep; a command before it makes it an ordinary one. */
const COMMAND = `echo started && ${SLEEP}`
const sleeping = (w: World) => processesOf(w).filter((p) => p.cmdline.includes(SLEEP))

/** A session whose first prompt runs `sleep 27` in the CLI's Bash tool; resolves once it runs. */
const startSleeping = async () => {
  world = await startWorld({
    main: [[toolUse("Bash", { command: COMMAND, description: "Sleep" })], [text("done")]],
  })
  const w = world
  const { session_id } = await createSession(w, { options: { approval_mode: "full" } })
  const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "sleep" })
  await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
  expect(await eventually(() => sleeping(w).length > 0, 10_000)).toBe(true)
  return { w, sessionId: session_id, runId: run.run_id }
}

describe("the CLI's descendants end with the session", () => {
  it("closeSession while Bash runs: the CLI, bash and sleep are all gone when it returns", async () => {
    const { w, sessionId } = await startSleeping()
    expect(processesOf(w).length).toBeGreaterThanOrEqual(2)
    await w.host.call(w.agentId, "closeSession", { sessionId })
    expect(processesOf(w)).toEqual([])
    expect(w.host.processes()).toEqual([])
  })

  it("the CLI killed while Bash runs: it leaves host.processes() at once and its commands end without a close", async () => {
    const { w, sessionId, runId } = await startSleeping()
    const [claude] = w.host.processes().filter((p) => p.command === "claude")
    expect(claude).toBeDefined()
    process.kill(claude!.pid, "SIGKILL")
    await w.waitFor(sessionId, "RunEnded", (e) => e.run_id === runId, 15_000)
    expect(w.host.processes().map((p) => p.pid)).not.toContain(claude!.pid)
    expect(await eventually(() => processesOf(w).length === 0, 8_000)).toBe(true)
  })

  it("host.close while Bash runs ends every descendant", async () => {
    const { w } = await startSleeping()
    await w.close()
    expect(processesOf(w)).toEqual([])
  })
})

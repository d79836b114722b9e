/**
 * The plugin process killed in the middle of a real session (the real CLI
 * 2.1.332 running a tool, against the scripted model): the host reports it,
 * ends the run Failed, ends the session's `claude` (counted in the process
 * table, not only the broker's list), and the next call starts the plugin
 * again, which resumes the conversation where it was.
 */
import { describe, expect, it } from "vitest"
import { pidAlive } from "../host/testing/testing.ts"
import { text, toolUse } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  eventually,
  processesOf,
  promptAndWait,
  startWorld,
  strayClaudes,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

describe("the plugin process under a live session", () => {
  it("killed mid-turn: reported, its CLI ended, its run Failed; the next call restarts it and resumes", async () => {
    let resumedWith: string[] = []
    world = await startWorld({
      main: [
        [text("First answer.")],
        // Not a leading `sleep`: CLI 2.1.332 may refuse one at once (a gated rule; NOTES).
        [toolUse("Bash", { command: "echo started && sleep 30", description: "Sleep" })],
        (req) => {
          resumedWith = req.messages.map((m) => JSON.stringify(m.content))
          return [text("resumed")]
        },
      ],
    })
    const w = world
    const { session_id } = await createSession(w)
    await promptAndWait(w, session_id, "Remember the word HERON")
    const run = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "sleep now" })
    await w.waitFor(session_id, "ToolCallStarted", (e) => e.call.name === "Bash")
    // Killed while the command runs, so the turn cannot have ended first.
    expect(await eventually(() => processesOf(w).some((p) => p.cmdline.includes("sleep 30")), 20_000)).toBe(
      true,
    )
    const session = w.host.processes().find((p) => p.command === "claude" && p.args.includes(session_id))
    expect(session).toBeDefined()
    const plugin = w.host.pluginProcess()!
    process.kill(plugin.pid, "SIGKILL")

    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === run.run_id)
    expect(ended).toMatchObject({ outcome: "Failed", error: expect.stringContaining("plugin process died") })
    await plugin.exited
    expect(w.host.logger.entries.some((e) => e.level === "error" && e.message.includes("died"))).toBe(true)
    expect(w.host.processes()).toEqual([])
    expect(pidAlive(session!.pid)).toBe(false)
    expect(strayClaudes()).toEqual([])
    expect(w.host.pluginProcess()).toBeNull()

    // The next call starts the plugin again; the conversation resumes from the CLI's transcript.
    await w.host.call(w.agentId, "resumeSession", { sessionId: session_id, cwd: w.sandbox.ws })
    expect(w.host.pluginProcess()?.pid).not.toBe(plugin.pid)
    const { ended: next } = await promptAndWait(w, session_id, "are you back?")
    expect(next.outcome).toBe("Completed")
    expect(resumedWith.join("\n")).toContain("HERON")
    expect(w.host.processes().filter((p) => p.command === "claude")).toHaveLength(1)
  })
})

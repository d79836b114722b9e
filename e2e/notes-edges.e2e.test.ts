/**
 * The product notes' edges (issue 36) against the real CLI: the plugin
 * inside host/, the CLI under test, the scripted model.
 *
 * - CLAUDE_SETTING_SOURCES=user: the plugin reads the settings the CLI reads
 *   (no project skills, no project switch turning workflows off).
 * - closeSession racing createSession: close wins, at every point of the
 *   launch (before the spawn, during it, waiting for `initialize`).
 * - A chat whose first turn never got stored (its file holds only the CLI's
 *   first records, no prompt) reopens: the CLI refuses both `--session-id`
 *   and `--resume` for it, so it starts anew under an alias, and says so.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { encodeProjectPath, initialize, spawnClaude, standardArgs } from "../testkit/cli.ts"
import { text } from "../testkit/model-server.ts"
import {
  closeWorldsAfterEach,
  createSession,
  eventually,
  ofType,
  processesOf,
  promptAndWait,
  startWorld,
  type World,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const writeSkill = (dir: string, name: string) => {
  mkdirSync(join(dir, name), { recursive: true })
  writeFileSync(
    join(dir, name, "SKILL.md"),
    `---\nname: ${name}\ndescription: the ${name} skill\n---\nDo ${name}.\n`,
  )
}

describe("CLAUDE_SETTING_SOURCES", () => {
  it("user: the plugin's skills and workflow switch are the CLI's (project settings and skills skipped)", async () => {
    world = await startWorld({ main: [[text("ok")]] }, { env: { CLAUDE_SETTING_SOURCES: "user" } })
    const w = world
    writeSkill(join(w.sandbox.home, ".claude", "skills"), "userskill")
    writeSkill(join(w.sandbox.ws, ".claude", "skills"), "projskill")
    // The project would switch the user's skill and dynamic workflows off: the CLI reads neither.
    writeFileSync(
      join(w.sandbox.ws, ".claude", "settings.json"),
      JSON.stringify({ skillOverrides: { userskill: "off" }, enableWorkflows: false }),
    )
    // What the CLI itself lists with the same sources, in the same folder.
    const cli = spawnClaude(
      standardArgs({ sessionId: crypto.randomUUID(), extra: ["--setting-sources", "user"] }),
      {
        sandbox: w.sandbox,
        server: w.server,
      },
    )
    const answer = (await initialize(cli)) as { commands?: Array<{ name: string }> }
    await cli.close()
    const ours = (names: ReadonlyArray<string>) => names.filter((n) => n.endsWith("skill")).sort()
    expect(ours((answer.commands ?? []).map((c) => c.name))).toEqual(["userskill"])

    const { session_id } = await createSession(w, {
      options: { model: "claude-opus-5-5", effort: "ultracode" },
    })
    const skills = await w.waitFor(session_id, "Skills")
    expect(ours(skills.skills.map((s) => s.name))).toEqual(["userskill"])
    await promptAndWait(w, session_id, "hello")
    // Workflows are on for the CLI (its request offers the Workflow tool), and ultracode went out as asked.
    expect(w.server.requests.find((r) => r.conversation === "main")?.tools).toContain("Workflow")
    const proc = w.host.processes().find((p) => p.args.includes(session_id))
    expect(proc?.args[(proc?.args.indexOf("--effort") ?? -2) + 1]).toBe("ultracode")
    expect(ofType(w.events(session_id), "Notice").filter((n) => n.text.includes("Ultracode"))).toEqual([])
  })
})

describe("close while create launches", () => {
  it("close wins: create fails with a clear error and no claude is left, wherever the launch was", async () => {
    world = await startWorld({ main: [[text("never asked")]] })
    const w = world
    await w.host.call(w.agentId, "initialize")
    const spawned = (id: string) => w.host.processes().filter((p) => p.args.includes(id))
    // Before the spawn (no wait, a moment), while it spawns, once the process waits for initialize.
    const points: Array<(id: string) => Promise<unknown>> = [
      async () => {},
      () => new Promise((r) => setTimeout(r, 30)),
      () => new Promise((r) => setTimeout(r, 250)),
      (id) => eventually(() => spawned(id).length > 0, 20_000),
    ]
    for (const [at, waitFor] of points.entries()) {
      const sessionId = crypto.randomUUID()
      const creating = createSession(w, { sessionId }).then(
        () => "created",
        (error: unknown) => String(error),
      )
      await waitFor(sessionId)
      const pids = () => [...spawned(sessionId).map((p) => p.pid)]
      const seen = pids()
      await w.host.call(w.agentId, "closeSession", { sessionId })
      expect(await creating, `close at point ${at}`).toContain(
        "the session was closed while Claude Code was starting",
      )
      // Nothing of it runs: not in the broker's table, and no process with its id anywhere.
      expect(await eventually(() => pids().length === 0, 5_000)).toBe(true)
      for (const pid of seen) expect(() => process.kill(pid, 0)).toThrow()
      expect(processesOf(w).filter((p) => p.cmdline.includes(sessionId))).toEqual([])
      // The id is not open: a prompt to it is refused.
      await expect(w.host.call(w.agentId, "prompt", { sessionId, text: "hi" })).rejects.toThrow(sessionId)
    }
  })
})

describe("a chat whose first turn never got stored", () => {
  it("resumes: anew under an alias, with a notice, and lists and reads back under its own id", async () => {
    world = await startWorld({ main: [[text("fresh answer")]] })
    const w = world
    const sessionId = crypto.randomUUID()
    // What 2.1.332 writes first for a prompt, and nothing after (it died before the prompt's record).
    const project = join(w.sandbox.home, ".claude", "projects", encodeProjectPath(w.sandbox.ws))
    mkdirSync(project, { recursive: true })
    const stamp = new Date().toISOString()
    writeFileSync(
      join(project, `${sessionId}.jsonl`),
      ["enqueue", "dequeue"]
        .map((operation) =>
          JSON.stringify({ type: "queue-operation", operation, timestamp: stamp, sessionId }),
        )
        .join("\n") + "\n",
    )
    await w.host.call(w.agentId, "resumeSession", { sessionId, cwd: w.sandbox.ws })
    const notice = await w.waitFor(sessionId, "Notice", (n) => n.text.includes("starts anew as"))
    expect(notice.level).toBe("warning")
    const { ended } = await promptAndWait(w, sessionId, "hello again")
    expect(ended.outcome).toBe("Completed")
    // The CLI files it under the fresh id; the host keeps seeing its own.
    const fresh = /starts anew as ([0-9a-f-]{36})/.exec(notice.text)?.[1] as string
    expect(existsSync(join(project, `${fresh}.jsonl`))).toBe(true)
    const listed = await w.host.call(w.agentId, "listSessions", { cwd: w.sandbox.ws })
    expect(listed.sessions.map((s) => s.session_id)).toEqual([sessionId])
    const read = await w.host.call(w.agentId, "readSession", { sessionId, cwd: w.sandbox.ws })
    expect(read.items.filter((i) => i.type === "user").map((i) => (i.type === "user" ? i.text : ""))).toEqual(
      ["hello again"],
    )
  })
})

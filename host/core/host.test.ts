import { existsSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { AgentCallError, type Host, startHost } from "./host.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"

const repoRoot = join(import.meta.dirname, "../..")
const probeDir = join(import.meta.dirname, "../testing/fixtures/probe-plugin")

let world: TempWorld
let host: Host | undefined
beforeEach(() => {
  world = makeTempWorld()
})
afterEach(async () => {
  await host?.close()
  host = undefined
  world.cleanup()
})

describe("startHost with the repo's plugin", () => {
  it("activates main.ts, which registers the claude agent; initialize answers", async () => {
    host = await startHost({
      pluginDir: repoRoot,
      home: world.home,
      dataDir: world.hostData,
      env: { HOME: world.home, PATH: "/usr/bin:/bin" },
    })
    expect(host.manifest.id).toBe("convergence/claude")
    expect([...host.agents.keys()]).toContain("claude")
    expect(host.agent("claude").id).toBe("claude")
    const info = await host.call("claude", "initialize")
    expect(info).toMatchObject({ id: "claude" })
    expect(host.events.recorded).toContainEqual({ kind: "agent_provided", agentId: "claude" })
    expect(() => host!.agent("nobody")).toThrow(/no agent nobody/)
  })
})

describe("startHost with a probe plugin", () => {
  const start = async (env: Record<string, string | undefined> = {}) => {
    world.command(
      "claude",
      `#!/bin/sh\necho "ready in $PWD"\nwhile IFS= read -r l; do echo "echo:$l"; done\n`,
    )
    host = await startHost({
      pluginDir: probeDir,
      home: world.home,
      dataDir: world.hostData,
      env: { HOME: world.home, PATH: `${world.bin}:/usr/bin:/bin`, PROBE_GREETING: "Hello probe", ...env },
      killGraceMs: 500,
    })
    return host
  }

  it("runs a session end to end: workspace added from cwd, child process, events, host tool, log", async () => {
    const h = await start()
    world.write(join(world.workspace, "README.md"), "probe readme")
    const seen: string[] = []
    h.events.subscribe((e) => {
      if (e.kind === "agent_event") seen.push(e.event.type)
    })
    h.registerTool(
      "greet",
      { description: "greets", inputSchema: { type: "object" } },
      async (input, { sessionId }) => ({
        content: [{ type: "text", text: `hi ${(input as { name: string }).name} in ${sessionId}` }],
      }),
    )
    expect(h.tools()).toEqual([{ name: "greet", description: "greets", inputSchema: { type: "object" } }])

    expect((await h.call("probe", "initialize")).name).toBe("Hello probe")
    const opened = await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    expect(opened.session_id).toBe("s1")
    expect(h.broker.workspaces()).toEqual([world.workspace])
    const accepted = await h.call("probe", "prompt", { sessionId: "s1", text: "ping" })
    expect(accepted).toEqual({ run_id: "r1", steered: false })

    const events = h.events.agentEvents("probe")
    expect(events.map((e) => (e.type === "Notice" || e.type === "TextDelta" ? e.text : e.type))).toEqual([
      "readme: probe readme",
      `ready in ${world.workspace}`,
      "echo:ping",
      "hi ping in s1",
    ])
    expect(seen).toEqual(["Notice", "Notice", "TextDelta", "TextDelta"])
    const waited = await h.events.waitFor((e) => e.kind === "agent_event" && e.event.type === "TextDelta")
    expect(waited).toMatchObject({ agentId: "probe" })
    expect(h.logger.entries.some((e) => e.source === "plugin" && e.message === "prompted")).toBe(true)

    const pid = (h.storage.snapshot()["session:s1"] as { pid: number }).pid
    expect(pidAlive(pid)).toBe(true)
    expect(h.processes().map((p) => p.pid)).toEqual([pid])
    await h.close()
    expect(pidAlive(pid)).toBe(false)
    expect(h.processes()).toEqual([])
  })

  it("rejects with the AgentFailure's message and tag", async () => {
    const h = await start()
    const error = await h.call("probe", "getUsage").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AgentCallError)
    expect(error).toMatchObject({
      message: "the probe has no usage",
      tag: "ProbeFailure",
      method: "getUsage",
    })
    await expect(h.call("nobody", "initialize")).rejects.toThrow(/no agent nobody/)
  })

  it("an unknown host tool fails the plugin's call; a throwing tool answers an error result", async () => {
    const h = await start()
    world.write(join(world.workspace, "README.md"), "x")
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    await expect(h.call("probe", "prompt", { sessionId: "s1", text: "a" })).rejects.toThrow(
      "tools.call failed: the host has no tool greet",
    )
    h.registerTool("greet", { description: "", inputSchema: {} }, () => {
      throw new Error("boom")
    })
    await h.call("probe", "prompt", { sessionId: "s1", text: "b" })
    expect(h.events.agentEvents().at(-1)).toMatchObject({ type: "TextDelta", text: "greet failed: boom" })
  })

  it("storage survives a restart of the host", async () => {
    await (await start()).close()
    const h = await start()
    expect(h.storage.snapshot().activations).toBe(2)
    expect(existsSync(join(world.hostData, "storage/test/probe.json"))).toBe(true)
  })

  it("async iteration yields later events and ends when the host closes", async () => {
    const h = await start()
    world.write(join(world.workspace, "README.md"), "x")
    const collected: string[] = []
    const iterating = (async () => {
      for await (const e of h.events) collected.push(e.kind)
    })()
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    await h.close()
    await iterating
    expect(collected).toEqual(["agent_event", "agent_event", "agent_unprovided"])
  })
})

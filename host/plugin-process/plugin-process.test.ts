/**
 * The plugin in a process of its own: a hostile plugin's every way out fails
 * and is logged; the permission flags alone hold what they claim on this
 * Node (and not the network, which is why the lockdown exists); a plugin
 * process killed mid-session is reported, its processes ended, its open
 * runs ended Failed, and it starts again on the next call; one whose loop
 * is stuck is ended the same way by the host's watchdog.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { readFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeEventHub } from "../core/events.ts"
import { type Host, startHost } from "../core/host.ts"
import { CODE_FLAGS, PROCESS_FLAGS, permissionFlag } from "./child-flags.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"

const hostileDir = join(import.meta.dirname, "../testing/fixtures/hostile-plugin")
const probeDir = join(import.meta.dirname, "../testing/fixtures/probe-plugin")

let world: TempWorld
let host: Host | undefined
let server: Server | undefined
let connections = 0

beforeEach(async () => {
  world = makeTempWorld("cvg-isolate-")
  connections = 0
  server = createServer((socket) => {
    connections++
    socket.destroy()
  })
  server.listen(0, "127.0.0.1")
  await once(server, "listening")
})
afterEach(async () => {
  await host?.close()
  host = undefined
  server?.close()
  world.cleanup()
})

const portOf = (s: Server) => (s.address() as { port: number }).port

interface Attempt {
  readonly attempt: string
  readonly ok: boolean
  readonly detail: string
}

const attemptsOf = (h: Host): Attempt[] =>
  h.logger.entries
    .filter((e) => e.source === "plugin" && e.message === "attempt")
    .map((e) => e.data as Attempt)

const waitUntil = async (check: () => boolean, ms = 10_000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error("condition not met in time")
    await new Promise((r) => setTimeout(r, 20))
  }
}

describe("a hostile plugin in its process", () => {
  it("fails at every way out, and the host logs each refusal", async () => {
    const secret = world.write(join(world.outside, "secret.txt"), "TOP-SECRET")
    host = await startHost({
      pluginDir: hostileDir,
      home: world.home,
      dataDir: world.hostData,
      env: {
        HOME: world.home,
        PATH: "/usr/bin:/bin",
        HOSTILE_SECRET_FILE: secret,
        HOSTILE_PORT: String(portOf(server!)),
        LOGIN_SECRET: "do-not-leak",
      },
    })
    // activate's attempts, then the same again from a method call (the loop turning).
    const info = await host.call("hostile", "initialize")
    expect(info.name).toBe("0 of 16 got out")
    const attempts = attemptsOf(host)
    expect(attempts).toHaveLength(2 * 17)
    for (const a of attempts) expect(a, a.attempt).toMatchObject({ ok: false })
    expect(JSON.stringify(attempts)).not.toContain("TOP-SECRET")
    expect(JSON.stringify(attempts)).not.toContain("do-not-leak")
    expect(connections).toBe(0)

    const refused = host.logger.refusals().map((e) => (e.data as { what?: string }).what ?? e.message)
    for (const what of [
      "import(node:fs)",
      "process.binding",
      "process.getBuiltinModule(node:fs)",
      "import(node:child_process)",
      "import(node:net)",
      "fetch",
      "WebSocket",
      "process.dlopen",
      "import(node:module)",
      "import(node:worker_threads)",
      "process.kill",
    ])
      expect(refused, what).toContain(what)
    // The lockdown's WebSocket is its refusal, held for good; building Node's own (undici) was never
    // needed for that (on Node 24 the lockdown used to load undici into every plugin start).
    const lockdown = host.logger.entries.find((e) => e.source === "plugin" && e.message === "lockdown")
    expect(lockdown?.data).toEqual({
      undiciLoaded: false,
      webSocket: { configurable: false, writable: false, isFunction: "function" },
    })
    // The broker's own wall: the secret lies outside every fs scope.
    expect(host.logger.refusals().some((e) => e.message.includes(`fs.read: ${secret}`))).toBe(true)
    // A malformed batch sent under the channel: one diagnostic, and the plugin goes on (initialize answered).
    expect(host.logger.entries.filter((e) => e.message.includes("malformed message"))).toHaveLength(1)
    const pid = host.pluginProcess()?.pid
    expect(pid).toBeGreaterThan(0)
    // It runs under the flags child-flags.ts gives it, Node's own among them (one V8 helper thread).
    const commandLine = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
    for (const flag of [...PROCESS_FLAGS, ...CODE_FLAGS, permissionFlag()])
      expect(commandLine).toContain(flag)
  })
})

describe("the permission flags alone (the second wall), on this Node", () => {
  it("deny files, processes, workers, addons and the inspector; the network stays open", async () => {
    const probe = world.write(
      join(world.root, "probe.mjs"),
      `
const out = {}
const t = async (name, f) => { try { await f(); out[name] = "allowed" } catch (e) { out[name] = e.code ?? e.message } }
await t("fs", async () => (await import("node:fs")).readFileSync(${JSON.stringify(join(world.outside, "x"))}))
await t("child_process", async () => (await import("node:child_process")).spawnSync("/bin/true"))
await t("worker", async () => { const { Worker } = await import("node:worker_threads"); new Worker("1", { eval: true }) })
await t("addon", async () => process.dlopen({ exports: {} }, "/nonexistent.node"))
await t("inspector", async () => (await import("node:inspector")).open(0))
await t("net", async () => { const net = await import("node:net"); await new Promise((ok, no) => { const s = net.connect(${portOf(server!)}, "127.0.0.1", ok); s.on("error", no) }) })
process.send(out)
`,
    )
    world.write(join(world.outside, "x"), "x")
    const child = spawn(
      process.execPath,
      [permissionFlag(), `--allow-fs-read=${probe}`, "--no-warnings", probe],
      {
        stdio: ["ignore", "ignore", "pipe", "ipc"],
        env: {},
      },
    )
    const [out] = (await once(child, "message")) as [Record<string, string>]
    await once(child, "exit")
    expect(out).toEqual({
      fs: "ERR_ACCESS_DENIED",
      child_process: "ERR_ACCESS_DENIED",
      worker: "ERR_ACCESS_DENIED",
      addon: "ERR_DLOPEN_DISABLED",
      inspector: "ERR_ACCESS_DENIED",
      // Not blocked by the model on Node 20 or 24: the lockdown is what stops it.
      net: "allowed",
    })
    expect(connections).toBe(1)
  })
})

describe("a plugin process that dies", () => {
  const start = async (options: { readonly pluginUnresponsiveMs?: number } = {}) => {
    world.command(
      "claude",
      `#!/bin/sh\necho "ready in $PWD"\nwhile IFS= read -r l; do echo "echo:$l"; done\n`,
    )
    const events = makeEventHub()
    host = await startHost({
      pluginDir: probeDir,
      home: world.home,
      dataDir: world.hostData,
      env: { HOME: world.home, PATH: `${world.bin}:/usr/bin:/bin` },
      killGraceMs: 500,
      events,
      ...options,
    })
    return { h: host, events }
  }

  it("is reported, its CLIs ended, its open runs ended Failed; the next call starts it again", async () => {
    const { h, events } = await start()
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s2" })
    const clis = h.processes().filter((p) => p.command === "claude")
    expect(clis).toHaveLength(2)
    // A run the plugin had opened (the probe opens none of its own).
    events.publish({
      kind: "agent_event",
      agentId: "probe",
      event: { type: "RunStarted", session_id: "s1", run_id: "r1" },
    })
    const first = h.pluginProcess()!
    process.kill(first.pid, "SIGKILL")

    const ended = await h.events.waitFor(
      (e) => e.kind === "agent_event" && e.event.type === "RunEnded" && e.event.run_id === "r1",
    )
    expect(ended).toMatchObject({ event: { outcome: "Failed", error: expect.stringContaining("died") } })
    expect(h.logger.entries.some((e) => e.level === "error" && e.message.includes("died"))).toBe(true)
    expect(h.processes()).toEqual([])
    await waitUntil(() => clis.every((c) => !pidAlive(c.pid)))
    expect(h.pluginProcess()).toBeNull()
    // Its agents are gone with it (a call waits for the restarted process to provide them again).
    expect([...h.agents.keys()]).toEqual([])
    expect(h.events.recorded).toContainEqual({ kind: "agent_unprovided", agentId: "probe" })

    const info = await h.call("probe", "initialize")
    expect(info.id).toBe("probe")
    const second = h.pluginProcess()!
    expect(second.pid).not.toBe(first.pid)
    expect(pidAlive(first.pid)).toBe(false)
    expect([...h.agents.keys()]).toEqual(["probe"])
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s3" })
    expect(h.processes().filter((p) => p.command === "claude")).toHaveLength(1)
  })

  it("one that stops answering is ended like one that died, and says so", async () => {
    const { h, events } = await start({ pluginUnresponsiveMs: 2_000 })
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    const [cli] = h.processes().filter((p) => p.command === "claude")
    events.publish({
      kind: "agent_event",
      agentId: "probe",
      event: { type: "RunStarted", session_id: "s1", run_id: "r1" },
    })
    const first = h.pluginProcess()!
    const started = Date.now()
    // The prompt never comes back by itself: the plugin's loop spins for a minute.
    const stuck = h.call("probe", "prompt", { sessionId: "s1", text: "spin" }).then(
      () => "answered",
      (error: unknown) => String((error as { message?: unknown }).message ?? error),
    )

    const ended = await h.events.waitFor(
      (e) => e.kind === "agent_event" && e.event.type === "RunEnded" && e.event.run_id === "r1",
    )
    expect(ended).toMatchObject({
      event: { outcome: "Failed", error: expect.stringContaining("stopped answering") },
    })
    expect(await stuck).toContain("stopped answering")
    // Within the deadline and a few pings, not the minute the loop would take.
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(h.logger.entries.some((e) => e.level === "error" && e.message.includes("stopped answering"))).toBe(
      true,
    )
    await waitUntil(() => !pidAlive(first.pid) && !pidAlive(cli!.pid))
    expect(h.processes()).toEqual([])

    const info = await h.call("probe", "initialize")
    expect(info.id).toBe("probe")
    expect(h.pluginProcess()!.pid).not.toBe(first.pid)
  })

  it("close ends the plugin process and every process it started", async () => {
    const { h } = await start()
    await h.call("probe", "createSession", { cwd: world.workspace, sessionId: "s1" })
    const [cli] = h.processes()
    const plugin = h.pluginProcess()!
    await h.close()
    host = undefined
    expect(pidAlive(plugin.pid)).toBe(false)
    expect(pidAlive(cli!.pid)).toBe(false)
    // It left on its own when the host let go (no signal after the grace):
    // Node's own end of the channel ran, and no read of the lane held its exit.
    expect(await plugin.exited).toMatchObject({ code: 0, signal: null })
  })
})

/**
 * A plugin process spawned before its host (spawn.ts, the ACP entry's early
 * spawn): what it says before a host takes it reaches the host; the host
 * takes only a child spawned for its plugin and flags and ends any other;
 * a host that cannot start ends it; and a child no host takes does not
 * outlive the process that spawned it, however that process ends.
 */
import { spawn } from "node:child_process"
import { once } from "node:events"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type Host, startHost } from "../core/host.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"
import { type SpawnedPlugin, spawnPluginChild } from "./spawn.ts"

const probeDir = join(import.meta.dirname, "..", "testing", "fixtures", "probe-plugin")
const spawnModule = join(import.meta.dirname, "spawn.ts")

let world: TempWorld
let host: Host | undefined
let early: SpawnedPlugin | undefined
beforeEach(() => {
  world = makeTempWorld("cvg-spawn-")
})
afterEach(async () => {
  await host?.close()
  host = undefined
  early?.kill()
  early = undefined
  world.cleanup()
})

const gone = async (pid: number, ms = 10_000) => {
  const until = Date.now() + ms
  while (pidAlive(pid)) {
    if (Date.now() > until) return false
    await new Promise((r) => setTimeout(r, 25))
  }
  return true
}

const hostOptions = (extra: Partial<Parameters<typeof startHost>[0]> = {}) => ({
  pluginDir: probeDir,
  home: world.home,
  dataDir: world.hostData,
  env: { HOME: world.home, PATH: "/usr/bin:/bin" },
  ...extra,
})

describe("a plugin process spawned before its host", () => {
  it("is the host's plugin process, and what it answered before the host took it arrives", async () => {
    early = await spawnPluginChild({ pluginDir: probeDir, main: "main.ts" })
    // A request before anyone listens: its answer must be held, not dropped.
    early.child.send([{ t: "req", id: 999, op: "no.such.op", args: {} }])
    const heard: unknown[] = []
    // Listened to only once the answer has come (seen on the raw channel), however slow the start.
    await new Promise<void>((answered) =>
      early?.child.on("message", (raw) => {
        if (JSON.stringify(raw).includes('"id":999')) answered()
      }),
    )
    early.listen((raw) => heard.push(raw))
    await new Promise((r) => setTimeout(r, 50))
    expect(heard.flat()).toContainEqual(expect.objectContaining({ t: "err", id: 999 }))
  })

  it("is taken by the first start of a host for its plugin and flags", async () => {
    early = await spawnPluginChild({
      pluginDir: probeDir,
      main: "main.ts",
      v8Flags: ["--max-semi-space-size=1"],
    })
    host = await startHost(hostOptions({ pluginV8Flags: ["--max-semi-space-size=1"], spawnedPlugin: early }))
    expect(host.pluginProcess()?.pid).toBe(early.pid)
    expect(host.agents.has("probe")).toBe(true)
  })

  it("is ended, and a child of the host's own started, when it was spawned for other flags", async () => {
    early = await spawnPluginChild({
      pluginDir: probeDir,
      main: "main.ts",
      v8Flags: ["--max-semi-space-size=2"],
    })
    host = await startHost(hostOptions({ pluginV8Flags: ["--max-semi-space-size=1"], spawnedPlugin: early }))
    expect(host.pluginProcess()?.pid).not.toBe(early.pid)
    expect(host.agents.has("probe")).toBe(true)
    expect(await gone(early.pid)).toBe(true)
  })

  it("is ended when the host cannot start", async () => {
    early = await spawnPluginChild({ pluginDir: probeDir, main: "main.ts" })
    await expect(startHost(hostOptions({ pluginDir: world.outside, spawnedPlugin: early }))).rejects.toThrow()
    expect(await gone(early.pid)).toBe(true)
  })

  for (const how of ["exits", "is killed"] as const)
    it(`does not outlive the process that spawned it when that process ${how} before a host took it`, async () => {
      const script = join(world.root, "spawner.mts")
      writeFileSync(
        script,
        [
          `import { spawnPluginChild } from ${JSON.stringify(spawnModule)}`,
          `const early = await spawnPluginChild({ pluginDir: ${JSON.stringify(probeDir)}, main: "main.ts" })`,
          `process.stdout.write(String(early.pid) + "\\n")`,
          how === "exits" ? "process.exit(0)" : "setInterval(() => {}, 1_000)",
        ].join("\n"),
      )
      const spawner = spawn(process.execPath, ["--import", "tsx", script], {
        stdio: ["ignore", "pipe", "inherit"],
      })
      const exited = once(spawner, "exit")
      const line = await Promise.race([
        once(spawner.stdout!, "data").then(([chunk]) => String(chunk)),
        exited.then(() => "the spawner ended before it spawned"),
      ])
      const pid = Number(line.trim())
      expect(pid, line).toBeGreaterThan(0)
      expect(pidAlive(pid)).toBe(true)
      if (how === "is killed") spawner.kill("SIGKILL")
      await exited
      expect(await gone(pid)).toBe(true)
    })
})

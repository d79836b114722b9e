/**
 * Installed and enabled plugins in a data folder: an install records the
 * plugin disabled (from its folder, or unpacked from an `npm pack`
 * tarball); enabling is a separate step; a reinstall asking for new grants
 * is disabled again; startHost with `requireEnabled` loads nothing of a
 * plugin that is not enabled.
 */
import { execFileSync } from "node:child_process"
import { cpSync, existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { makeTempWorld, type TempWorld } from "../testing/testing.ts"
import { startHost } from "./host.ts"
import {
  installPlugin,
  isEnabled,
  PluginNotEnabled,
  readInstalled,
  registryFile,
  setEnabled,
} from "./installed.ts"

const probeDir = join(import.meta.dirname, "../testing/fixtures/probe-plugin")

let world: TempWorld
beforeEach(() => {
  world = makeTempWorld()
})
afterEach(() => world.cleanup())

describe("installed plugins", () => {
  it("installs from a folder disabled, enables and disables by id, in <data>/plugins.json", async () => {
    const { plugin, manifest } = await installPlugin(world.hostData, probeDir)
    expect(manifest.id).toBe("test/probe")
    expect(plugin).toMatchObject({ id: "test/probe", version: "0.0.1", dir: probeDir, enabled: false })
    expect(isEnabled(world.hostData, probeDir)).toBe(false)
    expect(setEnabled(world.hostData, "test/probe", true)?.enabled).toBe(true)
    expect(isEnabled(world.hostData, probeDir)).toBe(true)
    expect(setEnabled(world.hostData, "nobody/here", true)).toBeUndefined()
    expect(JSON.parse(readFileSync(registryFile(world.hostData), "utf8")).plugins).toHaveLength(1)
  })

  it("keeps a reinstall enabled only when it asks for nothing new", async () => {
    const copy = join(world.root, "probe-copy")
    cpSync(probeDir, copy, { recursive: true })
    await installPlugin(world.hostData, copy)
    setEnabled(world.hostData, "test/probe", true)
    expect((await installPlugin(world.hostData, copy)).plugin.enabled).toBe(true)
    const file = join(copy, "plugin.manifest.json")
    const manifest = JSON.parse(readFileSync(file, "utf8"))
    manifest.grants.process.commands.push("curl")
    writeFileSync(file, JSON.stringify(manifest))
    expect((await installPlugin(world.hostData, copy)).plugin.enabled).toBe(false)
    expect(readInstalled(world.hostData)).toHaveLength(1)
  })

  it("unpacks a tarball as npm pack makes it (files under package/) into the data folder", async () => {
    const staging = join(world.root, "pack")
    mkdirSync(staging)
    cpSync(probeDir, join(staging, "package"), { recursive: true })
    const tarball = join(world.root, "test-probe-0.0.1.tgz")
    execFileSync("tar", ["-czf", tarball, "-C", staging, "package"])
    const { plugin } = await installPlugin(world.hostData, tarball)
    expect(plugin.dir).toBe(join(world.hostData, "installed", "test", "probe"))
    expect(plugin.source).toBe(tarball)
    expect(existsSync(join(plugin.dir, "plugin.manifest.json"))).toBe(true)
    // Its imports resolve from the host package's own dependencies.
    expect(lstatSync(join(plugin.dir, "node_modules")).isSymbolicLink()).toBe(true)
  })

  it("startHost with requireEnabled loads a plugin only once it is enabled", async () => {
    const options = {
      pluginDir: probeDir,
      home: world.home,
      dataDir: world.hostData,
      env: { HOME: world.home, PATH: "/usr/bin:/bin" },
      isolation: "in-process" as const,
      requireEnabled: true,
    }
    await expect(startHost(options)).rejects.toBeInstanceOf(PluginNotEnabled)
    await installPlugin(world.hostData, probeDir)
    await expect(startHost(options)).rejects.toThrow(/not enabled/)
    setEnabled(world.hostData, "test/probe", true)
    const host = await startHost(options)
    expect(host.manifest.id).toBe("test/probe")
    await host.close()
  })
})

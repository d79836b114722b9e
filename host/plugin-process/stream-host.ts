/**
 * Test support: a real host running the stream fixture plugin
 * (host/testing/fixtures/stream-plugin) in its own plugin process, inside a
 * temporary world, for the tests of what crosses between the two processes.
 */
import { join } from "node:path"
import { type Host, startHost } from "../core/host.ts"
import type { TempWorld } from "../testing/testing.ts"

const streamDir = join(import.meta.dirname, "../testing/fixtures/stream-plugin")

/** The host, with a short kill grace so a test's ended processes go quickly. */
export const startStreamHost = (world: TempWorld): Promise<Host> =>
  startHost({
    pluginDir: streamDir,
    home: world.home,
    dataDir: world.hostData,
    env: { HOME: world.home, PATH: "/usr/bin:/bin" },
    killGraceMs: 500,
  })

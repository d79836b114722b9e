/**
 * The host's process broker driving the real Claude Code CLI (the pinned
 * devDependency): found on the login PATH, spoken to over stream-json, and
 * gone (with its whole process group) once the scope closes. No model call is
 * made: the CLI answers `initialize` before any user message.
 */
import { symlinkSync } from "node:fs"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import { afterEach, beforeEach, expect, it } from "vitest"
import { type Host, startHost } from "../host/core/host.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../host/testing/testing.ts"
import { frameLine, lines, parseLine } from "../sdk/lines.ts"
import { claudeBinary, testCliVersion } from "../testkit/cli.ts"

const repoRoot = join(import.meta.dirname, "..")

let world: TempWorld
let host: Host
beforeEach(async () => {
  world = makeTempWorld("cvg-host-e2e-")
  symlinkSync(claudeBinary(), join(world.bin, "claude"))
  host = await startHost({
    pluginDir: repoRoot,
    home: world.home,
    dataDir: world.hostData,
    env: {
      HOME: world.home,
      PATH: `${world.bin}:/usr/bin:/bin`,
      ANTHROPIC_API_KEY: "sk-ant-test-dummy",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      CLAUDE_CODE_TMPDIR: join(world.root, "tmp"),
    },
  })
})
afterEach(async () => {
  await host.close()
  world.cleanup()
})

it("runs `claude --version` found on the login PATH", async () => {
  const result = await Effect.runPromise(host.api.process.run("claude", ["--version"], { timeoutMs: 30_000 }))
  expect(result.code).toBe(0)
  expect(result.stdout.startsWith(`${testCliVersion()} (Claude Code)`)).toBe(true)
})

it("spawns the CLI headless, answers initialize, and ends it with the scope", async () => {
  // A child's working directory must lie in a granted scope: the host registers the workspace.
  host.addWorkspace(world.workspace)
  const { response, pid } = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const handle = yield* host.api.process.spawn(
          "claude",
          ["--output-format", "stream-json", "--input-format", "stream-json", "--verbose"],
          { cwd: world.workspace },
        )
        yield* handle.write(
          frameLine({ type: "control_request", request_id: "init-1", request: { subtype: "initialize" } }),
        )
        const response = yield* lines(handle.stdout).pipe(
          Stream.map(
            (line) => parseLine(line) as { type?: string; response?: { request_id?: string } } | null,
          ),
          Stream.filter((frame) => frame?.type === "control_response"),
          Stream.runHead,
          Effect.timeout(30_000),
        )
        return { response, pid: handle.pid! }
      }),
    ),
  )
  expect(response._tag).toBe("Some")
  expect(response._tag === "Some" && response.value?.response).toMatchObject({
    subtype: "success",
    request_id: "init-1",
  })
  expect(pidAlive(pid)).toBe(false)
  expect(host.processes()).toEqual([])
})

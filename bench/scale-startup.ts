/**
 * Startup: from `create_session` to the CLI's `initialize` answer, the
 * plugin's time against the same CLI spawned by hand with the same flags
 * (bench/scale-live.ts prints it). The real pinned CLI, offline against
 * testkit's scripted model in a sandbox, as the end-to-end tests run it.
 *
 * Per round, interleaved: the plugin (a real host, the plugin in its own
 * process as `npm start` runs it) creates a session, and `createSession`
 * returns once the CLI answered `initialize` (agent.ts `startProcess`); the
 * session is closed. Then the CLI is spawned by hand with the argument list
 * that session's process had (read from the host's live processes, a fresh
 * `--session-id`), the same environment, and the same `initialize` request
 * the plugin sends (bare: the session has no plugin tools), timed until its answer. One warm-up round first (the
 * plugin's bundle, the CLI's `--version` probe, the page cache).
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { startHost } from "../host/host.ts"
import { initializeRequest } from "../launch.ts"
import { cliEnv, initialize, makeSandbox, spawnClaude } from "../testkit/cli.ts"
import { startModelServer } from "../testkit/model-server.ts"

export interface StartupRounds {
  /** ms from create_session called to it returning (the CLI answered initialize). */
  readonly plugin: number[]
  /** ms from spawning the CLI by hand to its initialize answer. */
  readonly raw: number[]
}

const repoRoot = join(import.meta.dirname, "..")

export const measureStartup = async (rounds: number): Promise<StartupRounds> => {
  const sandbox = makeSandbox("cvg-scale-startup-")
  const server = await startModelServer({ main: [] })
  const env = cliEnv(sandbox, server)
  mkdirSync(join(sandbox.root, "data"), { recursive: true })
  const host = await startHost({
    pluginDir: repoRoot,
    home: sandbox.home,
    dataDir: join(sandbox.root, "data"),
    env,
    workspaces: [sandbox.ws],
    killGraceMs: 1_000,
  })
  const out: StartupRounds = { plugin: [], raw: [] }
  try {
    for (let round = 0; round <= rounds; round++) {
      let at = performance.now()
      const created = (await host.call("claude", "createSession", { cwd: sandbox.ws })) as {
        session_id: string
      }
      const plugin = performance.now() - at
      const cli = host.processes().find((p) => p.command === "claude")
      if (cli === undefined) throw new Error("the plugin's session has no claude process")
      const args = [...cli.args]
      const id = args.indexOf("--session-id")
      if (id !== -1) args[id + 1] = crypto.randomUUID()
      await host.call("claude", "closeSession", { sessionId: created.session_id })

      at = performance.now()
      const p = spawnClaude(args, {
        sandbox,
        server,
        env: { ...env, CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: "1" },
      })
      // A session without plugin tools sends a bare initialize (launch.ts initializeRequest).
      await initialize(p, { extra: initializeRequest({ hasTools: false, appendSystemPrompt: undefined }) })
      const raw = performance.now() - at
      await p.close()
      if (round > 0) {
        out.plugin.push(plugin)
        out.raw.push(raw)
      }
    }
  } finally {
    await host.close()
    await server.close()
    sandbox.cleanup()
  }
  return out
}

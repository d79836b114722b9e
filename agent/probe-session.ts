/**
 * A probe: a `claude` started with no prompt, no tools and no MCP servers
 * but the ones named, for what its `initialize` answer and its control
 * requests tell (the catalog's models and usage; the recovery identity's
 * account). Nothing it does is shown: its events go nowhere.
 */
import { Effect, type Scope } from "effect"
import { makeMapper } from "../map.ts"
import type { Broker } from "../sdk/plugin-api.ts"
import { makeSession, type LiveSession, type SessionSetup } from "../session.ts"
import { PROTOCOL_ARGS } from "../session/launch.ts"
import type { InitializeResponse } from "../wire.ts"

export interface ProbeSetup {
  /** Names the probe in logs: `<name>-<its CLI id>`. */
  readonly name: string
  readonly cwd: string
  readonly env: Record<string, string | undefined>
  /** Flags after the protocol's, the session id and `--strict-mcp-config`. */
  readonly extraArgs: ReadonlyArray<string>
  readonly decodeLine: SessionSetup["decodeLine"]
  /** The `initialize` answer, as the CLI gave it. */
  readonly initialized: (answer: InitializeResponse) => void
  readonly timeouts?: SessionSetup["timeouts"]
}

export const makeProbeSession = (
  setup: ProbeSetup,
): Effect.Effect<LiveSession, never, Scope.Scope | Broker> => {
  const cliId = crypto.randomUUID()
  return makeSession({
    hostId: `${setup.name}-${cliId}`,
    cwd: setup.cwd,
    tools: [],
    start: { kind: "new", cliId },
    prepareLaunch: (start) =>
      Effect.succeed({
        args: [...PROTOCOL_ARGS, "--session-id", start.cliId, "--strict-mcp-config", ...setup.extraArgs],
        env: setup.env,
      }),
    makeMapper: (id) => makeMapper({ sessionId: id }),
    decodeLine: setup.decodeLine,
    emit: () => Effect.void,
    hooks: { initialized: (answer) => Effect.sync(() => setup.initialized(answer)) },
    ...(setup.timeouts ? { timeouts: setup.timeouts } : {}),
  })
}

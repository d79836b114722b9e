/**
 * api.process: granted commands only, found on the login PATH, each child the
 * leader of its own process group so ending it ends everything it started.
 *
 * A spawned child lives as long as the caller's scope: closing the scope sends
 * SIGTERM to the group, SIGKILL after a grace period, and waits for the exit
 * (and for any member of the group still alive) before the scope is closed.
 * The broker also tracks every live child, so the host can end them all.
 *
 * A child's descendants that left its group are found by a tag in their
 * environment and ended with it (leftovers.ts). A child that exits on its own
 * has its leftovers ended at once, and leaves `live()` at once.
 *
 * What the plugin may ask is cut by the grant (process-grants.ts): argument
 * patterns per command, a working directory inside a granted scope, and only
 * the granted variables set.
 */
import { stat } from "node:fs/promises"
import { posix } from "node:path"
import { type Cause, Effect, Queue, type Scope, Stream } from "effect"
import {
  BrokerFailure,
  NotGranted,
  type ProcessHandle,
  type ProcessShape,
  type RunResult,
  type SpawnOptions,
} from "../../sdk/plugin-api.ts"
import { type Child, endChild, type LiveProcess, startChild } from "./child.ts"
import type { EnvSource } from "./env-broker.ts"
import { findOnPath } from "./login-env.ts"
import { argsRule, envRule } from "./process-grants.ts"
import { handleOf } from "./process-handle.ts"

export type { LiveProcess } from "./child.ts"
export { TAG } from "./leftovers.ts"
export { findOnPath, mergeEnv } from "./login-env.ts"

export interface ProcessBrokerOptions {
  readonly commands: ReadonlyArray<string>
  /** Argument patterns per command (process-grants.ts); a command not named takes any. */
  readonly args?: Readonly<Record<string, ReadonlyArray<string>>>
  /** Names the plugin may set or remove (`CLAUDE_*`). Default: none. */
  readonly settableEnv?: ReadonlyArray<string>
  /** May a child run in `cwd` (absolute)? Default: anywhere. The default cwd always may. */
  readonly cwdGranted?: (cwd: string) => boolean
  /** The login environment, read at every call (PATH for the lookup, the child's env). */
  readonly env: EnvSource
  /** The working directory when the plugin names none. */
  readonly defaultCwd: string
  /** From SIGTERM to SIGKILL. Default 3 s. */
  readonly killGraceMs?: number
  /** Default timeout of `run`. Default 120 s. */
  readonly runTimeoutMs?: number
  readonly refuse: (command: string, reason: string) => void
  readonly log: (message: string, data?: unknown) => void
}

export interface ProcessBroker extends ProcessShape {
  /** Children not yet ended. */
  readonly live: () => ReadonlyArray<LiveProcess>
  /** End every live child (SIGTERM, SIGKILL after the grace) and wait for each. */
  readonly closeAll: () => Promise<void>
}

/** The check of a call's arguments, cwd and variables against the grant: the refusal, or null when it may run. */
const callRule = (options: ProcessBrokerOptions) => {
  const argsAllowed = argsRule(options.args ?? {})
  const envAllowed = envRule(options.settableEnv ?? [])
  return (command: string, args: ReadonlyArray<string>, spawnOptions: SpawnOptions): NotGranted | null => {
    const refused = (what: string, reason: string) => {
      options.refuse(command, `${what}: ${reason}`)
      return new NotGranted({ capability: "process", detail: `${command}: ${what} (${reason})` })
    }
    if (!Array.isArray(args) || args.some((a) => typeof a !== "string"))
      return refused("arguments", "not a list of strings")
    const badArgs = argsAllowed.refusal(command, args)
    if (badArgs) return refused(`arguments ${JSON.stringify(args.join(" ").slice(0, 200))}`, badArgs)
    const cwd = spawnOptions.cwd
    if (cwd !== undefined && cwd !== options.defaultCwd) {
      if (typeof cwd !== "string" || !posix.isAbsolute(cwd))
        return refused(`working directory ${String(cwd)}`, "not an absolute path")
      const normal = posix.normalize(cwd).replace(/(.)\/$/, "$1")
      if (normal !== options.defaultCwd && options.cwdGranted && !options.cwdGranted(normal))
        return refused(`working directory ${cwd}`, "outside every fs.read scope")
    }
    for (const name of Object.keys(spawnOptions.env ?? {})) {
      const reason = envAllowed.refusal(name)
      if (reason) return refused(`variable ${name}`, reason)
    }
    return null
  }
}

const collectText = (bytes: Stream.Stream<Uint8Array>) => bytes.pipe(Stream.decodeText(), Stream.mkString)

export const makeProcessBroker = (options: ProcessBrokerOptions): ProcessBroker => {
  const grace = options.killGraceMs ?? 3_000
  const granted = new Set(options.commands)
  const children = new Set<Child>()

  const check = (command: string): NotGranted | null => {
    if (typeof command !== "string" || command === "" || /[\\/]/.test(command)) {
      options.refuse(String(command), "a command is a granted name, not a path")
      return new NotGranted({ capability: "process", detail: `${command} (a path; only granted names run)` })
    }
    if (!granted.has(command)) {
      options.refuse(command, "not in the manifest's process grant")
      return new NotGranted({ capability: "process", detail: command })
    }
    return null
  }

  const which = (command: string): Effect.Effect<string | null, NotGranted> => {
    const refused = check(command)
    if (refused) return Effect.fail(refused)
    return Effect.promise(() => findOnPath(command, options.env().PATH))
  }

  const end = (child: Child, first: NodeJS.Signals = "SIGTERM"): Promise<void> =>
    endChild(child, grace, first, () => children.delete(child))
  const setting = { defaultCwd: options.defaultCwd, env: options.env, grace, log: options.log }
  const checkCall = callRule(options)

  const spawn = (
    command: string,
    args: ReadonlyArray<string>,
    spawnOptions: SpawnOptions = {},
  ): Effect.Effect<ProcessHandle, NotGranted | BrokerFailure, Scope.Scope> =>
    Effect.gen(function* () {
      const path = yield* which(command)
      const refusedCall = checkCall(command, args, spawnOptions)
      if (refusedCall) return yield* Effect.fail(refusedCall)
      if (path === null)
        return yield* Effect.fail(
          new BrokerFailure({ operation: "spawn", detail: `${command} is not on the login PATH` }),
        )
      // Node reports a missing cwd as the command's ENOENT; say what is missing.
      const cwd = spawnOptions.cwd ?? options.defaultCwd
      const cwdIsDir = yield* Effect.promise(() =>
        stat(cwd).then(
          (s) => s.isDirectory(),
          () => false,
        ),
      )
      if (!cwdIsDir)
        return yield* Effect.fail(
          new BrokerFailure({
            operation: "spawn",
            detail: `${command}: the working directory ${cwd} does not exist`,
          }),
        )
      // stderr is drained at once into a bounded buffer (oldest dropped), so a
      // plugin that never reads it cannot stall the child on a full pipe.
      const stderrQueue = yield* Queue.sliding<Uint8Array, Cause.Done>(4096)
      const child = yield* Effect.acquireRelease(
        startChild(setting, command, path, args, spawnOptions, (child) => children.add(child)),
        (child) => Effect.promise(() => end(child)),
      )
      const stderr = child.node.stderr
      if (stderr) {
        stderr.on("data", (chunk: Buffer) => Queue.offerUnsafe(stderrQueue, new Uint8Array(chunk)))
        stderr.once("close", () => Queue.endUnsafe(stderrQueue))
        stderr.on("error", () => Queue.endUnsafe(stderrQueue))
      } else Queue.endUnsafe(stderrQueue)
      options.log("spawned", { command, args, pid: child.pid, cwd: spawnOptions.cwd ?? options.defaultCwd })
      return handleOf(child, stderrQueue, (signal) => end(child, signal))
    })

  const run = (
    command: string,
    args: ReadonlyArray<string>,
    runOptions: SpawnOptions & { readonly timeoutMs?: number; readonly stdin?: string } = {},
  ): Effect.Effect<RunResult, NotGranted | BrokerFailure> => {
    const timeoutMs = runOptions.timeoutMs ?? options.runTimeoutMs ?? 120_000
    const { timeoutMs: _t, stdin, ...spawnOptions } = runOptions
    return Effect.scoped(
      Effect.gen(function* () {
        const handle = yield* spawn(command, args, spawnOptions)
        const feed = (stdin === undefined ? Effect.void : handle.write(stdin).pipe(Effect.ignore)).pipe(
          Effect.andThen(handle.closeStdin),
        )
        const [stdout, stderr, exit] = yield* Effect.all(
          [collectText(handle.stdout), collectText(handle.stderr), handle.exit, feed],
          { concurrency: "unbounded" },
        )
        return { code: exit.code, stdout, stderr }
      }),
    ).pipe(
      // Timing out interrupts the scope, which ends the child and waits for it.
      Effect.timeoutOrElse({
        duration: timeoutMs,
        orElse: () =>
          Effect.fail(
            new BrokerFailure({
              operation: "run",
              detail: `${command} did not finish within ${timeoutMs} ms`,
            }),
          ),
      }),
    )
  }

  return {
    spawn,
    run,
    which,
    // A child that exited is not live, even while what it left behind is being ended.
    live: () =>
      [...children].filter((c) => c.exit === null).map(({ pid, command, args }) => ({ pid, command, args })),
    closeAll: async () => {
      await Promise.all([...children].map((child) => end(child)))
    },
  }
}

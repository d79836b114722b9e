/**
 * One child's life: started as the leader of its own process group, tagged
 * for the leftover sweep (leftovers.ts), and ended as a whole: SIGTERM to
 * the group, SIGKILL after the grace, then whatever is left of the group and
 * of its descendants elsewhere.
 */
import { type ChildProcess, spawn as nodeSpawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { Effect } from "effect"
import { BrokerFailure, type ProcessExit, type SpawnOptions } from "../../sdk/plugin-api.ts"
import type { EnvSource } from "./env-broker.ts"
import { endLeftovers, type Sweepable, TAG } from "./leftovers.ts"
import { mergeEnv } from "./login-env.ts"
import { startOf } from "./proc.ts"
import { forgetAtExit, groupAlive, groupGone, killAtExit, signalGroup, within } from "./process-groups.ts"

export interface LiveProcess {
  readonly pid: number
  readonly command: string
  readonly args: ReadonlyArray<string>
}

export interface Child extends LiveProcess, Sweepable {
  readonly node: ChildProcess
  readonly exited: Promise<ProcessExit>
  exit: ProcessExit | null
  ending: Promise<void> | null
}

/** What every child of one broker shares. */
export interface ChildSetting {
  /** The working directory when the plugin names none. */
  readonly defaultCwd: string
  /** The login environment the child's is merged over. */
  readonly env: EnvSource
  /** From SIGTERM to SIGKILL. */
  readonly grace: number
  readonly log: (message: string, data?: unknown) => void
}

/** End a child: SIGTERM to its group, SIGKILL after the grace, wait, then sweep what is left of the group. */
export const endChild = (
  child: Child,
  grace: number,
  first: NodeJS.Signals,
  onEnded: () => void,
): Promise<void> => {
  // A SIGKILL asked for while a gentler end is under way does not wait out its grace.
  if (child.ending && first === "SIGKILL" && !child.exit) signalGroup(child, "SIGKILL")
  child.ending ??= (async () => {
    if (!child.exit) {
      signalGroup(child, first)
      if (first === "SIGKILL" || !(await within(child.exited, grace))) {
        signalGroup(child, "SIGKILL")
        await child.exited
      }
    }
    // Members of the group may outlive the leader (a shell's background job).
    if (groupAlive(child.pid)) {
      try {
        process.kill(-child.pid, "SIGTERM")
      } catch {}
      if (!(await groupGone(child.pid, grace))) {
        try {
          process.kill(-child.pid, "SIGKILL")
        } catch {}
        // Bounded: a zombie nobody reaps still answers signal 0.
        await groupGone(child.pid, 1_000)
      }
    }
    // Its descendants in other groups, re-parented or not.
    await endLeftovers(child, grace)
    onEnded()
    forgetAtExit(child.pid)
  })()
  return child.ending
}

/** Spawn a granted command at its resolved path; `onStarted` hears of the child before the caller does. */
export const startChild = (
  setting: ChildSetting,
  command: string,
  path: string,
  args: ReadonlyArray<string>,
  spawnOptions: SpawnOptions,
  onStarted: (child: Child) => void,
): Effect.Effect<Child, BrokerFailure> =>
  Effect.callback<Child, BrokerFailure>((resume) => {
    let node: ChildProcess
    const tag = randomBytes(12).toString("hex")
    try {
      node = nodeSpawn(path, [...args], {
        cwd: spawnOptions.cwd ?? setting.defaultCwd,
        env: { ...mergeEnv(setting.env(), spawnOptions.env), [TAG]: tag },
        detached: true, // its own process group, so the whole tree can be signalled
        stdio: ["pipe", "pipe", "pipe"],
      })
    } catch (error) {
      resume(Effect.fail(new BrokerFailure({ operation: "spawn", detail: `${command}: ${String(error)}` })))
      return
    }
    const onError = (error: Error) => {
      node.off("spawn", onSpawn)
      resume(Effect.fail(new BrokerFailure({ operation: "spawn", detail: `${command}: ${error.message}` })))
    }
    const onSpawn = () => {
      node.off("error", onError)
      // Later errors (a failed kill, EPIPE on stdin) must never crash the host.
      node.on("error", (error) => setting.log("child process error", { command, error: error.message }))
      node.stdin?.on("error", () => {})
      const pid = node.pid!
      let settle!: (exit: ProcessExit) => void
      const child: Child = {
        pid,
        tag,
        command,
        args: [...args],
        node,
        exited: new Promise<ProcessExit>((r) => (settle = r)),
        exit: null,
        ending: null,
        startedAt: startOf(pid),
      }
      node.once("exit", (code, signal) => {
        child.exit = { code, signal }
        settle(child.exit)
        // Died on its own (killed, crashed): what it started is not left running.
        if (!child.ending) void endLeftovers(child, setting.grace)
      })
      onStarted(child)
      killAtExit(pid)
      resume(Effect.succeed(child))
    }
    node.once("error", onError)
    node.once("spawn", onSpawn)
  })

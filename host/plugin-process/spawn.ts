/**
 * The plugin process's spawn, in a file of its own so a front end can start
 * the child before it loads the rest of the host: this file and what it
 * imports (bundle.ts, child-flags.ts) use only node: modules, none of
 * effect or zod. The ACP entry spawns the child first thing
 * (host/acp/main.ts) and hands it to `startHost`; parent.ts spawns every
 * other plugin process through here too.
 *
 * Rules it keeps:
 * - One command line, one set of grants, one environment (`{}`, cwd `/`)
 *   for every plugin process, spawned early or not.
 * - Nothing the child says before a host takes it is lost: its messages,
 *   its stderr's last lines and its exit are held from the spawn on.
 * - A child no host ever takes does not outlive the process that spawned
 *   it: it exits when its IPC channel closes (child.ts), and `kill` ends
 *   it sooner.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { resolve } from "node:path"
import { pluginCode } from "./bundle.ts"
import { childArgs } from "./child-flags.ts"

/** How many of the child's last stderr lines a death report carries. */
const STDERR_LINES = 20

export interface SpawnOptions {
  readonly pluginDir: string
  /** The manifest's `main`. */
  readonly main: string
  /** V8 heap-size flags for the child; see childArgs. */
  readonly v8Flags?: ReadonlyArray<string>
}

export interface ChildExit {
  readonly code: number | null
  readonly signal: string | null
}

export interface SpawnedPlugin {
  readonly child: ChildProcess
  readonly pid: number
  /** What it was spawned for (plugin, main, heap flags): a host takes only a child it would have spawned. */
  readonly key: string
  /** Its last lines of stderr, kept from the spawn on. */
  readonly stderrLines: ReadonlyArray<string>
  /** Resolves when the child has exited (whether or not a host took it yet). */
  readonly exit: Promise<ChildExit>
  /**
   * Hands the child's IPC messages to `receive`, once: those held since the
   * spawn first (after the caller's current turn, so its handlers are in
   * place), then each as it comes.
   */
  readonly listen: (receive: (raw: unknown) => void) => void
  /** Ends a child no host will take. */
  readonly kill: () => void
}

export const spawnKey = (options: SpawnOptions): string =>
  JSON.stringify([resolve(options.pluginDir), options.main, options.v8Flags ?? []])

export const spawnPluginChild = async (options: SpawnOptions): Promise<SpawnedPlugin> => {
  const code = await pluginCode(options.pluginDir, options.main, options.v8Flags)
  const child = spawn(process.execPath, childArgs(code.entry, code.bundle, options.v8Flags), {
    // fd 4: the byte lane (lane.ts), the host's byte streams beside the IPC channel.
    stdio: ["ignore", "ignore", "pipe", "ipc", "pipe"],
    serialization: "advanced",
    env: {},
    cwd: "/",
  })
  const pid = child.pid
  if (pid === undefined) throw new Error(`${options.main}: the plugin process did not start`)
  const exit = new Promise<ChildExit>((done) => child.once("exit", (code, signal) => done({ code, signal })))

  const stderrLines: string[] = []
  child.stderr?.setEncoding("utf8")
  child.stderr?.on("data", (text: string) => {
    stderrLines.push(...text.split("\n").filter((l) => l.trim() !== ""))
    if (stderrLines.length > STDERR_LINES) stderrLines.splice(0, stderrLines.length - STDERR_LINES)
  })

  const held: unknown[] = []
  let deliver: ((raw: unknown) => void) | undefined
  let taken = false
  child.on("message", (raw: unknown) => (deliver ? deliver(raw) : held.push(raw)))

  return {
    child,
    pid,
    key: spawnKey(options),
    stderrLines,
    exit,
    listen: (receive) => {
      if (taken) throw new Error("the plugin process's messages were already taken")
      taken = true
      queueMicrotask(() => {
        for (const raw of held.splice(0)) receive(raw)
        deliver = receive
      })
    },
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    },
  }
}

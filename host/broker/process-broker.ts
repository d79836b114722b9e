/**
 * api.process: granted commands only, found on the login PATH, each child the
 * leader of its own process group so ending it ends everything it started.
 *
 * A spawned child lives as long as the caller's scope: closing the scope sends
 * SIGTERM to the group, SIGKILL after a grace period, and waits for the exit
 * (and for any member of the group still alive) before the scope is closed.
 * The broker also tracks every live child, so the host can end them all.
 *
 * A child's own children may leave its group (the CLI runs each Bash command
 * in a group of its own) and outlive it (re-parented when it dies). So every
 * child carries a tag in its environment, which its descendants inherit, and
 * ending a child ends every process that carries its tag, and every process
 * below it in the tree, in whatever group. A child that exits on its own has
 * its leftovers ended at once, and leaves `live()` at once.
 *
 * What the plugin may ask is cut by the grant (process-grants.ts): argument
 * patterns per command, a working directory inside a granted scope, and only
 * the granted variables set.
 */
import { type ChildProcess, spawn as nodeSpawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { constants, readdirSync, readFileSync } from "node:fs"
import { access, readdir, readFile, stat } from "node:fs/promises"
import { posix } from "node:path"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { type Cause, Effect, Queue, type Scope, Stream } from "effect"
import {
  BrokerFailure,
  NotGranted,
  type ProcessExit,
  type ProcessHandle,
  type ProcessShape,
  type RunResult,
  type SpawnOptions,
} from "../../sdk/plugin-api.ts"
import type { EnvSource } from "./env-broker.ts"
import { argsRule, envRule } from "./process-grants.ts"

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

export interface LiveProcess {
  readonly pid: number
  readonly command: string
  readonly args: ReadonlyArray<string>
}

export interface ProcessBroker extends ProcessShape {
  /** Children not yet ended. */
  readonly live: () => ReadonlyArray<LiveProcess>
  /** End every live child (SIGTERM, SIGKILL after the grace) and wait for each. */
  readonly closeAll: () => Promise<void>
}

interface Child extends LiveProcess {
  /** The value of TAG in its environment, inherited by everything it starts. */
  readonly tag: string
  readonly node: ChildProcess
  readonly exited: Promise<ProcessExit>
  exit: ProcessExit | null
  ending: Promise<void> | null
  /** Its start in clock ticks since boot (/proc's `starttime`): nothing older can be its descendant. 0 if unknown. */
  readonly startedAt: number
}

// ---------------------------------------------------------------------------
// Process groups

const signalGroup = (child: Child, signal: NodeJS.Signals): void => {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // No group (already gone) or not ours: fall back to the leader alone.
    try {
      child.node.kill(signal)
    } catch {}
  }
}

/**
 * Is any member of the group still running? Signal 0 also answers for
 * zombies nobody has reaped yet (a container's init may never reap), so on
 * Linux the members found in /proc must include one that is not a zombie.
 */
const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
  const members = procGroupMembers(pgid)
  return members === null || members.some((m) => m.state !== "Z")
}

/** Members of a process group from /proc (null where there is no /proc). */
const procGroupMembers = (pgid: number): Array<{ pid: number; state: string }> | null => {
  let pids: string[]
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name))
  } catch {
    return null
  }
  const members: Array<{ pid: number; state: string }> = []
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces): state ppid pgrp …
      const [state, , pgrp] = statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))
      if (Number(pgrp) === pgid) members.push({ pid: Number(pid), state: state ?? "" })
    } catch {}
  }
  return members
}

const sleep = (ms: number, options?: { readonly unref: boolean }) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms)
    // A look that keeps no process alive.
    if (options?.unref) timer.unref()
  })

const within = <A>(promise: Promise<A>, ms: number): Promise<boolean> =>
  Promise.race([promise.then(() => true), sleep(ms).then(() => false)])

/** Wait until no member of the group is left, up to `ms`. */
const groupGone = async (pgid: number, ms: number): Promise<boolean> => {
  const until = Date.now() + ms
  while (groupAlive(pgid)) {
    if (Date.now() >= until) return false
    await sleep(25)
  }
  return true
}

// ---------------------------------------------------------------------------
// Descendants: by tag and by the process tree

/** The variable every child carries, and its descendants with it. */
export const TAG = "CVG_BROKER_TAG"

interface ProcEntry {
  readonly pid: number
  readonly ppid: number
  readonly state: string
  /** Clock ticks since boot. */
  readonly startedAt: number
}

/** The fields of /proc/<pid>/stat after the command's closing parenthesis. */
const statFields = (stat: string): string[] => stat.slice(stat.lastIndexOf(")") + 2).split(" ")
/** `starttime`, field 22 of stat: the 20th after the command. */
const STARTTIME = 19

/** When `pid` started, in clock ticks since boot (0 if it cannot be read). */
const startOf = (pid: number): number => {
  try {
    return Number(statFields(readFileSync(`/proc/${pid}/stat`, "utf8"))[STARTTIME]) || 0
  } catch {
    return 0
  }
}

/** Every process in /proc (empty where there is none); read off the event loop. */
const procTable = async (): Promise<ProcEntry[]> => {
  let names: string[]
  try {
    names = (await readdir("/proc")).filter((name) => /^\d+$/.test(name))
  } catch {
    return []
  }
  const stats = await Promise.all(
    names.map((name) => readFile(`/proc/${name}/stat`, "utf8").catch(() => undefined)),
  )
  const out: ProcEntry[] = []
  names.forEach((name, i) => {
    const stat = stats[i]
    if (stat === undefined) return
    const fields = statFields(stat)
    out.push({
      pid: Number(name),
      ppid: Number(fields[1]),
      state: fields[0] ?? "",
      startedAt: Number(fields[STARTTIME]) || 0,
    })
  })
  return out
}

/**
 * Does `pid`'s environment carry `TAG=tag`? "unsure" when it reads empty: a
 * process in the middle of an exec has no environment for a moment (every
 * other process this host starts has one), so it is asked again shortly.
 */
const carries = async (pid: number, needle: Buffer): Promise<boolean | "unsure"> => {
  try {
    // Off the event loop: reading a process's environment waits while that process is in an exec.
    const environ = await readFile(`/proc/${pid}/environ`)
    if (environ.length === 0) return "unsure"
    return environ.indexOf(needle) === 0 || environ.indexOf(Buffer.concat([Buffer.from([0]), needle])) >= 0
  } catch {
    return false
  }
}

/** How often, and how far apart, a sweep asks again about a process that read empty. */
const UNSURE_TRIES = 3
const UNSURE_WAIT_MS = 5

/**
 * Every live process that is `child`'s: it carries the child's tag, or it
 * descends from the child or from one that does. Zombies are left out (they
 * are gone already, waiting only to be reaped); so are init and kernel
 * threads (never ours, and their environment reads empty).
 */
const leftoversOf = async (child: Child): Promise<number[]> => {
  const table = await procTable()
  const needle = Buffer.from(`${TAG}=${child.tag}\0`)
  const ours = new Set<number>()
  let unsure: number[] = []
  // Only what started after the child can be its descendant: the rest of the machine is never read.
  const candidates = table.filter(
    (p) =>
      p.startedAt >= child.startedAt && p.pid !== process.pid && p.state !== "Z" && p.pid > 2 && p.ppid !== 2,
  )
  const answers = await Promise.all(candidates.map((p) => carries(p.pid, needle)))
  candidates.forEach((p, i) => {
    if (answers[i] === "unsure") unsure.push(p.pid)
    else if (answers[i]) ours.add(p.pid)
  })
  for (let tries = 0; unsure.length > 0 && tries < UNSURE_TRIES; tries++) {
    await sleep(UNSURE_WAIT_MS)
    const again: number[] = []
    for (const pid of unsure) {
      const answer = await carries(pid, needle)
      if (answer === "unsure") again.push(pid)
      else if (answer) ours.add(pid)
    }
    unsure = again
  }
  if (!child.exit) ours.add(child.pid)
  // Below any of ours in the tree, whatever its environment.
  let grew = true
  while (grew) {
    grew = false
    for (const p of table)
      if (!ours.has(p.pid) && ours.has(p.ppid) && p.pid !== process.pid) {
        ours.add(p.pid)
        grew = true
      }
  }
  const live = new Set(table.filter((p) => p.state !== "Z").map((p) => p.pid))
  return [...ours].filter((pid) => pid !== child.pid && live.has(pid))
}

const signalAll = (pids: ReadonlyArray<number>, signal: NodeJS.Signals) => {
  for (const pid of pids) {
    try {
      process.kill(pid, signal)
    } catch {}
  }
}

/**
 * When the sweep looks again after the first, in the background: a process
 * caught mid-exec has no readable environment for a moment, so the one look
 * at the child's end can miss it, and once its parent is gone nothing else
 * leads to it.
 */
const LOOK_AGAIN_MS = [100, 400, 1_500]

/** End what a child left behind now, then look again a few times shortly after. */
const endLeftovers = async (child: Child, grace: number): Promise<void> => {
  await sweepLeftovers(child, grace)
  void (async () => {
    for (const ms of LOOK_AGAIN_MS) {
      await sleep(ms, { unref: true })
      await sweepLeftovers(child, grace)
    }
  })()
}

/** End what a child left behind: SIGTERM, SIGKILL after the grace, each wait bounded. */
const sweepLeftovers = async (child: Child, grace: number): Promise<void> => {
  let left = await leftoversOf(child)
  if (left.length === 0) return
  signalAll(left, "SIGTERM")
  const until = Date.now() + grace
  while (left.length > 0 && Date.now() < until) {
    await sleep(25)
    left = await leftoversOf(child)
  }
  if (left.length === 0) return
  signalAll(left, "SIGKILL")
  const killedBy = Date.now() + 1_000
  while ((await leftoversOf(child)).length > 0 && Date.now() < killedBy) await sleep(25)
}

// The last resort: if the host process itself exits, no child of ours stays.
const everyLiveGroup = new Set<number>()
let exitHookInstalled = false
const installExitHook = () => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const pgid of everyLiveGroup) {
      try {
        process.kill(-pgid, "SIGKILL")
      } catch {}
    }
  })
}

// ---------------------------------------------------------------------------

/** Login env + the caller's changes (a value of undefined removes the name). */
export const mergeEnv = (
  login: Readonly<Record<string, string | undefined>>,
  changes: SpawnOptions["env"],
): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(login)) if (v !== undefined) out[k] = v
  for (const [k, v] of Object.entries(changes ?? {})) {
    if (v === undefined) delete out[k]
    else out[k] = v
  }
  return out
}

/** Where PATH finds an executable `command` (absolute PATH entries only: never the host's cwd). */
export const findOnPath = async (command: string, pathVar: string | undefined): Promise<string | null> => {
  for (const dir of (pathVar ?? "").split(posix.delimiter)) {
    if (!dir.startsWith("/")) continue
    const candidate = posix.join(dir, command)
    try {
      if (!(await stat(candidate)).isFile()) continue
      await access(candidate, constants.X_OK)
      return candidate
    } catch {}
  }
  return null
}

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

  /** End a child: SIGTERM to its group, SIGKILL after the grace, wait, then sweep what is left of the group. */
  const end = (child: Child, first: NodeJS.Signals = "SIGTERM"): Promise<void> => {
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
      children.delete(child)
      everyLiveGroup.delete(child.pid)
    })()
    return child.ending
  }

  const start = (
    command: string,
    path: string,
    args: ReadonlyArray<string>,
    spawnOptions: SpawnOptions,
  ): Effect.Effect<Child, BrokerFailure> =>
    Effect.callback<Child, BrokerFailure>((resume) => {
      let node: ChildProcess
      const tag = randomBytes(12).toString("hex")
      try {
        node = nodeSpawn(path, [...args], {
          cwd: spawnOptions.cwd ?? options.defaultCwd,
          env: { ...mergeEnv(options.env(), spawnOptions.env), [TAG]: tag },
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
        node.on("error", (error) => options.log("child process error", { command, error: error.message }))
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
          if (!child.ending) void endLeftovers(child, grace)
        })
        children.add(child)
        everyLiveGroup.add(pid)
        installExitHook()
        resume(Effect.succeed(child))
      }
      node.once("error", onError)
      node.once("spawn", onSpawn)
    })

  const handleOf = (child: Child, stderrQueue: Queue.Queue<Uint8Array, Cause.Done>): ProcessHandle => {
    let stdoutTaken = false
    let stderrTaken = false
    return {
      pid: child.pid,
      // Read lazily (the pipe's back-pressure holds the child); one reader only.
      stdout: Stream.suspend(() => {
        if (stdoutTaken || !child.node.stdout) return Stream.empty
        stdoutTaken = true
        const readable = child.node.stdout
        return NodeStream.fromReadable<Uint8Array, unknown>({
          evaluate: () => readable,
          onError: (e) => e,
        }).pipe(Stream.catchCause(() => Stream.empty))
      }),
      stderr: Stream.suspend(() => {
        if (stderrTaken) return Stream.empty
        stderrTaken = true
        return Stream.fromQueue(stderrQueue)
      }),
      write: (text) =>
        Effect.callback<void, BrokerFailure>((resume) => {
          const stdin = child.node.stdin
          if (!stdin || stdin.destroyed || stdin.writableEnded || child.exit) {
            resume(
              Effect.fail(
                new BrokerFailure({ operation: "write", detail: `${child.command}: stdin is closed` }),
              ),
            )
            return
          }
          stdin.write(text, (error) =>
            resume(
              error
                ? Effect.fail(
                    new BrokerFailure({ operation: "write", detail: `${child.command}: ${error.message}` }),
                  )
                : Effect.void,
            ),
          )
        }),
      closeStdin: Effect.sync(() => {
        const stdin = child.node.stdin
        if (stdin && !stdin.destroyed && !stdin.writableEnded) stdin.end()
      }),
      exit: Effect.promise(() => child.exited),
      kill: (signal = "SIGTERM") =>
        signal === "SIGINT"
          ? Effect.sync(() => signalGroup(child, "SIGINT"))
          : Effect.promise(() => end(child, signal)),
    }
  }

  const argsAllowed = argsRule(options.args ?? {})
  const envAllowed = envRule(options.settableEnv ?? [])

  /** The call's arguments, cwd and variables against the grant. */
  const checkCall = (
    command: string,
    args: ReadonlyArray<string>,
    spawnOptions: SpawnOptions,
  ): NotGranted | null => {
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
      const child = yield* Effect.acquireRelease(start(command, path, args, spawnOptions), (child) =>
        Effect.promise(() => end(child)),
      )
      const stderr = child.node.stderr
      if (stderr) {
        stderr.on("data", (chunk: Buffer) => Queue.offerUnsafe(stderrQueue, new Uint8Array(chunk)))
        stderr.once("close", () => Queue.endUnsafe(stderrQueue))
        stderr.on("error", () => Queue.endUnsafe(stderrQueue))
      } else Queue.endUnsafe(stderrQueue)
      options.log("spawned", { command, args, pid: child.pid, cwd: spawnOptions.cwd ?? options.defaultCwd })
      return handleOf(child, stderrQueue)
    })

  const collectText = (bytes: Stream.Stream<Uint8Array>) => bytes.pipe(Stream.decodeText(), Stream.mkString)

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

import { join } from "node:path"
import { Effect, Exit, Scope, Stream } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { lines } from "../../sdk/lines.ts"
import type { ProcessHandle } from "../../sdk/plugin-api.ts"
import { type HostBroker, makeBroker } from "./broker.ts"
import { loadManifest } from "../core/manifest.ts"
import { makeTempWorld, pidAlive, type TempWorld } from "../testing/testing.ts"

const repoRoot = join(import.meta.dirname, "../..")

// A stand-in for `claude`: modes by first argument.
const FAKE_CLAUDE = `#!/bin/sh
case "$1" in
  --version) echo "2.1.332 (Claude Code)"; exit 0 ;;
  echo)
    echo "started $PWD \${CLAUDE_FAKE_VAR-unset} \${CLAUDE_REMOVED-unset}"
    while IFS= read -r line; do echo "echo:$line"; done
    echo "stdin closed" >&2
    exit 3 ;;
  cat) cat; exit 0 ;;
  stubborn)
    trap '' TERM
    sleep 1000 &
    echo "child $!"
    while true; do sleep 0.05; done ;;
  polite)
    sleep 1000 &
    echo "child $!"
    wait ;;
  sleep) sleep 1000 ;;
  escape)
    setsid sleep 1000 &
    echo "child $!"
    wait ;;
  escape-late)
    # Untagged and out of the group when the shell dies, tagged again a moment later:
    # what a process mid-exec looks like to a sweep (its environment unreadable for a moment).
    env -u CVG_BROKER_TAG CVG_LATE_TAG="$CVG_BROKER_TAG" setsid sh -c 'sleep 0.1; exec env CVG_BROKER_TAG="$CVG_LATE_TAG" sleep 1000' &
    echo "child $!"
    wait ;;
esac
`

let world: TempWorld
let broker: HostBroker
let loginEnv: Record<string, string | undefined>

beforeEach(async () => {
  world = makeTempWorld()
  world.command("claude", FAKE_CLAUDE)
  world.command("bash", "echo not granted") // on the login PATH, but not granted
  loginEnv = { HOME: world.home, PATH: `${world.bin}:/usr/bin:/bin`, CLAUDE_REMOVED: "present" }
  broker = await makeBroker(await loadManifest(repoRoot), {
    home: world.home,
    hostDataDir: world.hostData,
    env: () => loginEnv,
    killGraceMs: 400,
  })
})

afterEach(async () => {
  await broker.close()
  world.cleanup()
})

const proc = () => broker.api.process
const refusals = () => broker.logger.refusals().map((e) => e.message)
const failureOf = async (effect: Effect.Effect<unknown, unknown, Scope.Scope>) => {
  const exit = await Effect.runPromiseExit(Effect.scoped(effect))
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  return (exit.cause.reasons[0] as { error?: { _tag: string; message: string } }).error
}

/** A line reader over a handle's stdout, pulled one line at a time. */
const lineReader = (handle: ProcessHandle) =>
  Effect.gen(function* () {
    const pull = yield* Stream.toPull(lines(handle.stdout))
    const buffered: string[] = []
    return Effect.gen(function* () {
      while (buffered.length === 0) buffered.push(...(yield* pull))
      return buffered.shift()!
    })
  })

describe("process grants", () => {
  it("which finds a granted command on the login PATH, not on the host's", async () => {
    expect(process.env.PATH?.split(":")).not.toContain(world.bin)
    expect(await Effect.runPromise(proc().which("claude"))).toBe(join(world.bin, "claude"))
    loginEnv = { ...loginEnv, PATH: "/usr/bin:/bin" }
    expect(await Effect.runPromise(proc().which("claude"))).toBeNull()
  })

  it("a command not on the list is NotGranted, even when it is on the PATH", async () => {
    const error = await failureOf(proc().spawn("bash", ["-c", "true"]))
    expect(error).toMatchObject({ _tag: "NotGranted", capability: "process" })
    expect(await failureOf(proc().run("bash", []))).toMatchObject({ _tag: "NotGranted" })
    expect(await failureOf(proc().which("bash"))).toMatchObject({ _tag: "NotGranted" })
    expect(broker.logger.refusals().map((e) => e.message)).toEqual([
      "refused process: bash (not in the manifest's process grant)",
      "refused process: bash (not in the manifest's process grant)",
      "refused process: bash (not in the manifest's process grant)",
    ])
  })

  it("a command given as a path is NotGranted, even the granted one's own path", async () => {
    for (const command of [join(world.bin, "claude"), "./claude", "bin/claude", "../claude"]) {
      expect(await failureOf(proc().spawn(command, []))).toMatchObject({ _tag: "NotGranted" })
      expect(await failureOf(proc().which(command))).toMatchObject({ _tag: "NotGranted" })
    }
  })

  it("a granted command missing from the login PATH is a BrokerFailure", async () => {
    loginEnv = { ...loginEnv, PATH: "/nonexistent" }
    expect(await failureOf(proc().spawn("claude", ["echo"]))).toMatchObject({
      _tag: "BrokerFailure",
      detail: "claude is not on the login PATH",
    })
  })
})

describe("spawn", () => {
  it("a missing working directory is a BrokerFailure that names it", async () => {
    broker.addWorkspace(world.workspace)
    const cwd = join(world.workspace, "no-such-dir")
    expect(await failureOf(proc().spawn("claude", ["echo"], { cwd }))).toMatchObject({
      _tag: "BrokerFailure",
      detail: `claude: the working directory ${cwd} does not exist`,
    })
  })

  it("round-trips stdin to stdout, with cwd and env (login env merged, undefined removes)", async () => {
    broker.addWorkspace(world.workspace)
    const result = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", ["echo"], {
            cwd: world.workspace,
            env: { CLAUDE_FAKE_VAR: "set", CLAUDE_REMOVED: undefined },
          })
          const next = yield* lineReader(handle)
          const first = yield* next
          yield* handle.write("hello\n")
          const second = yield* next
          yield* handle.write("world\n")
          const third = yield* next
          yield* handle.closeStdin
          const stderr = yield* handle.stderr.pipe(Stream.decodeText(), Stream.mkString)
          const exit = yield* handle.exit
          const afterExit = yield* Effect.result(handle.write("late\n"))
          return { first, second, third, stderr, exit, afterExit, pid: handle.pid }
        }),
      ),
    )
    expect(result.first).toBe(`started ${world.workspace} set unset`)
    expect(result.second).toBe("echo:hello")
    expect(result.third).toBe("echo:world")
    expect(result.stderr).toBe("stdin closed\n")
    expect(result.exit).toEqual({ code: 3, signal: null })
    expect(result.afterExit._tag).toBe("Failure")
    expect(pidAlive(result.pid!)).toBe(false)
  })

  it("runs in HOME when no cwd is given", async () => {
    const first = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", ["echo"])
          return yield* yield* lineReader(handle)
        }),
      ),
    )
    expect(first).toBe(`started ${world.home} unset present`)
  })

  it("kill: SIGTERM ends a polite child and its group", async () => {
    const { exit, grandchild } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", ["polite"])
          const line = yield* yield* lineReader(handle)
          yield* handle.kill()
          return { exit: yield* handle.exit, grandchild: Number(line.split(" ")[1]) }
        }),
      ),
    )
    expect(exit).toEqual({ code: null, signal: "SIGTERM" })
    expect(pidAlive(grandchild)).toBe(false)
  })

  it("kill: a child that ignores SIGTERM gets SIGKILL after the grace", async () => {
    const started = Date.now()
    const { exit, grandchild } = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", ["stubborn"])
          const line = yield* yield* lineReader(handle)
          yield* handle.kill("SIGTERM")
          return { exit: yield* handle.exit, grandchild: Number(line.split(" ")[1]) }
        }),
      ),
    )
    expect(exit).toEqual({ code: null, signal: "SIGKILL" })
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    expect(pidAlive(grandchild)).toBe(false)
  })

  it("closing the scope ends the process group and waits for the exit", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const { pid, grandchild } = await Effect.runPromise(
      Effect.gen(function* () {
        const handle = yield* proc().spawn("claude", ["stubborn"])
        const line = yield* yield* lineReader(handle)
        return { pid: handle.pid!, grandchild: Number(line.split(" ")[1]) }
      }).pipe(Scope.provide(scope)),
    )
    expect(pidAlive(pid)).toBe(true)
    expect(broker.processes.live().map((p) => p.pid)).toEqual([pid])
    await Effect.runPromise(Scope.close(scope, Exit.void))
    // No polling: once close returns, the child and its group are gone.
    expect(pidAlive(pid)).toBe(false)
    expect(pidAlive(grandchild)).toBe(false)
    expect(broker.processes.live()).toEqual([])
  })

  it("an interrupted fiber's scope ends its child too", async () => {
    let pid = 0
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", ["sleep"])
          pid = handle.pid!
          yield* Effect.never
        }),
      ).pipe(Effect.timeout(300), Effect.ignore),
    )
    expect(pid).toBeGreaterThan(0)
    expect(pidAlive(pid)).toBe(false)
  })

  it("broker.close ends children whose scope the plugin never closed", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const pid = await Effect.runPromise(
      proc()
        .spawn("claude", ["sleep"])
        .pipe(
          Effect.map((h) => h.pid!),
          Scope.provide(scope),
        ),
    )
    expect(pidAlive(pid)).toBe(true)
    await broker.close()
    expect(pidAlive(pid)).toBe(false)
  })

  it("stderr a plugin never reads does not stall the child", async () => {
    world.command("claude", `#!/bin/sh\nhead -c 2000000 /dev/zero >&2\necho done\n`)
    const line = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const handle = yield* proc().spawn("claude", [])
          return yield* yield* lineReader(handle)
        }),
      ).pipe(Effect.timeout(10_000)),
    )
    expect(line).toBe("done")
  })
})

describe("run", () => {
  it("collects output and the exit code", async () => {
    const result = await Effect.runPromise(proc().run("claude", ["--version"]))
    expect(result).toEqual({ code: 0, stdout: "2.1.332 (Claude Code)\n", stderr: "" })
  })

  it("feeds stdin", async () => {
    const result = await Effect.runPromise(proc().run("claude", ["cat"], { stdin: "a\nb\n" }))
    expect(result.stdout).toBe("a\nb\n")
  })

  it("times out, ending the child", async () => {
    const error = await failureOf(proc().run("claude", ["sleep"], { timeoutMs: 200 }))
    expect(error).toMatchObject({ _tag: "BrokerFailure", operation: "run" })
    expect(error?.message).toContain("did not finish within 200 ms")
    expect(broker.processes.live()).toEqual([])
  })
})

describe("what a granted command may be asked", () => {
  it("npm runs only the grant's argument patterns: view, ls and the update install, never exec", async () => {
    world.command("npm", 'echo "npm $*"')
    const ok = await Effect.runPromise(proc().run("npm", ["view", "@anthropic-ai/claude-code", "version"]))
    expect(ok.stdout).toBe("npm view @anthropic-ai/claude-code version\n")
    const install = ["install", "-g", "--prefix", "/opt/x", "@anthropic-ai/claude-code@latest"]
    expect((await Effect.runPromise(proc().run("npm", install))).code).toBe(0)
    for (const args of [
      ["exec", "-c", "touch /tmp/owned"],
      ["view", "@anthropic-ai/claude-code", "version", "--prefix", "/x", "extra"],
      ["install", "-g", "--prefix", "/opt/x", "evil@latest"],
      [],
    ]) {
      const failure = await failureOf(proc().spawn("npm", args))
      expect(failure).toMatchObject({ _tag: "NotGranted" })
    }
    expect(refusals().filter((r) => r.includes("match none of the manifest's patterns")).length).toBe(4)
  })

  it("the working directory must lie in a granted scope: /etc and the host's data are refused", async () => {
    broker.addWorkspace(world.workspace)
    for (const cwd of ["/etc", world.hostData, join(world.workspace, "..")]) {
      const failure = await failureOf(proc().spawn("claude", ["echo"], { cwd }))
      expect(failure).toMatchObject({ _tag: "NotGranted" })
    }
    const inside = await Effect.runPromise(proc().run("claude", ["--version"], { cwd: world.workspace }))
    expect(inside.code).toBe(0)
  })

  it("only granted variables may be set: never PATH, NODE_OPTIONS or LD_*, nor one the grant does not name", async () => {
    for (const name of [
      "PATH",
      "NODE_OPTIONS",
      "LD_PRELOAD",
      "BASH_ENV",
      "GIT_SSH_COMMAND",
      "SOMETHING_ELSE",
    ]) {
      const failure = await failureOf(proc().spawn("claude", ["echo"], { env: { [name]: "x" } }))
      expect(failure).toMatchObject({ _tag: "NotGranted" })
    }
    const granted = await Effect.runPromise(
      proc().run("claude", ["--version"], { env: { CLAUDE_CODE_X: "1", ANTHROPIC_BASE_URL: "http://x" } }),
    )
    expect(granted.code).toBe(0)
  })
})

describe("descendants in other process groups", () => {
  /** Start `claude escape`: its child runs `setsid sleep`, in a session and group of its own. */
  const startEscape = (scope: Scope.Scope, how = "escape") =>
    Effect.runPromise(
      Effect.gen(function* () {
        const handle = yield* proc().spawn("claude", [how])
        const line = yield* yield* lineReader(handle)
        return { pid: handle.pid!, escaped: Number(line.split(" ")[1]) }
      }).pipe(Scope.provide(scope)),
    )
  const waitFor = async (check: () => boolean, ms: number) => {
    const until = Date.now() + ms
    while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    return check()
  }

  it("closing the scope ends a descendant that left the group", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const { pid, escaped } = await startEscape(scope)
    await waitFor(() => pidAlive(escaped), 1_000)
    expect(pidAlive(escaped)).toBe(true)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    expect(pidAlive(pid)).toBe(false)
    expect(pidAlive(escaped)).toBe(false)
  })

  it("a child killed from outside leaves live() at once, and what it started ends without waiting for the scope", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const { pid, escaped } = await startEscape(scope)
    await waitFor(() => pidAlive(escaped), 1_000)
    process.kill(pid, "SIGKILL")
    expect(await waitFor(() => broker.processes.live().length === 0, 2_000)).toBe(true)
    expect(await waitFor(() => !pidAlive(escaped), 10_000)).toBe(true)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  it("a descendant the first sweep cannot see (mid-exec, its tag unreadable) is ended by a later sweep", async () => {
    const scope = await Effect.runPromise(Scope.make())
    const { pid, escaped } = await startEscape(scope, "escape-late")
    await waitFor(() => pidAlive(escaped), 1_000)
    process.kill(pid, "SIGKILL")
    expect(await waitFor(() => broker.processes.live().length === 0, 2_000)).toBe(true)
    expect(await waitFor(() => !pidAlive(escaped), 6_000)).toBe(true)
    await Effect.runPromise(Scope.close(scope, Exit.void))
  })
})

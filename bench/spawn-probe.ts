/**
 * Timestamps of one `claude` session process seen from this process's own
 * `child_process.spawn` (bench/scale-startup.ts): when the spawn was asked
 * for, when the `initialize` request reached the child's stdin, and when the
 * child's answer to it had arrived whole on stdout. The host's process broker
 * spawns in this process (the plugin in its own asks it over the channel), so
 * these marks and the caller's own clock are one clock.
 *
 * How it watches without changing what it watches: `spawn` is wrapped (and
 * `syncBuiltinESMExports` makes modules that imported it by name see the
 * wrapper); the child's stdin `write` and its stdout `push` (where Node hands
 * each chunk read from the pipe to the stream) are wrapped on the instance,
 * so no listener is added, no stream is switched to flowing, and every chunk
 * goes on as it came. Only a child started with `--input-format` (a session,
 * not a `--version` probe) while a probe is armed is watched, and only until
 * its answer is found.
 */
import childProcess, { type ChildProcess } from "node:child_process"
import { syncBuiltinESMExports } from "node:module"
import { basename } from "node:path"

export interface StartMarks {
  /** performance.now() just before the spawn call. */
  spawnAt?: number
  /** The `initialize` request's chunk written to the child's stdin. */
  writtenAt?: number
  /** The chunk that completed the child's `control_response` line to that request. */
  answeredAt?: number
}

const original = childProcess.spawn
let armed: StartMarks | undefined
let installed = false

const watch = (child: ChildProcess, marks: StartMarks): void => {
  let requestId: string | undefined
  const stdin = child.stdin
  if (stdin) {
    const write = stdin.write
    stdin.write = function (this: typeof stdin, chunk: unknown, ...rest: unknown[]) {
      if (requestId === undefined) {
        const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8")
        const at = text.indexOf('"subtype":"initialize"')
        if (at !== -1) {
          const end = text.indexOf("\n", at)
          const line = text.slice(text.lastIndexOf("\n", at) + 1, end === -1 ? undefined : end)
          requestId = /"request_id":"([^"]+)"/.exec(line)?.[1]
          marks.writtenAt = performance.now()
        }
      }
      return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof stdin.write
  }
  const stdout = child.stdout
  if (stdout) {
    const push = stdout.push
    let seen = ""
    stdout.push = function (this: typeof stdout, chunk: unknown, ...rest: unknown[]) {
      if (marks.answeredAt === undefined && requestId !== undefined && chunk !== null) {
        seen += typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8")
        for (let end = seen.indexOf("\n"); end !== -1; end = seen.indexOf("\n")) {
          const line = seen.slice(0, end)
          seen = seen.slice(end + 1)
          if (line.includes('"control_response"') && line.includes(`"request_id":"${requestId}"`)) {
            marks.answeredAt = performance.now()
            seen = ""
            break
          }
        }
      }
      return (push as (...a: unknown[]) => boolean).call(this, chunk, ...rest)
    } as typeof stdout.push
  }
}

/** Install the spawn wrapper once for this process. */
const install = (): void => {
  if (installed) return
  installed = true
  childProcess.spawn = function (this: unknown, ...args: unknown[]) {
    const marks = armed
    const command = typeof args[0] === "string" ? basename(args[0]) : ""
    const argv = Array.isArray(args[1]) ? (args[1] as string[]) : []
    const session =
      marks !== undefined &&
      marks.spawnAt === undefined &&
      command.startsWith("claude") &&
      argv.includes("--input-format")
    const spawnAt = performance.now()
    const child = (original as (...a: unknown[]) => ChildProcess).apply(this, args)
    if (session && marks !== undefined) {
      marks.spawnAt = spawnAt
      watch(child, marks)
    }
    return child
  } as typeof childProcess.spawn
  syncBuiltinESMExports()
}

/** Watch the next session process spawned in this process; its marks fill in as it starts. */
export const armSpawnProbe = (): StartMarks => {
  install()
  armed = {}
  return armed
}

/** Stop watching new processes (the wrapper stays, passing every call through). */
export const disarmSpawnProbe = (): void => {
  armed = undefined
}

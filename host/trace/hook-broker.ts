/**
 * What the broker gives trace/ (sdk/plugin-api.ts), over Node, for the Claude
 * Code plugin's hooks: processes run to their end (git), file reads (the
 * transcript's end), the environment, storage as one JSON file per key under
 * the plugin's data folder, and a log that writes to stderr only when asked
 * to (a hook prints nothing otherwise). No grants: the hook is the user's own
 * process, as the CLI runs it.
 *
 * Storage: key `a:b` is the file `<data>/a/b.json` (each part URI-encoded),
 * written whole to a temporary file and renamed, so a reader never sees half
 * of one.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readSync, realpathSync, renameSync } from "node:fs"
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { dirname, join } from "node:path"
import { Context, Effect } from "effect"
import {
  BrokerFailure,
  type DirEntry,
  Env,
  type EnvShape,
  type FileStat,
  Fs,
  type FsShape,
  Log,
  type LogShape,
  Process,
  type ProcessShape,
  Storage,
  type StorageShape,
} from "../../sdk/plugin-api.ts"
import { nodeRun } from "./node-run.ts"

const attempt = <A>(read: () => A): A | null => {
  try {
    return read()
  } catch {
    return null
  }
}

export const nodeProcess = (env: NodeJS.ProcessEnv): ProcessShape => ({
  run: (command, args, options = {}) =>
    nodeRun(command, args, {
      env: { ...env, ...options.env },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    }),
  spawn: (command) =>
    Effect.fail(new BrokerFailure({ operation: `spawn ${command}`, detail: "hooks only run" })),
  which: () => Effect.succeed(null),
})

const statOf = (path: string): FileStat | null =>
  attempt(() => {
    const s = statSync(path)
    return {
      kind: s.isFile() ? "file" : s.isDirectory() ? "directory" : "other",
      size: s.size,
      mtimeMs: s.mtimeMs,
      birthtimeMs: s.birthtimeMs,
    }
  })

const readRangeOf = (path: string, start: number, end: number): Uint8Array | null =>
  attempt(() => {
    const fd = openSync(path, "r")
    try {
      const size = Math.max(0, Math.min(end, statSync(path).size) - start)
      const bytes = new Uint8Array(size)
      let read = 0
      while (read < size) {
        const n = readSync(fd, bytes, read, size - read, start + read)
        if (n === 0) break
        read += n
      }
      return bytes.subarray(0, read)
    } finally {
      closeSync(fd)
    }
  })

export const nodeFs = (data: string): FsShape => ({
  read: (path) => Effect.sync(() => attempt(() => readFileSync(path, "utf8"))),
  readRange: (path, start, end) => Effect.sync(() => readRangeOf(path, start, end)),
  stream: () => Effect.succeed(null),
  stat: (path) => Effect.sync(() => statOf(path)),
  list: (dir) =>
    Effect.sync(() =>
      attempt(() =>
        readdirSync(dir, { withFileTypes: true }).map(
          (e): DirEntry => ({
            name: e.name,
            kind: e.isFile() ? "file" : e.isDirectory() ? "directory" : e.isSymbolicLink() ? "link" : "other",
          }),
        ),
      ),
    ),
  realpath: (path) => Effect.sync(() => attempt(() => realpathSync(path))),
  paths: { home: homedir(), data },
})

export const nodeEnv = (env: NodeJS.ProcessEnv): EnvShape => {
  const all = () =>
    Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
  return { get: (name) => Effect.sync(() => env[name]), all: Effect.sync(all) }
}

/** The file that holds one storage key. */
export const storageFile = (data: string, key: string): string =>
  `${join(data, ...key.split(":").map((part) => encodeURIComponent(part)))}.json`

export const nodeStorage = (data: string): StorageShape => ({
  get: (key) => Effect.sync(() => attempt(() => JSON.parse(readFileSync(storageFile(data, key), "utf8")))),
  set: (key, value) =>
    Effect.sync(() => {
      const file = storageFile(data, key)
      mkdirSync(dirname(file), { recursive: true })
      const temporary = `${file}.${process.pid}.tmp`
      writeFileSync(temporary, JSON.stringify(value))
      renameSync(temporary, file)
    }),
  delete: (key) => Effect.sync(() => rmSync(storageFile(data, key), { force: true })),
  keys: Effect.sync(() =>
    (attempt(() => readdirSync(data, { recursive: true, encoding: "utf8" })) ?? [])
      .filter((path) => path.endsWith(".json"))
      .map((path) => path.slice(0, -".json".length).split("/").map(decodeURIComponent).join(":")),
  ),
})

/** A log that writes each line to `write` when `debug` is on, and nothing otherwise. */
export const nodeLog = (debug: boolean, write: (line: string) => void): LogShape => {
  const at =
    (level: string) =>
    (message: string, data?: unknown): Effect.Effect<void> =>
      debug
        ? Effect.sync(() =>
            write(
              `agent-trace ${level}: ${message}${data === undefined ? "" : ` ${JSON.stringify(data)}`}\n`,
            ),
          )
        : Effect.void
  return { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") }
}

export interface HookBrokerOptions {
  readonly env: NodeJS.ProcessEnv
  /** The plugin's data folder (`CLAUDE_PLUGIN_DATA`). */
  readonly data: string
  readonly debug: boolean
  readonly write: (line: string) => void
}

/** The services trace/hook.ts asks for. */
export const hookBroker = (options: HookBrokerOptions): Context.Context<Process | Fs | Env | Storage | Log> =>
  Context.make(Process, nodeProcess(options.env)).pipe(
    Context.add(Fs, nodeFs(options.data)),
    Context.add(Env, nodeEnv(options.env)),
    Context.add(Storage, nodeStorage(options.data)),
    Context.add(Log, nodeLog(options.debug, options.write)),
  )

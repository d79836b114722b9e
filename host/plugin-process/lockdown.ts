/**
 * The first wall of the plugin process, put up before any plugin code runs:
 * every way out of the process that Node's permission model leaves open
 * (network on Node 20 and 24, `process.kill`, the login environment, a
 * socket reachable from `process.stdout`) and every door to Node's modules
 * (`process.binding`, `getBuiltinModule`, `dlopen`, `mainModule`) is
 * replaced by a refusal that reports itself to the host and throws.
 *
 * Rules it keeps:
 * - Replacements are non-writable and non-configurable: plugin code cannot
 *   put the originals back (it never saw them). An original is deleted
 *   before its replacement is defined, never read: reading one of Node's
 *   lazy globals builds it (Node 24's `WebSocket` loads undici).
 * - `getBuiltinModule` answers undefined (its answer for an unknown id), so
 *   libraries that probe for a module (Effect asks for async_hooks) go on.
 * - The permission model stays the second wall: what this file misses, the
 *   flags (child-flags.ts) still deny on files, processes, workers, addons
 *   and the inspector.
 */

export type Report = (what: string) => void

export class SandboxRefusal extends Error {
  override readonly name = "SandboxRefusal"
  readonly code = "ERR_PLUGIN_SANDBOX"
}

const lock = (target: object, key: string, value: unknown) => {
  try {
    // Deleted first: on Node 24 defining over a lazy global (`WebSocket`) first builds the original,
    // loading undici into every plugin process's start; a deleted one never is. Same end state.
    Reflect.deleteProperty(target, key)
    Object.defineProperty(target, key, { value, writable: false, configurable: false, enumerable: false })
  } catch {
    // A non-configurable original (none on Node 20 and 24) stays as it is; the permission model holds it.
  }
}

/** Functions on `process` that reach outside the process or into Node's internals. */
const PROCESS_REFUSED = [
  "binding",
  "_linkedBinding",
  "dlopen",
  "kill",
  "_kill",
  "_getActiveHandles",
  "_getActiveRequests",
  "openStdin",
  "setuid",
  "setgid",
  "seteuid",
  "setegid",
  "setgroups",
  "initgroups",
  "_debugProcess",
  "_debugEnd",
  "_startProfilerIdleNotifier",
  "_stopProfilerIdleNotifier",
  // The host's channel, taken by child.ts before this runs. Node's own `_send`,
  // `disconnect` and `channel` stay: the taken `send` goes through them, Node
  // calls `disconnect` itself when the host lets go (a refusal there crashed
  // the child instead), and they reach only that channel.
  "send",
]

/** Properties of `process` that hold a handle (a socket, the IPC pipe, the module system). */
const PROCESS_HIDDEN = ["mainModule", "report", "stdin"]

/** Globals that open network connections. */
const GLOBAL_REFUSED = ["fetch", "WebSocket", "EventSource", "XMLHttpRequest"]

export const lockdown = (report: Report, log: (level: "info" | "warn", text: string) => void): void => {
  const refusal = (what: string) =>
    function refused() {
      report(what)
      throw new SandboxRefusal(`${what} is not available in the plugin process`)
    }
  const proc = process as unknown as Record<string, unknown>
  for (const key of PROCESS_REFUSED) lock(proc, key, refusal(`process.${key}`))
  for (const key of PROCESS_HIDDEN) lock(proc, key, undefined)
  lock(proc, "getBuiltinModule", (id: unknown) => {
    report(`process.getBuiltinModule(${String(id)})`)
    return undefined
  })
  // The child was started with no environment; this one is empty and stays so.
  lock(proc, "env", Object.freeze({}))

  // stdout and stderr are sockets (the pipe to the host): their constructor opens TCP connections.
  const sink = (level: "info" | "warn") => ({
    write: (chunk: unknown) => {
      log(level, typeof chunk === "string" ? chunk : String(chunk))
      return true
    },
    isTTY: false,
  })
  lock(proc, "stdout", sink("info"))
  lock(proc, "stderr", sink("warn"))
  const text = (args: ReadonlyArray<unknown>) =>
    args.map((a) => (typeof a === "string" ? a : safeJson(a))).join(" ")
  const quiet = () => {}
  const consoleOf = {
    log: (...a: unknown[]) => log("info", text(a)),
    info: (...a: unknown[]) => log("info", text(a)),
    debug: (...a: unknown[]) => log("info", text(a)),
    warn: (...a: unknown[]) => log("warn", text(a)),
    error: (...a: unknown[]) => log("warn", text(a)),
    trace: (...a: unknown[]) => log("warn", text(a)),
    dir: (...a: unknown[]) => log("info", text(a)),
    table: (...a: unknown[]) => log("info", text(a)),
    assert: quiet,
    count: quiet,
    countReset: quiet,
    group: quiet,
    groupCollapsed: quiet,
    groupEnd: quiet,
    time: quiet,
    timeEnd: quiet,
    timeLog: quiet,
  }
  lock(globalThis, "console", Object.freeze(consoleOf))
  for (const key of GLOBAL_REFUSED) lock(globalThis, key, refusal(key))
}

const safeJson = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

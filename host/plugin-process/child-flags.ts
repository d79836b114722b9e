/**
 * The Node command line of a plugin process: the permission model as the
 * running Node spells it, reads allowed only of the files the process runs
 * (its entry, the plugin's bundle and the bundle's V8 code cache), no grant
 * of anything else, and no code generation from strings.
 *
 * What the flags hold (plugin-process.test.ts checks it on the Node that
 * runs the tests):
 * - files: reads of any other path, and every write, are ERR_ACCESS_DENIED;
 * - child processes, worker threads, the inspector: ERR_ACCESS_DENIED;
 * - native addons: ERR_DLOPEN_DISABLED;
 * - network: NOT blocked on Node 20 or 24 (`--allow-net` arrives in Node 25):
 *   the lockdown (lockdown.ts) and the script loader (child.ts) leave the
 *   plugin no module and no global that opens a socket.
 *
 * A front end's V8 flags pass only when they size the heap (the ACP agent's
 * memory settings); the code cache is made under them and named by them,
 * since V8 refuses a cache made under some of them.
 */

/** `--permission` where Node has it (22.13+, 24), else Node 20's experimental spelling. */
export const permissionFlag = (): string =>
  process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission"

/** The bundle's V8 code cache beside it: one file per set of heap flags, since front ends pass different ones. */
export const codeCachePath = (bundle: string, flags: ReadonlyArray<string>): string =>
  flags.length === 0
    ? `${bundle}.v8cache`
    : `${bundle}.${flags.map((f) => f.replace(/^--/, "")).join(",")}.v8cache`

/** The flags that shape the child's compiled code: bundle.ts makes the code cache under them too. */
export const CODE_FLAGS: ReadonlyArray<string> = [
  "--disallow-code-generation-from-strings",
  // Lets the script's import() reach child.ts's callback, which refuses and
  // reports it; without it import() fails the same, but the host never hears.
  "--experimental-vm-modules",
]

/**
 * Node's own flags for every plugin process: one thread for V8's background
 * work (Node's default is four), so its compiler and collector helpers do
 * not compete with both processes' main threads on a small machine.
 */
export const PROCESS_FLAGS: ReadonlyArray<string> = ["--v8-pool-size=1"]

const HEAP_FLAG = /^--(max|min|initial)-[a-z-]+-size=\d+$/

/**
 * The heap a plugin process starts with when the front end sizes none: a
 * first old-generation limit of 64 MB, so V8 does not mark again and again
 * while a live heap of ~10 MB streams frames under its small first limit.
 */
export const DEFAULT_HEAP_FLAGS: ReadonlyArray<string> = ["--initial-heap-size=64"]

/** The heap flags a plugin process starts with: the front end's in its order, else DEFAULT_HEAP_FLAGS. */
export const heapFlags = (v8Flags: ReadonlyArray<string>): ReadonlyArray<string> => {
  const chosen = v8Flags.filter((flag) => HEAP_FLAG.test(flag))
  return chosen.length > 0 ? chosen : DEFAULT_HEAP_FLAGS
}

/** The child's command line; `v8Flags` never widens the permission model or what code may do. */
export const childArgs = (entry: string, bundle: string, v8Flags: ReadonlyArray<string> = []): string[] => {
  const flags = heapFlags(v8Flags)
  const cache = codeCachePath(bundle, flags)
  return [
    ...flags,
    permissionFlag(),
    `--allow-fs-read=${entry}`,
    `--allow-fs-read=${bundle}`,
    `--allow-fs-read=${cache}`,
    ...CODE_FLAGS,
    ...PROCESS_FLAGS,
    "--no-warnings",
    entry,
    bundle,
    cache,
  ]
}

/**
 * The Node command line of a plugin process: the permission model as the
 * running Node spells it, reads allowed only of the two files the process
 * runs (its entry and the plugin's bundle), no grant of anything else, and
 * no code generation from strings.
 *
 * What the flags hold, checked by host/plugin-process/plugin-process.test.ts on the Node
 * that runs the tests (Node 20.20 and 24.22 verified by hand):
 * - files: reads of any other path, and every write, are ERR_ACCESS_DENIED;
 * - child processes, worker threads, the inspector: ERR_ACCESS_DENIED;
 * - native addons: ERR_DLOPEN_DISABLED;
 * - network: NOT blocked on Node 20 or 24 (`--allow-net` arrives in Node 25):
 *   the lockdown (lockdown.ts) and the script loader (child.ts) leave the
 *   plugin no module and no global that opens a socket.
 *
 * One more file may be read: the bundle's V8 code cache (bundle.ts writes
 * it, child.ts uses it only when it was made from the very bundle it runs).
 *
 * A front end's V8 flags pass only when they size the heap or choose when V8
 * tiers code up (a fixed list); every flag that passes is also a flag the
 * code cache is made under and named by (cacheFlags), since V8 refuses a
 * cache made under other flags (checked on 24.22 with `cachedDataRejected`:
 * `--always-sparkplug`, `--no-lazy`, `--max-lazy`, an invocation count and
 * `--initial-heap-size` count; `--max-semi-space-size` and, on 24 but not
 * 20, `--no-lazy-feedback-allocation` do not). None of the tier-up flags is
 * a default: none paid (NOTES.md, "The plugin process", tier-up flags).
 */

/** `--permission` where Node has it (22.13+, 24), else Node 20's experimental spelling. */
export const permissionFlag = (): string =>
  process.allowedNodeEnvironmentFlags.has("--permission") ? "--permission" : "--experimental-permission"

/**
 * The V8 code cache of a plugin bundle: beside it, one per bundle and heap
 * flags. V8 counts some heap flags in the flags its cache must match
 * (`--initial-heap-size` does, `--max-semi-space-size` does not, on 24.22),
 * and front ends pass different ones, so each set has its own file.
 */
export const codeCachePath = (bundle: string, flags: ReadonlyArray<string>): string =>
  flags.length === 0
    ? `${bundle}.v8cache`
    : `${bundle}.${flags.map((f) => f.replace(/^--/, "")).join(",")}.v8cache`

/**
 * The flags that shape the child's compiled code. V8 refuses a code cache
 * made under other flags, so bundle.ts makes the cache under these (heap
 * sizes do not count on Node 24; Node 20 counts them, and refuses it then).
 */
export const CODE_FLAGS: ReadonlyArray<string> = [
  "--disallow-code-generation-from-strings",
  // Lets the script's import() reach child.ts's callback, which refuses and
  // reports it; without it import() fails the same, but the host never hears.
  "--experimental-vm-modules",
]

const HEAP_FLAG = /^--(max|min|initial)-[a-z-]+-size=\d+$/

/**
 * The tier-up flags a front end may choose (when V8 compiles what, never
 * what code may do): they shape the compiled code, so they count in V8's
 * check of a code cache, and bundle.ts makes the cache under them too.
 */
const JIT_FLAG =
  /^--(no-)?(always-sparkplug|sparkplug|lazy-feedback-allocation|lazy|max-lazy|maglev|turbofan|concurrent-sparkplug)$|^--invocation-count-for-[a-z-]+=\d+$/

/** The heap flags a plugin process starts with: the front end's. */
export const heapFlags = (v8Flags: ReadonlyArray<string>): ReadonlyArray<string> =>
  v8Flags.filter((flag) => HEAP_FLAG.test(flag))

/** The tier-up flags a plugin process starts with: the front end's, in its order. */
export const jitFlags = (v8Flags: ReadonlyArray<string>): ReadonlyArray<string> =>
  v8Flags.filter((flag) => JIT_FLAG.test(flag))

/** The flags a code cache is made under and named by: the heap's, then the tier-up ones. */
export const cacheFlags = (v8Flags: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...heapFlags(v8Flags),
  ...jitFlags(v8Flags),
]

/**
 * `v8Flags`: heap sizing (the front end's choice, e.g. the ACP agent's)
 * and tier-up flags, in that order;
 * never a permission flag or one that changes what code may do.
 */
export const childArgs = (entry: string, bundle: string, v8Flags: ReadonlyArray<string> = []): string[] => {
  const flags = cacheFlags(v8Flags)
  const cache = codeCachePath(bundle, flags)
  return [
    ...flags,
    permissionFlag(),
    `--allow-fs-read=${entry}`,
    `--allow-fs-read=${bundle}`,
    `--allow-fs-read=${cache}`,
    ...CODE_FLAGS,
    "--no-warnings",
    entry,
    bundle,
    cache,
  ]
}

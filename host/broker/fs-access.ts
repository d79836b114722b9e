/**
 * Whether a path may be read, and the one open that reads it. A path is
 * granted when it lies in a scope and so does the real path and every link on
 * the way below the scope root. The open is checked again on the descriptor
 * itself (where it really lives), so a swap after the check hands out nothing
 * from outside. A refusal, a missing file or any I/O error answers null.
 */
import { existsSync, type Stats, constants } from "node:fs"
import { type FileHandle, lstat, open, readlink, realpath, stat } from "node:fs/promises"
import { Effect } from "effect"
import { covers, expandPath, type ScopeRoot, type ScopeSet } from "./scopes.ts"

/** What every check needs: the scopes, HOME for `~`, and where refusals are told. */
export interface AccessSetting {
  readonly scopes: ScopeSet
  readonly home: string
  /** Told of every refusal (path asked, why). */
  readonly refuse: (path: string, reason: string) => void
}

export type Access =
  | {
      readonly ok: true
      readonly real: string
      /** Every path below this one (a folder's files) lies in a scope too. */
      readonly below: boolean
    }
  | { readonly ok: false }

/** Linux names every open descriptor's file in /proc/self/fd. */
export const FD_LINKS = existsSync("/proc/self/fd")
export const fdPath = (fd: number) => `/proc/self/fd/${fd}`

/** How every call opens: never a controlling terminal, never blocking on a FIFO. */
export const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY

const realOrNull = (path: string): Promise<string | null> => realpath(path).catch(() => null)

/**
 * Whether a root of `roots`, or the place one really lives (a temp HOME
 * under a linked /tmp, a linked ~/.claude), passes a test. Each root's real
 * place is worked out only when an answer needs it, and once: `first` (the
 * root that covers the path being checked) is asked first, and mostly
 * settles it, so a check under a linked ~/.claude costs one realpath for
 * the roots, not one a root. For one check at a time (its questions in turn).
 */
const grantedRoots = (roots: ReadonlyArray<ScopeRoot>, first?: ScopeRoot) => {
  const order = first === undefined ? roots : [first, ...roots.filter((r) => r !== first)]
  const real: Array<ScopeRoot | null> = []
  return async (test: (root: ScopeRoot) => boolean): Promise<boolean> => {
    if (roots.some(test)) return true
    for (let i = 0; i < order.length; i++) {
      if (i === real.length) {
        const root = order[i] as ScopeRoot
        const target = await realOrNull(root.root)
        real.push(target && target !== root.root ? { ...root, root: target } : null)
      }
      const root = real[i]
      if (root && test(root)) return true
    }
    return false
  }
}

const inAny = (roots: ReadonlyArray<ScopeRoot>, path: string) => roots.some((r) => covers(r, path))

/**
 * Where an open file really lives: its /proc/self/fd link on Linux; elsewhere
 * the real path of its name, accepted only when that path's inode is the
 * open file's (so the name did not move between the open and the look).
 */
const openedAt = async (handle: FileHandle, stats: Stats, named: string): Promise<string | null> => {
  if (FD_LINKS) {
    const link = await readlink(fdPath(handle.fd)).catch(() => null)
    // A file deleted while open is named "… (deleted)": nowhere to check.
    return link?.startsWith("/") && !link.endsWith(" (deleted)") ? link : null
  }
  const real = await realOrNull(named)
  if (real === null) return null
  const there = await stat(real).catch(() => null)
  return there !== null && there.ino === stats.ino && there.dev === stats.dev ? real : null
}

/** Decide whether `path` may be read, and where it really is. */
export const authorize = async (
  setting: AccessSetting,
  path: string,
  report: (path: string, reason: string) => void = setting.refuse,
): Promise<Access> => {
  const { scopes, home } = setting
  if (typeof path !== "string" || path === "") {
    report(String(path), "not a path")
    return { ok: false }
  }
  const expanded = path === "~" || path.startsWith("~/") ? expandPath(path, home) : path
  if (!expanded.startsWith("/")) {
    report(path, "not an absolute path")
    return { ok: false }
  }
  const normal = expandPath(expanded, home)
  const roots = scopes.roots()
  const scope = roots.find((r) => covers(r, normal))
  if (!scope) {
    report(
      path,
      normal === expanded
        ? "outside every fs.read scope"
        : `resolves to ${normal}, outside every fs.read scope`,
    )
    return { ok: false }
  }
  const real = await realOrNull(normal)
  if (real === null) return { ok: false } // missing: null, not a refusal
  // Every path below lies in a scope too: a subtree scope covers the path, and its real place.
  const subtreeOver = (at: string) => (r: ScopeRoot) => r.subtree && covers(r, at)
  const below = roots.some(subtreeOver(normal))
  if (real === normal) return { ok: true, real, below } // no link anywhere on the path
  const granted = grantedRoots(roots, scope)
  const grants = (at: string) => granted((r) => covers(r, at))
  if (!(await grants(real))) {
    report(path, `a link leads to ${real}, outside every fs.read scope`)
    return { ok: false }
  }
  // Every link below the scope root must land in a scope too, even when a
  // later link leads back in.
  const rest = normal.slice(scope.root.length).split("/").filter(Boolean)
  let prefix = scope.root
  for (const part of rest) {
    prefix = prefix === "/" ? `/${part}` : `${prefix}/${part}`
    const info = await lstat(prefix).catch(() => null)
    if (!info?.isSymbolicLink()) continue
    const target = await realOrNull(prefix)
    if (target === null) return { ok: false }
    if (!(await grants(target))) {
      report(path, `the link ${prefix} leads to ${target}, outside every fs.read scope`)
      return { ok: false }
    }
  }
  return { ok: true, real, below: below && (await granted(subtreeOver(real))) }
}

/** A file opened and checked: its descriptor, where it really lives, its stats. */
export interface Opened {
  readonly handle: FileHandle
  readonly real: string
  readonly stats: Stats
}

/**
 * Open `path` once granted, then check where the opened descriptor really
 * lives: the answer the caller reads from, with no path walked again. A
 * file must be a regular file with one name, unless `kinds` allows others.
 */
export const openChecked = async (
  setting: AccessSetting,
  path: string,
  kinds: "file" | "any",
  flags = OPEN_FLAGS,
): Promise<Opened | null> => {
  const { scopes, refuse } = setting
  const access = await authorize(setting, path)
  if (!access.ok) return null
  const handle = await open(access.real, flags).catch(() => null)
  if (handle === null) return null
  try {
    const stats = await handle.stat()
    const real = await openedAt(handle, stats, access.real)
    if (
      real === null ||
      (real !== access.real && !(await grantedRoots(scopes.roots())((r) => covers(r, real))))
    ) {
      refuse(
        path,
        `changed while it was opened: the open file is ${real ?? "nowhere"}, outside every fs.read scope`,
      )
      await handle.close()
      return null
    }
    if (stats.isFile() && stats.nlink > 1) {
      refuse(path, `has ${stats.nlink} hard links; their other names may lie outside every fs.read scope`)
      await handle.close()
      return null
    }
    if (kinds === "file" && !stats.isFile()) {
      await handle.close()
      return null
    }
    return { handle, real, stats }
  } catch {
    await handle.close().catch(() => {})
    return null
  }
}

/** Run `f` on the checked open file; null on refusal or any error, the file closed after. */
export const withOpen = <A>(
  setting: AccessSetting,
  path: string,
  kinds: "file" | "any",
  f: (opened: Opened) => Promise<A | null>,
  flags?: number,
): Effect.Effect<A | null> =>
  Effect.promise(async () => {
    try {
      const opened = await openChecked(setting, path, kinds, flags)
      if (opened === null) return null
      try {
        return await f(opened)
      } finally {
        await opened.handle.close().catch(() => {})
      }
    } catch {
      return null
    }
  })

/** For tests and the front end: would `path` be granted by these roots, lexically? */
export const lexicallyGranted = (roots: ReadonlyArray<ScopeRoot>, path: string, home: string): boolean => {
  if (!(path.startsWith("/") || path === "~" || path.startsWith("~/"))) return false
  return inAny(roots, expandPath(path, home))
}

/**
 * api.fs: read-only file access inside the manifest's fs.read scopes.
 *
 * Every call resolves the path (`~` expanded, `.`/`..` folded) and refuses it
 * unless it lies in a scope; then it follows links: the real path, and the
 * target of every link on the way below the scope root, must itself lie in a
 * scope. A refusal, a missing file or any I/O error answers null, never an
 * error; refusals are logged.
 *
 * The check is made on what was opened, not on a path walked again later: a
 * call opens the file, then asks where the open descriptor really lives (on
 * Linux its /proc/self/fd link; elsewhere the real path whose inode is the
 * descriptor's) and refuses it unless that lies in a scope. A folder swapped
 * for a link between the check and the read cannot hand out a file from
 * outside. Only regular files are read (a FIFO, socket or device is refused at
 * once, the open never blocks), and a file with other names (more than one
 * hard link) is refused: its other names may lie outside every scope and no
 * check can see them. `readEnds` checks a folder once, opens it, and reads its
 * files through the open folder (/proc/self/fd/N/name, an openat), so a swap
 * of the folder after its check changes nothing either.
 */
import { close as closeCallback, constants, existsSync, open as openCallback, type Stats } from "node:fs"
import { type FileHandle, lstat, open, readdir, readlink, realpath, stat } from "node:fs/promises"
import { Effect } from "effect"
import type { DirEntry, FileEnds, FileStat, FsShape } from "../../sdk/plugin-api.ts"
import { readEndsSync } from "./ends-reader.ts"
import { fileChunks } from "./file-chunks.ts"
import { covers, expandPath, type ScopeRoot, type ScopeSet } from "./scopes.ts"
import { endsBufferBytes, endsIn, listEndsBy, planEnds } from "../../sdk/file-ends.ts"

export interface FsBrokerOptions {
  readonly scopes: ScopeSet
  readonly home: string
  readonly data: string
  /** Told of every refusal (path asked, why). */
  readonly refuse: (path: string, reason: string) => void
  /** The most entries `listEnds` lists in one call (default LIST_ENDS_MAX_ENTRIES). */
  readonly listEndsMaxEntries?: number
}

/** A folder past this many entries is refused by `listEnds` (still served by `list` and `readEnds`). */
export const LIST_ENDS_MAX_ENTRIES = 100_000

type Access =
  | {
      readonly ok: true
      readonly real: string
      /** Every path below this one (a folder's files) lies in a scope too. */
      readonly below: boolean
    }
  | { readonly ok: false }

/** Linux names every open descriptor's file in /proc/self/fd. */
const FD_LINKS = existsSync("/proc/self/fd")
const fdPath = (fd: number) => `/proc/self/fd/${fd}`

/** How every call opens: never a controlling terminal, never blocking on a FIFO. */
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY

/** Fill `bytes` from `position`; the count read (fewer when the file ends first). */
const readInto = async (handle: FileHandle, bytes: Uint8Array, position: number): Promise<number> => {
  let done = 0
  while (done < bytes.length) {
    const { bytesRead } = await handle.read(bytes, done, bytes.length - done, position + done)
    if (bytesRead === 0) break
    done += bytesRead
  }
  return done
}

/** Head and tail of an open regular file into `buffer`: one read when they meet or overlap, else two. */
const readEndsInto = async (
  handle: FileHandle,
  s: Stats,
  buffer: Uint8Array,
  headBytes: number,
  tailBytes: number,
): Promise<FileEnds | null> => {
  const size = s.size
  const plan = planEnds(size, headBytes, tailBytes)
  const headRead = await readInto(handle, buffer.subarray(0, plan.whole ? size : plan.headLength), 0)
  const tailRead = plan.whole
    ? 0
    : await readInto(
        handle,
        buffer.subarray(plan.headLength, plan.headLength + plan.tailLength),
        size - plan.tailLength,
      )
  const ends = endsIn(buffer, plan, headRead, tailRead)
  return { head: ends.head, tail: ends.tail, size, mtimeMs: s.mtimeMs, birthtimeMs: s.birthtimeMs }
}

/** Files read between two turns of the host's event loop. */
const ENDS_CHUNK = 256

/** A file's folder and name from an absolute path (`~` expanded, normalized); null for anything else. */
const placeOf = (path: string, home: string): { readonly dir: string; readonly name: string } | null => {
  if (typeof path !== "string") return null
  // An absolute path with nothing to fold (the usual case: the plugin joins its paths) is already normal.
  const plain = path.startsWith("/") && !/\/\.{0,2}(\/|$)/.test(path)
  const normal = plain
    ? path
    : path === "~" || path.startsWith("~/") || path.startsWith("/")
      ? expandPath(path, home)
      : ""
  const slash = normal.lastIndexOf("/")
  if (slash <= 0 || slash === normal.length - 1) return null
  return { dir: normal.slice(0, slash), name: normal.slice(slash + 1) }
}

/** The next turn of the event loop (the global `setImmediate`: `node:timers/promises` loads on its first call). */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Files of one readEnds call checked one by one and open at once, each lane with its own buffer. */
const ENDS_CONCURRENCY = 16

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

/** A folder held open for one readEnds batch; its files are named through it. */
interface OpenFolder {
  /** The prefix to name a file of this folder by (`<at>/<name>`). */
  readonly at: string
  readonly close: () => void
}

/**
 * Open `real` (a checked folder) and make sure the open folder is `real`. On
 * Linux its files are then named through the descriptor (/proc/self/fd/N/…),
 * which the kernel resolves from the open folder, not from its path again.
 */
const openFolder = async (real: string): Promise<OpenFolder | null> => {
  if (!FD_LINKS) return { at: real, close: () => {} }
  const fd = await new Promise<number | null>((resolve) =>
    openCallback(real, OPEN_FLAGS | constants.O_DIRECTORY, (error, fd) => resolve(error ? null : fd)),
  )
  if (fd === null) return null
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    closeCallback(fd, () => {})
  }
  const link = await readlink(fdPath(fd)).catch(() => null)
  if (link !== real) {
    close()
    return null
  }
  return { at: fdPath(fd), close }
}

export const makeFsBroker = (options: FsBrokerOptions): FsShape => {
  const { scopes, home, refuse } = options

  /** Decide whether `path` may be read, and where it really is. */
  const authorize = async (
    path: string,
    report: (path: string, reason: string) => void = refuse,
  ): Promise<Access> => {
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

  /**
   * Open `path` once granted, then check where the opened descriptor really
   * lives: the answer the caller reads from, with no path walked again. A
   * file must be a regular file with one name, unless `kinds` allows others.
   */
  const openChecked = async (
    path: string,
    kinds: "file" | "any",
    flags = OPEN_FLAGS,
  ): Promise<{ readonly handle: FileHandle; readonly real: string; readonly stats: Stats } | null> => {
    const access = await authorize(path)
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
  const withOpen = <A>(
    path: string,
    kinds: "file" | "any",
    f: (opened: {
      readonly handle: FileHandle
      readonly real: string
      readonly stats: Stats
    }) => Promise<A | null>,
    flags?: number,
  ): Effect.Effect<A | null> =>
    Effect.promise(async () => {
      try {
        const opened = await openChecked(path, kinds, flags)
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

  const kindOf = (s: Stats): FileStat["kind"] =>
    s.isFile() ? "file" : s.isDirectory() ? "directory" : "other"

  /**
   * The turns of `readEnds`'s synchronous reads, one chunk after another
   * across every call: each chunk runs in an event-loop turn of its own, and
   * the next one two turns later. Calls side by side (a list reads its
   * folders at once) would otherwise find their checks done on the thread
   * pool together and read every folder in one run of callbacks, so the
   * loop would send nothing on before the last folder: the plugin process's
   * byte lane is uncorked in a `setImmediate` (plugin-process/parent.ts) and
   * drains only when the loop polls, and meanwhile the plugin would wait
   * for the first folder's ends. With a turn between chunks it summarizes
   * one folder while the host reads the next. Ends of no bytes (sizes and
   * times) fill no lane and take no turn.
   */
  let readTurns: Promise<void> = Promise.resolve()
  const readTurn = (): Promise<void> => {
    const mine = readTurns.then(nextTurn).then(nextTurn)
    readTurns = mine
    return mine
  }
  const fs: FsShape = {
    paths: { home, data: options.data },
    read: (path) => withOpen(path, "file", ({ handle }) => handle.readFile("utf8")),
    readRange: (path, start, end) =>
      withOpen(path, "file", async ({ handle, stats }) => {
        const from = Math.max(0, Math.min(Math.floor(start), stats.size))
        const to = Math.max(from, Math.min(Math.floor(end), stats.size))
        const bytes = new Uint8Array(to - from)
        const done = await readInto(handle, bytes, from)
        return done === bytes.length ? bytes : bytes.subarray(0, done)
      }),
    // The grant check once per folder: a file in a folder every path below
    // which lies in a scope is read through the open folder (an openat: a
    // later swap of the folder's path changes nothing), without following a
    // link, with synchronous calls, a chunk at a time. Any other path (a
    // link, a file with other names, a folder not granted as a whole, a
    // relative or odd path) takes the per-path check of every other call,
    // which also logs refusals.
    readEnds: (paths, headBytes, tailBytes, visit) =>
      Effect.promise(async () => {
        const places = paths.map((path) => placeOf(path, home))
        const folders = new Map<string, OpenFolder | null>()
        for (const place of places) if (place !== null) folders.set(place.dir, null)
        try {
          await Promise.all(
            [...folders.keys()].map(async (dir) => {
              const access = await authorize(dir, () => {})
              if (access.ok && access.below) folders.set(dir, await openFolder(access.real))
            }),
          )
          const buffer = new Uint8Array(endsBufferBytes(headBytes, tailBytes))
          const checkedOneByOne: number[] = []
          // A chunk in plain synchronous code, then a turn of the event loop.
          const readChunk = (from: number, to: number) => {
            for (let i = from; i < to; i++) {
              const place = places[i]
              const folder = place ? folders.get(place.dir) : null
              const ends = folder
                ? readEndsSync(`${folder.at}/${place?.name}`, buffer, headBytes, tailBytes)
                : "link"
              if (ends === "link") checkedOneByOne.push(i)
              else visit(i, ends)
            }
          }
          for (let from = 0; from < paths.length; from += ENDS_CHUNK) {
            if (headBytes + tailBytes > 0) await readTurn()
            else if (from > 0) await nextTurn()
            readChunk(from, Math.min(paths.length, from + ENDS_CHUNK))
          }
          let next = 0
          const lane = async (): Promise<void> => {
            const laneBuffer = new Uint8Array(endsBufferBytes(headBytes, tailBytes))
            for (let j = next++; j < checkedOneByOne.length; j = next++) {
              const i = checkedOneByOne[j] as number
              const ends = await Effect.runPromise(
                withOpen(paths[i] as string, "file", ({ handle, stats }) =>
                  readEndsInto(handle, stats, laneBuffer, headBytes, tailBytes),
                ),
              )
              visit(i, ends)
            }
          }
          await Promise.all(Array.from({ length: Math.min(ENDS_CONCURRENCY, checkedOneByOne.length) }, lane))
        } finally {
          for (const folder of folders.values()) folder?.close()
        }
      }),
    stream: (path, start = 0, options) =>
      Effect.promise(async () => {
        const opened = await openChecked(path, "file").catch(() => null)
        if (opened === null) return null
        const { handle } = opened
        // The checked descriptor itself is read (file-chunks.ts): the path is never opened again.
        const close = () => Effect.promise(() => handle.close().catch(() => {}))
        return fileChunks(handle.fd, start, close, options?.lend === true)
      }),
    stat: (path) =>
      withOpen(path, "any", async ({ stats }) => ({
        kind: kindOf(stats),
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        birthtimeMs: stats.birthtimeMs,
      })),
    list: (dir) =>
      withOpen(
        dir,
        "any",
        async ({ handle, real, stats }) => {
          if (!stats.isDirectory()) return null
          // The open folder itself is listed (through its descriptor where the system names it).
          const entries = await readdir(FD_LINKS ? fdPath(handle.fd) : real, { withFileTypes: true })
          return entries.map(
            (e): DirEntry => ({
              name: e.name,
              kind: e.isSymbolicLink()
                ? "link"
                : e.isFile()
                  ? "file"
                  : e.isDirectory()
                    ? "directory"
                    : "other",
            }),
          )
        },
        OPEN_FLAGS | constants.O_DIRECTORY,
      ),
    realpath: (path) => withOpen(path, "any", async ({ real }) => real),
  }
  // Made of the checked `list` and `readEnds`: it refuses exactly what they refuse, in one call for the plugin.
  const listEnds = listEndsBy(
    fs.list,
    fs.readEnds as NonNullable<FsShape["readEnds"]>,
    options.listEndsMaxEntries ?? LIST_ENDS_MAX_ENTRIES,
    refuse,
  )
  return { ...fs, listEnds }
}

/** For tests and the front end: would `path` be granted by these roots, lexically? */
export const lexicallyGranted = (roots: ReadonlyArray<ScopeRoot>, path: string, home: string): boolean => {
  if (!(path.startsWith("/") || path === "~" || path.startsWith("~/"))) return false
  return inAny(roots, expandPath(path, home))
}

/**
 * api.fs: read-only file access inside the manifest's fs.read scopes.
 *
 * Every call resolves the path (`~` expanded, `.`/`..` folded) and refuses it
 * unless it lies in a scope; then it follows links: the real path, and the
 * target of every link on the way below the scope root, must itself lie in a
 * scope. A refusal, a missing file or any I/O error answers null, never an
 * error; refusals are logged.
 */
import { constants, createReadStream, type Stats } from "node:fs"
import { type FileHandle, lstat, open, readdir, readFile, realpath, stat } from "node:fs/promises"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Stream } from "effect"
import type { DirEntry, FileEnds, FileStat, FsShape } from "../sdk/plugin-api.ts"
import { readEndsSync } from "./ends-reader.ts"
import { covers, expandPath, type ScopeRoot, type ScopeSet } from "./scopes.ts"
import { endsBufferBytes, endsIn, planEnds } from "../sdk/file-ends.ts"

export interface FsBrokerOptions {
  readonly scopes: ScopeSet
  readonly home: string
  readonly data: string
  /** Told of every refusal (path asked, why). */
  readonly refuse: (path: string, reason: string) => void
}

type Access =
  | {
      readonly ok: true
      readonly real: string
      /** Every path below this one (a folder's files) lies in a scope too. */
      readonly below: boolean
    }
  | { readonly ok: false }

const STREAM_CHUNK = 64 * 1024

/**
 * How `readEnds` opens the resolved path: a link put in place after the
 * check is not followed (ELOOP), and a FIFO does not block the open (its
 * fstat then answers "not a file").
 */
const END_READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

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
  buffer: Uint8Array,
  headBytes: number,
  tailBytes: number,
): Promise<FileEnds | null> => {
  const s = await handle.stat()
  if (!s.isFile()) return null
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

/** Files of one readEnds call checked one by one and open at once, each lane with its own buffer. */
const ENDS_CONCURRENCY = 16

const realOrNull = (path: string): Promise<string | null> => realpath(path).catch(() => null)

/** The scope roots plus where each really lives (a temp HOME under a linked /tmp, a linked ~/.claude). */
const withRealRoots = async (roots: ReadonlyArray<ScopeRoot>): Promise<ReadonlyArray<ScopeRoot>> => {
  const real = await Promise.all(
    roots.map(async (r) => {
      const target = await realOrNull(r.root)
      return target && target !== r.root ? { ...r, root: target } : null
    }),
  )
  return [...roots, ...real.filter((r): r is ScopeRoot => r !== null)]
}

const inAny = (roots: ReadonlyArray<ScopeRoot>, path: string) => roots.some((r) => covers(r, path))

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
    const below = (granted: ReadonlyArray<ScopeRoot>, at: string) =>
      granted.some((r) => r.subtree && covers(r, at))
    if (real === normal) return { ok: true, real, below: below(roots, normal) } // no link anywhere on the path
    const granted = await withRealRoots(roots)
    if (!inAny(granted, real)) {
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
      if (!inAny(granted, target)) {
        report(path, `the link ${prefix} leads to ${target}, outside every fs.read scope`)
        return { ok: false }
      }
    }
    return { ok: true, real, below: below(roots, normal) && below(granted, real) }
  }

  /** Run `f` on the real path when access is granted; null on refusal or any error. */
  const attempt = async <A>(path: string, f: (real: string) => Promise<A | null>): Promise<A | null> => {
    try {
      const access = await authorize(path)
      return access.ok ? await f(access.real) : null
    } catch {
      return null
    }
  }
  const guarded = <A>(path: string, f: (real: string) => Promise<A | null>): Effect.Effect<A | null> =>
    Effect.promise(() => attempt(path, f))

  const kindOf = (s: Stats): FileStat["kind"] =>
    s.isFile() ? "file" : s.isDirectory() ? "directory" : "other"

  return {
    paths: { home, data: options.data },
    read: (path) => guarded(path, (real) => readFile(real, "utf8")),
    readRange: (path, start, end) =>
      guarded(path, async (real) => {
        const handle = await open(real, "r")
        try {
          const size = (await handle.stat()).size
          const from = Math.max(0, Math.min(Math.floor(start), size))
          const to = Math.max(from, Math.min(Math.floor(end), size))
          const bytes = new Uint8Array(to - from)
          let done = 0
          while (done < bytes.length) {
            const { bytesRead } = await handle.read(bytes, done, bytes.length - done, from + done)
            if (bytesRead === 0) break
            done += bytesRead
          }
          return done === bytes.length ? bytes : bytes.subarray(0, done)
        } finally {
          await handle.close()
        }
      }),
    // The grant check once per folder: a file in a folder every path below
    // which lies in a scope is opened there without following a link, and
    // read with synchronous calls, a chunk at a time. Any other path (a link,
    // a folder not granted as a whole, a relative or odd path) takes the
    // per-path check of every other call, which also logs refusals.
    readEnds: (paths, headBytes, tailBytes, visit) =>
      Effect.promise(async () => {
        const places = paths.map((path) => placeOf(path, home))
        const folders = new Map<string, string | null>()
        for (const place of places) if (place !== null) folders.set(place.dir, null)
        await Promise.all(
          [...folders.keys()].map(async (dir) => {
            const access = await authorize(dir, () => {})
            if (access.ok && access.below) folders.set(dir, access.real)
          }),
        )
        const buffer = new Uint8Array(endsBufferBytes(headBytes, tailBytes))
        const checkedOneByOne: number[] = []
        // A chunk in plain synchronous code, then a turn of the event loop.
        const readChunk = (from: number, to: number) => {
          for (let i = from; i < to; i++) {
            const place = places[i]
            const real = place ? folders.get(place.dir) : null
            const ends = real ? readEndsSync(`${real}/${place?.name}`, buffer, headBytes, tailBytes) : "link"
            if (ends === "link") checkedOneByOne.push(i)
            else visit(i, ends)
          }
        }
        for (let from = 0; from < paths.length; from += ENDS_CHUNK) {
          if (from > 0) await new Promise((resolve) => setImmediate(resolve))
          readChunk(from, Math.min(paths.length, from + ENDS_CHUNK))
        }
        let next = 0
        const lane = async (): Promise<void> => {
          const laneBuffer = new Uint8Array(endsBufferBytes(headBytes, tailBytes))
          for (let j = next++; j < checkedOneByOne.length; j = next++) {
            const i = checkedOneByOne[j] as number
            const ends = await attempt(paths[i] as string, async (found) => {
              const handle = await open(found, END_READ_FLAGS)
              try {
                return await readEndsInto(handle, laneBuffer, headBytes, tailBytes)
              } finally {
                await handle.close()
              }
            })
            visit(i, ends)
          }
        }
        await Promise.all(Array.from({ length: Math.min(ENDS_CONCURRENCY, checkedOneByOne.length) }, lane))
      }),
    stream: (path, start = 0) =>
      guarded(path, async (real) => {
        if (!(await stat(real)).isFile()) return null
        return NodeStream.fromReadable<Uint8Array, unknown>({
          evaluate: () =>
            createReadStream(real, { start: Math.max(0, Math.floor(start)), highWaterMark: STREAM_CHUNK }),
          onError: (error) => error,
        }).pipe(
          // The file vanished or failed mid-read: the stream ends where it got to.
          Stream.catchCause(() => Stream.empty),
        )
      }),
    stat: (path) =>
      guarded(path, async (real) => {
        const s = await stat(real)
        return { kind: kindOf(s), size: s.size, mtimeMs: s.mtimeMs, birthtimeMs: s.birthtimeMs }
      }),
    list: (dir) =>
      guarded(dir, async (real) => {
        const entries = await readdir(real, { withFileTypes: true })
        return entries.map(
          (e): DirEntry => ({
            name: e.name,
            kind: e.isSymbolicLink() ? "link" : e.isFile() ? "file" : e.isDirectory() ? "directory" : "other",
          }),
        )
      }),
    realpath: (path) => guarded(path, async (real) => real),
  }
}

/** For tests and the front end: would `path` be granted by these roots, lexically? */
export const lexicallyGranted = (roots: ReadonlyArray<ScopeRoot>, path: string, home: string): boolean => {
  if (!(path.startsWith("/") || path === "~" || path.startsWith("~/"))) return false
  return inAny(roots, expandPath(path, home))
}

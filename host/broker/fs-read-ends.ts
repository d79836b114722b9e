/**
 * `readEnds`: the head and tail of many files in one call. A file in a folder
 * granted as a whole is read through the open folder with synchronous calls,
 * a chunk at a time; any other path takes the per-path check (fs-access.ts).
 */
import { close as closeCallback, constants, open as openCallback, type Stats } from "node:fs"
import { type FileHandle, readlink } from "node:fs/promises"
import { Effect } from "effect"
import type { FileEnds, FsShape } from "../../sdk/plugin-api.ts"
import { endsBufferBytes, endsIn, planEnds } from "../../sdk/file-ends.ts"
import { readEndsSync } from "./ends-reader.ts"
import { type AccessSetting, authorize, FD_LINKS, fdPath, OPEN_FLAGS, withOpen } from "./fs-access.ts"
import { expandPath } from "./scopes.ts"

/** Fill `bytes` from `position`; the count read (fewer when the file ends first). */
export const readInto = async (handle: FileHandle, bytes: Uint8Array, position: number): Promise<number> => {
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

/**
 * `readEnds` for one broker. Its synchronous reads take one chunk at a time
 * across every call, two event-loop turns apart: the plugin process's byte
 * lane drains only when the loop polls (plugin-process/parent.ts), so calls
 * side by side would otherwise send nothing until the last folder is read.
 * Ends of no bytes (sizes and times) fill no lane and take no turn.
 */
export const makeReadEnds = (setting: AccessSetting): NonNullable<FsShape["readEnds"]> => {
  const { home } = setting
  let readTurns: Promise<void> = Promise.resolve()
  const readTurn = (): Promise<void> => {
    const mine = readTurns.then(nextTurn).then(nextTurn)
    readTurns = mine
    return mine
  }
  // Through the open folder (an openat), a later swap of the folder's path changes nothing; any
  // other path (a link, a file with other names, a folder not granted whole) takes the per-path check.
  return (paths, headBytes, tailBytes, visit) =>
    Effect.promise(async () => {
      const places = paths.map((path) => placeOf(path, home))
      const folders = new Map<string, OpenFolder | null>()
      for (const place of places) if (place !== null) folders.set(place.dir, null)
      try {
        await Promise.all(
          [...folders.keys()].map(async (dir) => {
            const access = await authorize(setting, dir, () => {})
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
              withOpen(setting, paths[i] as string, "file", ({ handle, stats }) =>
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
    })
}

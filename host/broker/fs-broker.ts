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
import { constants, type Stats } from "node:fs"
import { readdir } from "node:fs/promises"
import { Effect } from "effect"
import type { DirEntry, FileStat, FsShape } from "../../sdk/plugin-api.ts"
import { listEndsBy } from "../../sdk/file-ends.ts"
import { type AccessSetting, FD_LINKS, fdPath, OPEN_FLAGS, openChecked, withOpen } from "./fs-access.ts"
import { fileChunks } from "./file-chunks.ts"
import { makeReadEnds, readInto } from "./fs-read-ends.ts"

export { lexicallyGranted } from "./fs-access.ts"

export interface FsBrokerOptions extends AccessSetting {
  readonly data: string
  /** The most entries `listEnds` lists in one call (default LIST_ENDS_MAX_ENTRIES). */
  readonly listEndsMaxEntries?: number
}

/** A folder past this many entries is refused by `listEnds` (still served by `list` and `readEnds`). */
export const LIST_ENDS_MAX_ENTRIES = 100_000

const kindOf = (s: Stats): FileStat["kind"] => (s.isFile() ? "file" : s.isDirectory() ? "directory" : "other")

export const makeFsBroker = (options: FsBrokerOptions): FsShape => {
  const { home, refuse } = options
  const readEnds = makeReadEnds(options)
  const fs: FsShape = {
    paths: { home, data: options.data },
    read: (path) => withOpen(options, path, "file", ({ handle }) => handle.readFile("utf8")),
    readRange: (path, start, end) =>
      withOpen(options, path, "file", async ({ handle, stats }) => {
        const from = Math.max(0, Math.min(Math.floor(start), stats.size))
        const to = Math.max(from, Math.min(Math.floor(end), stats.size))
        const bytes = new Uint8Array(to - from)
        const done = await readInto(handle, bytes, from)
        return done === bytes.length ? bytes : bytes.subarray(0, done)
      }),
    // Checked once per folder, not once per file (fs-read-ends.ts).
    readEnds,
    stream: (path, start = 0, streamOptions) =>
      Effect.promise(async () => {
        const opened = await openChecked(options, path, "file").catch(() => null)
        if (opened === null) return null
        const { handle } = opened
        // The checked descriptor itself is read (file-chunks.ts): the path is never opened again.
        const close = () => Effect.promise(() => handle.close().catch(() => {}))
        return fileChunks(handle.fd, start, close, streamOptions?.lend === true)
      }),
    stat: (path) =>
      withOpen(options, path, "any", async ({ stats }) => ({
        kind: kindOf(stats),
        size: stats.size,
        mtimeMs: stats.mtimeMs,
        birthtimeMs: stats.birthtimeMs,
      })),
    list: (dir) =>
      withOpen(
        options,
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
    realpath: (path) => withOpen(options, path, "any", async ({ real }) => real),
  }
  // Made of the checked `list` and `readEnds`: it refuses exactly what they refuse, in one call for the plugin.
  const listEnds = listEndsBy(fs.list, readEnds, options.listEndsMaxEntries ?? LIST_ENDS_MAX_ENTRIES, refuse)
  return { ...fs, listEnds }
}

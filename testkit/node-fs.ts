/**
 * A lean Node-backed `Fs` service for tests and benchmarks over real
 * folders: plain file-system calls with no grant checks (they read their own
 * fixtures and corpora). Small reads use the synchronous calls, which skip a
 * thread-pool round trip; whole files stream as the host's broker streams
 * them (host/broker/file-chunks.ts), so what the plugin gets is the same.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  statSync,
} from "node:fs"
import { homedir, tmpdir } from "node:os"
import { Effect, Layer } from "effect"
import { type DirEntry, type FileEnds, Fs, type FsShape } from "../sdk/plugin-api.ts"
import { readEndsSync } from "../host/broker/ends-reader.ts"
import { fileChunks } from "../host/broker/file-chunks.ts"
import { endsBufferBytes } from "../sdk/file-ends.ts"

const orNull = <A>(f: () => A): A | null => {
  try {
    return f()
  } catch {
    return null
  }
}

/** One file's ends into `buffer` with the host's synchronous reader, a link followed (no grants here). */
const readEndsInto = (
  path: string,
  buffer: Uint8Array,
  headBytes: number,
  tailBytes: number,
): FileEnds | null => {
  const ends = readEndsSync(path, buffer, headBytes, tailBytes)
  if (ends !== "link") return ends
  const real = orNull(() => realpathSync(path))
  const followed = real === null ? null : readEndsSync(real, buffer, headBytes, tailBytes)
  return followed === "link" ? null : followed
}

/** Every file's ends go through this one buffer, lent to the visitor (see FsShape.readEnds). */
let endsBuffer = new Uint8Array(0)

export const nodeFs: FsShape = {
  paths: { home: homedir(), data: tmpdir() },
  read: (path) => Effect.sync(() => orNull(() => readFileSync(path, "utf8"))),
  readRange: (path, start, end) =>
    Effect.sync(() =>
      orNull(() => {
        const fd = openSync(path, "r")
        try {
          // No fstat: a read past the end simply returns fewer bytes.
          const from = Math.max(0, Math.floor(start))
          const bytes = new Uint8Array(Math.max(0, Math.floor(end) - from))
          let done = 0
          while (done < bytes.length) {
            const n = readSync(fd, bytes, done, bytes.length - done, from + done)
            if (n === 0) break
            done += n
          }
          return done === bytes.length ? bytes : bytes.subarray(0, done)
        } finally {
          closeSync(fd)
        }
      }),
    ),
  readEnds: (paths, headBytes, tailBytes, visit) =>
    Effect.sync(() => {
      const need = endsBufferBytes(headBytes, tailBytes)
      if (endsBuffer.length < need) endsBuffer = new Uint8Array(need)
      for (let i = 0; i < paths.length; i++) {
        let ends: FileEnds | null = null
        try {
          ends = readEndsInto(paths[i] as string, endsBuffer, headBytes, tailBytes)
        } catch {}
        visit(i, ends)
      }
    }),
  stream: (path, start = 0, options) =>
    Effect.sync(() => {
      // Non-blocking: a FIFO is refused, never waited on.
      const fd = orNull(() => openSync(path, constants.O_RDONLY | constants.O_NONBLOCK))
      if (fd === null) return null
      if (!orNull(() => fstatSync(fd).isFile())) {
        closeSync(fd)
        return null
      }
      const close = () => Effect.sync(() => orNull(() => closeSync(fd)))
      return fileChunks(fd, start, close, options?.lend === true)
    }),
  stat: (path) =>
    Effect.sync(() =>
      orNull(() => {
        const s = statSync(path)
        return {
          kind: s.isFile()
            ? ("file" as const)
            : s.isDirectory()
              ? ("directory" as const)
              : ("other" as const),
          size: s.size,
          mtimeMs: s.mtimeMs,
          birthtimeMs: s.birthtimeMs,
        }
      }),
    ),
  list: (dir) =>
    Effect.sync(() =>
      orNull(() =>
        readdirSync(dir, { withFileTypes: true }).map(
          (e): DirEntry => ({
            name: e.name,
            kind: e.isSymbolicLink() ? "link" : e.isFile() ? "file" : e.isDirectory() ? "directory" : "other",
          }),
        ),
      ),
    ),
  realpath: (path) => Effect.sync(() => orNull(() => realpathSync(path))),
}

export const NodeFsLayer = Layer.succeed(Fs, nodeFs)

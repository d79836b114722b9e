/**
 * A lean Node-backed `Fs` service for benchmarks and ad-hoc runs over real
 * folders: plain file-system calls with no grant checks (the benchmark reads
 * its own corpus). Small reads (stat, ranges, lists) use the synchronous
 * calls, which cost a few microseconds each instead of a thread-pool round
 * trip; whole files stream as the host's broker streams them (host/broker/file-chunks.ts).
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
      // Read as the host's broker reads (host/broker/file-chunks.ts): the benchmark measures what the plugin gets.
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

/**
 * The file-system calls of a cold list and nothing else: list the project
 * folders, then per `<id>.jsonl` open, fstat, read both ends into one
 * buffer, close. No decoding, no parsing, no Effect. Returns the files read.
 * `onEnds`, when given, is handed each file's two ends and its size (the
 * floor's pieces: bench/scale-worker.ts).
 */
export const rawEndsFloor = (
  configDir: string,
  headBytes: number,
  tailBytes: number,
  onEnds?: (head: Uint8Array, tail: Uint8Array, size: number) => void,
): number => {
  const root = `${configDir}/projects`
  const buffer = new Uint8Array(headBytes + tailBytes)
  let files = 0
  for (const folder of readdirSync(root, { withFileTypes: true })) {
    if (!folder.isDirectory()) continue
    const dir = `${root}/${folder.name}`
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.name.endsWith(".jsonl") || entry.isDirectory()) continue
      const fd = openSync(`${dir}/${entry.name}`, constants.O_RDONLY | constants.O_NONBLOCK)
      try {
        const size = fstatSync(fd).size
        const head = readSync(fd, buffer, 0, Math.min(headBytes, size), 0)
        const tail =
          size > headBytes
            ? readSync(fd, buffer, headBytes, Math.min(tailBytes, size), Math.max(0, size - tailBytes))
            : 0
        onEnds?.(buffer.subarray(0, head), buffer.subarray(headBytes, headBytes + tail), size)
      } finally {
        closeSync(fd)
      }
      files++
    }
  }
  return files
}

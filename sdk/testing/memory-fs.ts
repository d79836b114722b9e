/**
 * The in-memory broker's file system: files and links in maps, folders
 * implied by the paths, links followed by every call as the host follows them.
 */
import { Effect, Stream } from "effect"
import type { DirEntry, FsShape } from "../plugin-api.ts"
import { dirname, isWithin, normalize } from "../paths.ts"

const STREAM_CHUNK = 64 * 1024

/**
 * A stream lent as a lending host lends it (`StreamOptions.lend`, a spawn's
 * `stdout.lend`): one chunk a pull, each in the same buffer, overwritten by
 * the next pull and cleared at the end, so a reader that keeps a view of a
 * chunk past its pull reads the wrong bytes in every test.
 */
export const lent = (source: Stream.Stream<Uint8Array>): Stream.Stream<Uint8Array> =>
  Stream.suspend(() => {
    let buffer = new Uint8Array(STREAM_CHUNK)
    return source.pipe(
      Stream.rechunk(1),
      Stream.mapArray(([chunk]) => {
        if (chunk.length > buffer.length) buffer = new Uint8Array(chunk.length)
        buffer.fill(0)
        buffer.set(chunk)
        return [buffer.subarray(0, chunk.length)] as const
      }),
      Stream.onEnd(Effect.sync(() => buffer.fill(0))),
    )
  })

/** `files` and `links` by normalized path (the caller's maps, read at every call). */
export const makeMemoryFs = (
  files: Map<string, string>,
  links: Map<string, string>,
  paths: { readonly home: string; readonly data: string },
): FsShape => {
  const resolve = (path: string): string => {
    let current = normalize(path)
    for (let hops = 0; hops < 16; hops++) {
      let changed = false
      for (const [link, target] of links) {
        if (isWithin(current, link)) {
          current = normalize(target + current.slice(link.length))
          changed = true
          break
        }
      }
      if (!changed) return current
    }
    return current
  }
  const isDir = (path: string) => {
    const p = resolve(path)
    for (const file of files.keys()) if (file !== p && isWithin(file, p)) return true
    return false
  }
  const encoder = new TextEncoder()

  return {
    paths,
    read: (path) => Effect.sync(() => files.get(resolve(path)) ?? null),
    readRange: (path, start, end) =>
      Effect.sync(() => {
        const text = files.get(resolve(path))
        return text === undefined ? null : encoder.encode(text).slice(start, end)
      }),
    stream: (path, start = 0, streamOptions) =>
      Effect.sync(() => {
        const text = files.get(resolve(path))
        if (text === undefined) return null
        const bytes = encoder.encode(text).slice(start)
        const chunks: Uint8Array[] = []
        for (let at = 0; at < bytes.length; at += STREAM_CHUNK)
          chunks.push(bytes.slice(at, at + STREAM_CHUNK))
        return streamOptions?.lend === true ? lent(Stream.fromIterable(chunks)) : Stream.fromIterable(chunks)
      }),
    stat: (path) =>
      Effect.sync(() => {
        const p = resolve(path)
        const text = files.get(p)
        if (text !== undefined)
          return { kind: "file" as const, size: encoder.encode(text).length, mtimeMs: 0, birthtimeMs: 0 }
        return isDir(p) ? { kind: "directory" as const, size: 0, mtimeMs: 0, birthtimeMs: 0 } : null
      }),
    readEnds: (paths, headBytes, tailBytes, visit) =>
      Effect.sync(() => {
        paths.forEach((path, i) => {
          const text = files.get(resolve(path))
          if (text === undefined) {
            visit(i, null)
            return
          }
          const bytes = encoder.encode(text)
          const size = bytes.length
          visit(i, {
            head: bytes.subarray(0, Math.max(0, Math.min(headBytes, size))),
            tail: bytes.subarray(Math.max(0, size - Math.max(0, tailBytes))),
            size,
            mtimeMs: 0,
            birthtimeMs: 0,
          })
        })
      }),
    list: (dir) =>
      Effect.sync(() => {
        const p = resolve(dir)
        if (!isDir(p)) return null
        const entries = new Map<string, DirEntry["kind"]>()
        for (const file of files.keys()) {
          if (!isWithin(file, p) || file === p) continue
          const rest = file.slice(p === "/" ? 1 : p.length + 1)
          const [first, ...more] = rest.split("/")
          if (first) entries.set(first, more.length > 0 ? "directory" : "file")
        }
        for (const link of links.keys())
          if (dirname(link) === p) entries.set(link.slice(p.length + 1), "link")
        return [...entries].map(([name, kind]) => ({ name, kind }))
      }),
    realpath: (path) =>
      Effect.sync(() => {
        const p = resolve(path)
        return files.has(p) || isDir(p) ? p : null
      }),
  }
}

/**
 * One file's two ends read with synchronous calls, for `Fs.readEnds`
 * batches: a listing reads a thousand files, and five small synchronous
 * calls per file cost a fraction of five thread-pool round trips. The broker
 * reads a batch in chunks and lets its event loop run between them.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from "node:fs"
import { endsIn, planEnds } from "../../sdk/file-ends.ts"
import type { FileEnds } from "../../sdk/plugin-api.ts"

/**
 * How the file is opened: a link is not followed (ELOOP: the caller checks
 * where it leads first), and a FIFO does not block the open (its fstat then
 * answers "not a file").
 */
const FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK

/** Read `length` bytes from `position` into `buffer` at `offset`; the count read (fewer when the file ends first). */
const readInto = (
  fd: number,
  buffer: Uint8Array,
  offset: number,
  length: number,
  position: number,
): number => {
  let done = 0
  while (done < length) {
    const n = readSync(fd, buffer, offset + done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/**
 * `path`'s ends in `buffer` (at least endsBufferBytes long; the views point
 * into it), null when it is missing or no regular file, "link" when the last
 * component is a link or the file has other names (hard links): the caller's
 * full check decides those.
 */
export const readEndsSync = (
  path: string,
  buffer: Uint8Array,
  headBytes: number,
  tailBytes: number,
): FileEnds | null | "link" => {
  if (headBytes <= 0 && tailBytes <= 0) return statOnly(path, buffer)
  let fd: number
  try {
    fd = openSync(path, FLAGS)
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ELOOP" ? "link" : null
  }
  try {
    const s = fstatSync(fd)
    if (!s.isFile()) return null
    if (s.nlink > 1) return "link"
    const size = s.size
    const plan = planEnds(size, headBytes, tailBytes)
    const head = readInto(fd, buffer, 0, plan.whole ? size : plan.headLength, 0)
    const tail = plan.whole
      ? 0
      : readInto(fd, buffer, plan.headLength, plan.tailLength, size - plan.tailLength)
    const ends = endsIn(buffer, plan, head, tail)
    return { head: ends.head, tail: ends.tail, size, mtimeMs: s.mtimeMs, birthtimeMs: s.birthtimeMs }
  } catch {
    return null
  } finally {
    closeSync(fd)
  }
}

/** No bytes asked for: the size and times from one lstat, no open. */
const statOnly = (path: string, buffer: Uint8Array): FileEnds | null | "link" => {
  let s: ReturnType<typeof lstatSync>
  try {
    s = lstatSync(path, { throwIfNoEntry: false })
  } catch {
    return null
  }
  if (s === undefined) return null
  if (s.isSymbolicLink() || (s.isFile() && s.nlink > 1)) return "link"
  if (!s.isFile()) return null
  const none = buffer.subarray(0, 0)
  return { head: none, tail: none, size: s.size, mtimeMs: s.mtimeMs, birthtimeMs: s.birthtimeMs }
}

/**
 * The arithmetic of `Fs.readEnds` for hosts that implement it: how much of
 * each end to read, and whether one read of the whole file serves both;
 * and `Fs.listEnds` made of `list` and `readEnds` (the host's broker, and a
 * plugin on a host without it).
 */
import { Effect } from "effect"
import type { DirEntry, FsShape } from "./plugin-api.ts"

export interface EndsPlan {
  readonly headLength: number
  readonly tailLength: number
  /** The ends meet or overlap: read the whole file once and cut both from it. */
  readonly whole: boolean
}

export const planEnds = (size: number, headBytes: number, tailBytes: number): EndsPlan => {
  const headLength = Math.max(0, Math.min(Math.floor(headBytes), size))
  const tailLength = Math.max(0, Math.min(Math.floor(tailBytes), size))
  return { headLength, tailLength, whole: headLength + tailLength >= size }
}

/** Both ends cut from the whole file's bytes (which may be shorter than its size said). */
export const endsOfWhole = (
  whole: Uint8Array,
  plan: EndsPlan,
): { readonly head: Uint8Array; readonly tail: Uint8Array } => ({
  head: whole.subarray(0, Math.min(plan.headLength, whole.length)),
  tail: whole.subarray(Math.max(0, whole.length - plan.tailLength)),
})

/**
 * How many bytes a buffer needs to hold one file's ends: its head then its
 * tail, or the whole file when the ends meet (the file is then no larger).
 * A host reads every file of a `readEnds` call into one such buffer, reused:
 * bytes it has just written are already mapped, fresh memory is not.
 */
export const endsBufferBytes = (headBytes: number, tailBytes: number): number =>
  Math.max(0, Math.floor(headBytes)) + Math.max(0, Math.floor(tailBytes))

/**
 * Where the reads of one file go in the buffer, and the ends once read:
 * `whole` → read the file into `buffer[0, size)`; otherwise the head into
 * `buffer[0, headLength)` and the tail into `buffer[headLength, headLength + tailLength)`.
 * `headRead`/`tailRead` are the bytes the reads gave (the file may have shrunk).
 */
export const endsIn = (
  buffer: Uint8Array,
  plan: EndsPlan,
  headRead: number,
  tailRead = 0,
): { readonly head: Uint8Array; readonly tail: Uint8Array } =>
  plan.whole
    ? endsOfWhole(buffer.subarray(0, headRead), plan)
    : {
        head: buffer.subarray(0, headRead),
        tail: buffer.subarray(plan.headLength, plan.headLength + tailRead),
      }

/**
 * The indexes of the entries `listEnds` visits: files (or links) whose name
 * ends with `suffix` and, when given, is `nameLength` long.
 */
export const matchingEntries = (
  entries: ReadonlyArray<DirEntry>,
  suffix: string,
  nameLength: number | undefined,
): number[] => {
  const indexes: number[] = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as DirEntry
    if (
      (e.kind === "file" || e.kind === "link") &&
      e.name.endsWith(suffix) &&
      (nameLength === undefined || e.name.length === nameLength)
    )
      indexes.push(i)
  }
  return indexes
}

/** A file of folder `dir` by name, as `listEnds` reads it. */
export const inFolder = (dir: string, name: string): string =>
  `${dir.endsWith("/") ? dir.slice(0, -1) : dir}/${name}`

/**
 * `listEnds` made of `list` then one `readEnds` of the matching files, so
 * it refuses exactly what those refuse. `maxEntries`: a larger folder is
 * refused (`refuse` told why), null.
 */
export const listEndsBy =
  (
    list: FsShape["list"],
    readEnds: NonNullable<FsShape["readEnds"]>,
    maxEntries = Number.POSITIVE_INFINITY,
    refuse: (path: string, reason: string) => void = () => {},
  ): NonNullable<FsShape["listEnds"]> =>
  (dir, { suffix, nameLength, headBytes, tailBytes, maxEnds }, visit) =>
    Effect.gen(function* () {
      const entries = yield* list(dir)
      if (entries === null) return null
      if (entries.length > maxEntries) {
        refuse(dir, `holds ${entries.length} entries, more than the ${maxEntries} listEnds lists at once`)
        return null
      }
      const indexes = matchingEntries(entries, suffix, nameLength)
      const withEnds = indexes.length <= maxEnds
      visit.entries(entries, withEnds)
      if (indexes.length > 0)
        yield* readEnds(
          indexes.map((i) => inFolder(dir, (entries[i] as DirEntry).name)),
          withEnds ? headBytes : 0,
          withEnds ? tailBytes : 0,
          (j, ends) => visit.file(indexes[j] as number, ends),
        )
      return { withEnds }
    })

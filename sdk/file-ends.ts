/**
 * The arithmetic of `Fs.readEnds` for hosts that implement it: how much of
 * each end to read, and whether one read of the whole file serves both.
 */

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

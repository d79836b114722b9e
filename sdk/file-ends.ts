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

/**
 * The return lane: the plugin process's channel batches to the host on a
 * raw pipe of their own (the child's fd 5), instead of one IPC message each.
 * A frame is a 4-byte length (u32, big-endian) and that many bytes of one
 * batch serialized by V8's serializer (child.ts writes, parent.ts reads).
 *
 * Rules it keeps:
 * - One direction only, plugin to host, and one writer: batches cross in
 *   the order the plugin sent them, so events keep their order with the
 *   answers around them.
 * - The reader joins a frame's pieces once, when the frame is whole (a
 *   frame within one read is a view of it, not a copy): a large answer
 *   costs one copy on the host, however many reads carried it.
 * - A frame longer than `maxFrameBytes` is not kept: its bytes are counted
 *   and dropped as they come, so the lane stays in step and memory holds
 *   no more than the cap; `oversized` hears it once.
 */

/** The lane's file descriptor in the plugin process (after the byte lane, lane.ts). */
export const RETURN_FD = 5

export const LENGTH_BYTES = 4

/** The largest frame the host keeps: far above any batch the plugin has a reason to send. */
export const MAX_FRAME_BYTES = 512 * 1024 * 1024

/** The length prefix of a frame of `length` bytes. */
export const frameLength = (length: number): Uint8Array => {
  const prefix = new Uint8Array(LENGTH_BYTES)
  new DataView(prefix.buffer).setUint32(0, length)
  return prefix
}

export interface ReturnReaderOptions {
  /** One whole frame's bytes (a view of a read, or one joined copy). */
  readonly frame: (bytes: Uint8Array) => void
  /** A frame over the cap was dropped. */
  readonly oversized: (length: number) => void
  readonly maxFrameBytes?: number
}

/** A parser of the return lane's bytes as they are read: `push` each read. */
export const makeReturnReader = (options: ReturnReaderOptions) => {
  const max = options.maxFrameBytes ?? MAX_FRAME_BYTES
  const prefix = new Uint8Array(LENGTH_BYTES)
  const prefixView = new DataView(prefix.buffer)
  let prefixHave = 0
  /** Bytes of the current frame still to come; -1 between frames. */
  let left = -1
  let skipping = false
  let pieces: Uint8Array[] = []
  let length = 0

  const complete = () => {
    const parts = pieces
    pieces = []
    left = -1
    if (skipping) {
      skipping = false
      return
    }
    if (parts.length === 1) return options.frame(parts[0] as Uint8Array)
    const whole = new Uint8Array(length)
    let at = 0
    for (const part of parts) {
      whole.set(part, at)
      at += part.byteLength
    }
    options.frame(whole)
  }

  return {
    push: (bytes: Uint8Array): void => {
      let at = 0
      while (at < bytes.byteLength) {
        if (left === -1) {
          const take = Math.min(LENGTH_BYTES - prefixHave, bytes.byteLength - at)
          prefix.set(bytes.subarray(at, at + take), prefixHave)
          prefixHave += take
          at += take
          if (prefixHave < LENGTH_BYTES) return
          prefixHave = 0
          length = prefixView.getUint32(0)
          left = length
          if (length > max) {
            skipping = true
            options.oversized(length)
          }
          if (left === 0) complete()
          continue
        }
        const take = Math.min(left, bytes.byteLength - at)
        if (!skipping) pieces.push(bytes.subarray(at, at + take))
        left -= take
        at += take
        if (left === 0) complete()
      }
    },
  }
}

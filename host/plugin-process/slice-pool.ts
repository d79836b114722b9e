/**
 * The buffers `readEnds` slices are written into on their way to a plugin
 * process (serve-broker.ts), and a file's chunks copied into, and how far
 * the host reads ahead of the byte lane: one pool per plugin process.
 *
 * Why: a fresh buffer a slice is fresh memory (zero-filled and faulted in
 * page by page), and a cold list reads every project folder at once, long
 * before the plugin process can take them. So the host reads a slice only
 * while less than AHEAD_BYTES it has read are still unwritten, into a
 * buffer the lane has finished with.
 *
 * Rules it keeps:
 * - A slice reserves its bytes with `room` before it is read, and they stay
 *   out until `give` (the lane calls it once they are written, or the lane
 *   is gone: a buffer is never reused while its bytes may still be read) or
 *   `settle` (no buffer kept: a port that may still hold it, or no slice
 *   read after all). Slices waiting for room get it in turn; one is always
 *   let through when nothing is out, however large.
 * - Only the written part of a buffer is ever sent (the records overwrite
 *   every byte they cover), so what an earlier slice left in it never
 *   crosses; one pool serves one plugin process.
 * - It keeps at most `keepBytes` of free buffers; a larger one, or one past
 *   that, is left to the collector.
 * - A wait for room ends, with nothing reserved, when its stream's signal
 *   aborts (a stream the plugin closed stops at once).
 */
export interface SlicePool {
  /** Reserve `bytes` once they fit within the read-ahead: true, or false when `signal` aborted first (nothing reserved). */
  readonly room: (bytes: number, signal: AbortSignal) => Promise<boolean>
  /** A buffer of at least `bytes`: a free one that fits, else a new one. */
  readonly take: (bytes: number) => Uint8Array
  /** `buffer`'s bytes are written: it is free again, and the `bytes` its slice reserved are back. */
  readonly give: (buffer: Uint8Array, bytes: number) => void
  /** The `bytes` a slice reserved are back; no buffer kept. */
  readonly settle: (bytes: number) => void
  /** Bytes reserved and bytes held in free buffers (tests). */
  readonly stats: () => { readonly out: number; readonly free: number }
}

/** How much the host reads ahead of the lane: a few slices of a list's ends. */
export const AHEAD_BYTES = 1024 * 1024
/** What a pool keeps free: the buffers AHEAD_BYTES spans, and more. */
export const KEEP_BYTES = 2 * 1024 * 1024

interface Waiter {
  readonly bytes: number
  readonly done: (reserved: boolean) => void
}

export const makeSlicePool = (aheadBytes = AHEAD_BYTES, keepBytes = KEEP_BYTES): SlicePool => {
  const free: Uint8Array[] = []
  let held = 0
  let out = 0
  const waiting: Waiter[] = []
  const fits = (bytes: number) => out === 0 || out + bytes <= aheadBytes
  /** Let the waiters through in turn while the first fits. */
  const wake = () => {
    while (waiting.length > 0 && fits((waiting[0] as Waiter).bytes)) {
      const next = waiting.shift() as Waiter
      out += next.bytes
      next.done(true)
    }
  }
  const returned = (bytes: number) => {
    out -= bytes
    wake()
  }
  return {
    room: (bytes, signal) => {
      if (signal.aborted) return Promise.resolve(false)
      if (waiting.length === 0 && fits(bytes)) {
        out += bytes
        return Promise.resolve(true)
      }
      return new Promise<boolean>((resolve) => {
        const onAbort = () => {
          const at = waiting.indexOf(waiter)
          if (at >= 0) waiting.splice(at, 1)
          resolve(false)
          wake()
        }
        const waiter: Waiter = {
          bytes,
          done: (reserved) => {
            signal.removeEventListener("abort", onAbort)
            resolve(reserved)
          },
        }
        waiting.push(waiter)
        signal.addEventListener("abort", onAbort, { once: true })
      })
    },
    take: (bytes) => {
      // The smallest that fits: a large buffer stays for a large slice.
      let best = -1
      for (let i = 0; i < free.length; i++) {
        const length = (free[i] as Uint8Array).byteLength
        if (length >= bytes && (best < 0 || length < (free[best] as Uint8Array).byteLength)) best = i
      }
      if (best < 0) return new Uint8Array(bytes)
      const buffer = free.splice(best, 1)[0] as Uint8Array
      held -= buffer.byteLength
      return buffer
    },
    give: (buffer, bytes) => {
      if (held + buffer.byteLength <= keepBytes) {
        free.push(buffer)
        held += buffer.byteLength
      }
      returned(bytes)
    },
    settle: returned,
    stats: () => ({ out, free: held }),
  }
}

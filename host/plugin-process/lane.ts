/**
 * The byte lane between a host and its plugin process: a raw pipe (the
 * child's fd 4) that carries the bytes of the host's byte streams (a CLI's
 * stdout and stderr, `fs.stream`) to the plugin, beside the IPC channel,
 * with no serializer. A frame is an 8-byte header, the stream id and the
 * length (both u32, big-endian), then that many bytes.
 *
 * Rules it keeps:
 * - One direction only, host to plugin; the child reads fd 4 with `fs.read`
 *   (a blocking read on the thread pool), so no socket object, which plugin
 *   code could reach through a patched prototype, ever exists in the child.
 * - The reader hands out views of its read buffer (no copy): a frame split
 *   across reads arrives as several pieces, in order; a header split across
 *   reads is put together first.
 * - No flow control here: the channel's credit (sdk/channel.ts) bounds what
 *   each stream may have in flight, the lane only carries it.
 */

/** The lane's file descriptor in the plugin process (after stdin, stdout, stderr and the IPC channel). */
export const LANE_FD = 4

export const HEADER_BYTES = 8

/** The header of one frame: stream id and payload length. */
export const frameHeader = (sid: number, length: number): Uint8Array => {
  const header = new Uint8Array(HEADER_BYTES)
  const view = new DataView(header.buffer)
  view.setUint32(0, sid)
  view.setUint32(4, length)
  return header
}

/**
 * A parser of the lane's bytes as they are read: `push` each read, `deliver`
 * hears every piece of every frame's payload (never empty), as a view of the
 * pushed bytes.
 */
export const makeLaneReader = (deliver: (sid: number, piece: Uint8Array) => void) => {
  const header = new Uint8Array(HEADER_BYTES)
  const headerView = new DataView(header.buffer)
  let headerHave = 0
  let sid = 0
  let left = 0
  return {
    push: (bytes: Uint8Array): void => {
      let at = 0
      while (at < bytes.byteLength) {
        if (left === 0) {
          const take = Math.min(HEADER_BYTES - headerHave, bytes.byteLength - at)
          header.set(bytes.subarray(at, at + take), headerHave)
          headerHave += take
          at += take
          if (headerHave < HEADER_BYTES) return
          headerHave = 0
          sid = headerView.getUint32(0)
          left = headerView.getUint32(4)
          continue
        }
        const take = Math.min(left, bytes.byteLength - at)
        deliver(sid, bytes.subarray(at, at + take))
        left -= take
        at += take
      }
    },
  }
}

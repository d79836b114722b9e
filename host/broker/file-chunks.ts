/**
 * A file's bytes as a stream of chunks, read synchronously from an open
 * descriptor: what the broker's `fs.stream` gives (fs-broker.ts), and the
 * tests' and benchmarks' own `Fs` too (testkit/node-fs.ts), so both read alike.
 *
 * Rules it keeps:
 * - every chunk is a fresh buffer the consumer owns (a chunk may be held or
 *   handed on), unless the consumer asked for chunks lent (`StreamOptions.lend`:
 *   the plugin process's serving side does, and copies each chunk into the
 *   buffers it lends the byte lane, plugin-process/slice-pool.ts;
 *   done with each before it pulls the next): then one buffer is read into
 *   again and again, and a long read costs no fresh memory per chunk (no page
 *   faults, no external memory for the collector to chase); that buffer goes
 *   to the next lent stream once this one has ended (the caller is done with
 *   a lent chunk when it pulls again, and the end is a pull), so many files
 *   read one after another cost one buffer, not one each waiting for a collection;
 * - a pull reads one chunk with a positional `readSync`: no thread-pool
 *   round trip and no read-ahead, so the stream holds one chunk at a time
 *   and the reader never waits idle for the pool;
 * - after `YIELD_EVERY` chunks a pull lets the event loop turn first, so a
 *   long read never holds the host's event loop for long;
 * - a read error ends the stream where it got to (the file vanished or
 *   failed mid-read), and `close` runs once however the stream ends.
 */
import { readSync } from "node:fs"
import { Cause, Effect, Stream } from "effect"

/** Bytes per chunk: a quarter of the plugin process's credit window, so several chunks are in flight there. */
export const FILE_CHUNK_BYTES = 256 * 1024

/** Chunks read between two turns of the event loop (4 MiB). */
const YIELD_EVERY = 16

/** A lent buffer whose stream has ended, for the next lent stream. */
let spare: Buffer | undefined

const takeLent = (bytes: number): Buffer => {
  const buffer = spare !== undefined && spare.length === bytes ? spare : Buffer.allocUnsafeSlow(bytes)
  spare = undefined
  return buffer
}

/**
 * The stream of `fd`'s bytes from `start`; `close` (the descriptor's owner
 * letting go) runs once when it ends; `lend`: every chunk in one buffer.
 */
export const fileChunks = (
  fd: number,
  start: number,
  close: () => Effect.Effect<void>,
  lend = false,
  chunkBytes: number = FILE_CHUNK_BYTES,
): Stream.Stream<Uint8Array> =>
  Stream.fromPull(
    Effect.sync(() => {
      let position = Math.max(0, Math.floor(start))
      let reads = 0
      let ended = false
      const lent = lend ? takeLent(chunkBytes) : undefined
      const readChunk = Effect.suspend(() => {
        if (ended) return Cause.done()
        const buffer = lent ?? Buffer.allocUnsafeSlow(chunkBytes)
        let n = 0
        try {
          n = readSync(fd, buffer, 0, chunkBytes, position)
        } catch {
          n = 0
        }
        if (n === 0) {
          ended = true
          // Pulled to its end: the caller is done with the last chunk. A stream left early keeps its buffer.
          if (lent !== undefined) spare = lent
          return Cause.done()
        }
        position += n
        const chunk: Uint8Array = n === chunkBytes ? buffer : buffer.subarray(0, n)
        return Effect.succeed([chunk] as const)
      })
      // The global setImmediate: `node:timers/promises` loads and compiles on its first call.
      const afterATurn = Effect.andThen(
        Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve))),
        readChunk,
      )
      return Effect.suspend(() => (++reads % YIELD_EVERY === 0 ? afterATurn : readChunk))
    }),
  ).pipe(Stream.ensuring(Effect.suspend(close)))

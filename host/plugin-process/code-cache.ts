/**
 * The plugin bundle's V8 code cache: what lets a plugin process start from
 * V8's compiled code instead of parsing and compiling its ~2 MB bundle
 * (Node's own compile cache covers modules only, and the bundle runs as a
 * script; the child may not write files either, so the host makes it).
 *
 * The file (child-flags.ts names it, beside the bundle): the SHA-256 of the
 * bundle's text, then V8's cached data for it.
 *
 * Rules it keeps:
 * - Used only for the very text it was made from: V8 checks its own version,
 *   its flags and the source's length, never the content, so the hash is
 *   what keeps a stale cache of an equal-length bundle from running.
 * - Made by the host (bundle.ts) in a Node of its own under the child's
 *   code and heap flags (CODE_FLAGS, heapFlags), since V8 refuses a cache
 *   made under other flags, one file per set of heap flags;
 *   made again whenever the bundle is rebuilt or the file is missing,
 *   written to a temporary file and renamed. It compiles, never runs, the
 *   plugin: the maker has the host's rights.
 * - Anything wrong (no file, another bundle, V8 refusing it) only means
 *   compiling as before.
 * - Node 24 and later only: Node 20's V8 drops a deserialized script's link
 *   to its dynamic-import callback, so the bundle's `import()` would fail
 *   with "no callback" instead of reaching child.ts's refusal, unreported
 *   (seen on 20.20; 24.22 keeps the link; 22 not checked).
 */
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"

const HASH_BYTES = 32

/** Whether this Node runs a script from a code cache with its import() callback kept (see above). */
export const codeCacheSupported = (nodeVersion = process.versions.node): boolean =>
  Number(nodeVersion.split(".")[0]) >= 24

const hashOf = (code: string): Buffer => createHash("sha256").update(code).digest()

/** V8's cached data for `code` from the cache file's bytes, or undefined when they were made from other text. */
export const cachedDataFor = (code: string, file: Uint8Array | undefined): Buffer | undefined => {
  if (file === undefined || file.byteLength <= HASH_BYTES) return undefined
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength)
  if (!bytes.subarray(0, HASH_BYTES).equals(hashOf(code))) return undefined
  return bytes.subarray(HASH_BYTES)
}

/** The cache file at `path` (child-flags.ts's codeCachePath), read (undefined when there is none). */
export const readCodeCache = (path: string | undefined): Buffer | undefined => {
  if (path === undefined) return undefined
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

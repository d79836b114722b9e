/** Byte arrays joined where both sides need it; the plugin may import it (no Node Buffer here). */

/** `parts` as one array: the only part itself when there is one (no copy), else all of them in order. */
export const joinBytes = (parts: ReadonlyArray<Uint8Array>, total?: number): Uint8Array => {
  if (parts.length === 1) return parts[0] as Uint8Array
  let size = total ?? 0
  if (total === undefined) for (const part of parts) size += part.byteLength
  const all = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    all.set(part, at)
    at += part.byteLength
  }
  return all
}

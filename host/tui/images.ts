/**
 * Images for a prompt: `/image <path>` attaches a file to the next prompt,
 * and a prompt that is nothing but the path of an image (what a terminal
 * types when a file is dropped on it) attaches it too. Only the formats the
 * Messages API takes are read, and only up to its size limit.
 */
import { readFileSync, statSync } from "node:fs"
import { extname, resolve } from "node:path"
import type { ImageInput } from "../../sdk/protocol.ts"

const MEDIA_TYPES: Readonly<Record<string, string>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
}

/** The API refuses images above 5 MB. */
const MAX_BYTES = 5 * 1024 * 1024

/** A dropped path arrives quoted or with escaped spaces. */
export const unquotePath = (text: string): string => {
  const t = text.trim()
  if (/^'.*'$/.test(t) || /^".*"$/.test(t)) return t.slice(1, -1)
  return t.replace(/\\ /g, " ")
}

/** Is `text` the path of an image file (a dropped file)? */
export const droppedImage = (text: string, cwd: string): string | undefined => {
  const path = unquotePath(text)
  if (path.includes("\n") || !MEDIA_TYPES[extname(path).toLowerCase()]) return undefined
  try {
    return statSync(resolve(cwd, path)).isFile() ? resolve(cwd, path) : undefined
  } catch {
    return undefined
  }
}

/** Read an image; throws one clear line when it cannot be sent. */
export const readImage = (path: string, cwd: string): { image: ImageInput; path: string; bytes: number } => {
  const full = resolve(cwd, unquotePath(path))
  const mediaType = MEDIA_TYPES[extname(full).toLowerCase()]
  if (!mediaType) throw new Error(`${full} is not a PNG, JPEG, GIF or WebP image`)
  let data: Buffer
  try {
    data = readFileSync(full)
  } catch (error) {
    throw new Error(`cannot read ${full}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  if (data.length > MAX_BYTES) throw new Error(`${full} is ${data.length} bytes; the model takes up to 5 MB`)
  return { image: { media_type: mediaType, data: data.toString("base64") }, path: full, bytes: data.length }
}

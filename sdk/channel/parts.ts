/**
 * A large answer in parts: which of its arrays cross a slice at a time, the
 * sending of them, and their putting back together at the other end.
 */
import { type Message, type Port, toWireError } from "./types.ts"

/** About how much of an answer's array one part carries (see the rules). */
export const PART_BYTES = 4 * 1024 * 1024

/** Entries of an array sampled to judge its size, evenly spread. */
const SAMPLED = 16

/** An array's JSON size judged from a sample of its entries (an entry JSON cannot write counts as empty). */
const judgedBytes = (entries: ReadonlyArray<unknown>): number => {
  const step = Math.max(1, Math.floor(entries.length / SAMPLED))
  let bytes = 0
  let sampled = 0
  for (let i = 0; i < entries.length && sampled < SAMPLED; i += step, sampled++) {
    try {
      bytes += JSON.stringify(entries[i])?.length ?? 0
    } catch {
      // A cycle or a BigInt: the serializer will say what it makes of it.
    }
  }
  return sampled === 0 ? 0 : (bytes / sampled) * entries.length
}

/** The arrays of `value` (a plain object) that cross in parts, each with its entries a part. */
export const partedArrays = (value: unknown, partBytes: number): Array<{ key: string; perPart: number }> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return []
  if (Object.getPrototypeOf(value) !== Object.prototype) return []
  const parted: Array<{ key: string; perPart: number }> = []
  for (const key of Object.keys(value)) {
    const entries = (value as Record<string, unknown>)[key]
    if (!Array.isArray(entries) || key === "__proto__" || entries.length < 2) continue
    const bytes = judgedBytes(entries)
    if (bytes <= 4 * partBytes) continue
    parted.push({ key, perPart: Math.max(1, Math.floor((partBytes * entries.length) / bytes)) })
  }
  return parted
}

/** What sending an answer in parts needs of its peer. */
export interface PartSender {
  readonly post: NonNullable<Port["postWhenWritten"]>
  readonly send: (message: Message) => void
  /** Send what is queued now: it goes before the answer's parts. */
  readonly flush: () => void
  readonly closed: () => boolean
}

/** A large answer (see the rules): its long arrays a slice at a time, each once the last was written, then the rest. */
export const answerInParts = async (
  peer: PartSender,
  id: number,
  value: Record<string, unknown>,
  parted: ReadonlyArray<{ key: string; perPart: number }>,
) => {
  const { post, send } = peer
  peer.flush()
  try {
    for (const { key, perPart } of parted) {
      const entries = value[key] as unknown[]
      for (let at = 0; at < entries.length; at += perPart) {
        if (peer.closed()) return
        await post([{ t: "part", id, key, entries: entries.slice(at, at + perPart) }])
      }
    }
  } catch (error) {
    send({ t: "err", id, error: toWireError(error) })
    return
  }
  const rest: Record<string, unknown> = { ...value }
  for (const { key } of parted) rest[key] = []
  send({ t: "res", id, value: rest, parts: parted.map(({ key }) => key) })
}

/** Keep a part of a pending answer, by request id then key. */
export const takePart = (
  parts: Map<number, Map<string, unknown[]>>,
  message: Extract<Message, { t: "part" }>,
) => {
  const byKey = parts.get(message.id) ?? new Map<string, unknown[]>()
  parts.set(message.id, byKey)
  const entries = byKey.get(message.key)
  if (entries === undefined) byKey.set(message.key, [...message.entries])
  else for (const entry of message.entries) entries.push(entry)
}

/** An answer whose arrays came in parts, put back together (only keys the answer holds an array under). */
export const withParts = (
  value: unknown,
  keys: ReadonlyArray<string>,
  got: Map<string, unknown[]> | undefined,
) => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value
  const whole: Record<string, unknown> = { ...value }
  for (const key of keys)
    if (key !== "__proto__" && Array.isArray(whole[key]) && Object.hasOwn(whole, key))
      whole[key] = got?.get(key) ?? []
  return whole
}

/**
 * What the mapper's property tests (map/property.test.ts,
 * wire/check.test.ts) and the long fuzz run (`npm run fuzz`, bench/fuzz.ts)
 * share: the mutations made to recorded frames (fast-check arbitraries) and
 * the one pipeline a line takes (bytes → LineSplitter → transport's
 * readLine → mapper, as the session runs it), each event held to the
 * protocol's shapes (event-shapes.ts).
 *
 * Mutations: a value nested deeper than any stack, a field of another type,
 * a huge string, a non-finite or out-of-range number, a removed field, raw
 * bytes (invalid UTF-8 among them), a raw CR, a line cut short, and another
 * frame glued on. Structural ones act on a field chosen among every field of
 * the parsed frame; text ones on the line as written.
 */
import fc from "fast-check"
import { MAX_LINE_BYTES } from "../bounds.ts"
import type { Mapper, MapOutput } from "../map.ts"
import { LineSplitter } from "../sdk/lines.ts"
import { readLine } from "../transport.ts"
import { decodeLine, type Frame } from "../wire.ts"
import { malformedOutput } from "./event-shapes.ts"

// ---------------------------------------------------------------------------
// Mutations

export type Mutation =
  | { readonly op: "deep"; readonly at: number; readonly depth: number; readonly objects: boolean }
  | { readonly op: "retype"; readonly at: number; readonly value: unknown }
  | { readonly op: "huge"; readonly at: number; readonly length: number }
  | { readonly op: "number"; readonly at: number; readonly text: string }
  | { readonly op: "remove"; readonly at: number }
  | { readonly op: "bytes"; readonly at: number; readonly bytes: ReadonlyArray<number> }
  | { readonly op: "cr"; readonly at: number }
  | { readonly op: "cut"; readonly at: number }
  | { readonly op: "glue"; readonly other: number }

export interface MutationSizes {
  /** The deepest nesting a `deep` mutation writes. */
  readonly maxDepth: number
  /** The longest string a `huge` mutation writes. */
  readonly maxString: number
}

/** One mutation; `at`/`other` are taken modulo what they index (fields, positions, lines). */
export const mutationArb = (sizes: MutationSizes): fc.Arbitrary<Mutation> => {
  const at = fc.nat()
  return fc.oneof(
    fc.record({
      op: fc.constant("deep" as const),
      at,
      depth: fc.integer({ min: 50, max: sizes.maxDepth }),
      objects: fc.boolean(),
    }),
    fc.record({ op: fc.constant("retype" as const), at, value: fc.jsonValue({ maxDepth: 3 }) }),
    fc.record({
      op: fc.constant("huge" as const),
      at,
      length: fc.integer({ min: 1_000, max: sizes.maxString }),
    }),
    fc.record({
      op: fc.constant("number" as const),
      at,
      text: fc.constantFrom("1e309", "-1e309", "1e300", "-1e300", "1e-400", "-0", "9007199254740993"),
    }),
    fc.record({ op: fc.constant("remove" as const), at }),
    fc.record({
      op: fc.constant("bytes" as const),
      at,
      // Any byte but LF (which would make two lines); 0xff is never UTF-8.
      bytes: fc.array(
        fc.integer({ min: 0, max: 255 }).filter((b) => b !== 0x0a),
        { minLength: 1, maxLength: 8 },
      ),
    }),
    fc.record({ op: fc.constant("cr" as const), at }),
    fc.record({ op: fc.constant("cut" as const), at }),
    fc.record({ op: fc.constant("glue" as const), other: fc.nat() }),
  )
}

interface Slot {
  readonly holder: Record<string, unknown> | unknown[]
  readonly key: string | number
}

/** Every field and array entry of a parsed frame, depth first. */
const slotsOf = (root: unknown): Slot[] => {
  const slots: Slot[] = []
  const stack: unknown[] = [root]
  while (stack.length > 0) {
    const value = stack.pop()
    if (typeof value !== "object" || value === null) continue
    if (Array.isArray(value))
      value.forEach((child, i) => {
        slots.push({ holder: value, key: i })
        stack.push(child)
      })
    else
      for (const [key, child] of Object.entries(value)) {
        slots.push({ holder: value as Record<string, unknown>, key })
        stack.push(child)
      }
  }
  return slots
}

const encoder = new TextEncoder()

/** A mutated line as bytes, and whether the line must be bad (invalid UTF-8, glued frames). */
export interface Mutated {
  readonly bytes: Uint8Array
  readonly mustBeBad: boolean
  /** What was done, for the example a failure prints. */
  readonly mutations: ReadonlyArray<Mutation>
}

/**
 * `line` with `mutations` applied: the structural ones to its parsed frame
 * (tokens stand for what JSON.stringify cannot write: nesting past the
 * stack, numbers past a double), then the text ones to what is written.
 */
export const applyMutations = (
  line: string,
  mutations: ReadonlyArray<Mutation>,
  others: ReadonlyArray<string>,
): Mutated => {
  const frame = JSON.parse(line) as unknown
  const tokens = new Map<string, string>()
  const slots = slotsOf(frame)
  for (const m of mutations) {
    if (!("at" in m) || m.op === "bytes" || m.op === "cr" || m.op === "cut" || slots.length === 0) continue
    const slot = slots[m.at % slots.length] as Slot
    const set = (value: unknown) => {
      ;(slot.holder as Record<string | number, unknown>)[slot.key] = value
    }
    const token = () => {
      const name = `__fuzz_${tokens.size}__`
      set(name)
      return `"${name}"`
    }
    switch (m.op) {
      case "deep":
        tokens.set(
          token(),
          m.objects
            ? `${'{"a":'.repeat(m.depth)}1${"}".repeat(m.depth)}`
            : `${"[".repeat(m.depth)}1${"]".repeat(m.depth)}`,
        )
        break
      case "retype":
        set(m.value)
        break
      case "huge":
        set("x".repeat(m.length))
        break
      case "number":
        tokens.set(token(), m.text)
        break
      case "remove":
        if (Array.isArray(slot.holder)) slot.holder.splice(slot.key as number, 1)
        else delete slot.holder[slot.key as string]
        break
    }
  }
  let text = JSON.stringify(frame) ?? "null"
  for (const [token, value] of tokens) text = text.replace(token, value)
  let mustBeBad = false
  let bytes: Uint8Array = encoder.encode(text)
  const splice = (at: number, inserted: ArrayLike<number>): Uint8Array => {
    const joined = new Uint8Array(bytes.length + inserted.length)
    joined.set(bytes.subarray(0, at))
    joined.set(inserted, at)
    joined.set(bytes.subarray(at), at + inserted.length)
    return joined
  }
  for (const m of mutations) {
    if (m.op === "cr") {
      const at = m.at % (bytes.length + 1)
      bytes = splice(at, [0x0d])
    } else if (m.op === "bytes") {
      const at = m.at % (bytes.length + 1)
      bytes = splice(at, m.bytes)
    } else if (m.op === "cut") {
      bytes = bytes.subarray(0, m.at % (bytes.length + 1))
      // What was glued may be cut off again.
      mustBeBad = false
    } else if (m.op === "glue" && others.length > 0) {
      const other = encoder.encode(others[m.other % others.length] as string)
      // Glued onto nothing (a line cut to nothing, or to blanks), the other frame is just a frame.
      if (new TextDecoder().decode(bytes).trim() !== "") mustBeBad = true
      bytes = splice(bytes.length, other)
    }
  }
  // 0xff is never UTF-8: a line holding one must be said bad, whatever else happened to it.
  return { bytes, mustBeBad: mustBeBad || bytes.includes(0xff), mutations }
}

// ---------------------------------------------------------------------------
// The pipeline and its tally

export interface Tally {
  lines: number
  mutated: number
  frames: number
  events: number
  /** Exceptions out of decodeLine or the mapper (target 0). */
  escaped: number
  /** Events (or result usage) that break the protocol's types or JSON.stringify (target 0). */
  malformed: number
  /** Lines with a diagnostic. */
  badLines: number
  /** Lines that had to be bad (invalid UTF-8, glued) and gave none (target 0). */
  silentBadLines: number
  /** Recorded lines, not mutated, that gave a diagnostic (target 0). */
  cleanLinesFlagged: number
  readonly examples: string[]
}

export const newTally = (): Tally => ({
  lines: 0,
  mutated: 0,
  frames: 0,
  events: 0,
  escaped: 0,
  malformed: 0,
  badLines: 0,
  silentBadLines: 0,
  cleanLinesFlagged: 0,
  examples: [],
})

const note = (tally: Tally, text: string) => {
  if (tally.examples.length < 10) tally.examples.push(text)
}

/**
 * One line's bytes the way the session reads them (LineSplitter, readLine,
 * decodeLine, the mapper), counted into `tally`. Returns the frames mapped.
 */
export const feedLine = (
  tally: Tally,
  mapper: Mapper,
  bytes: Uint8Array,
  mutated: Mutated | undefined,
): Frame[] => {
  tally.lines++
  if (mutated !== undefined) tally.mutated++
  const splitter = new LineSplitter(MAX_LINE_BYTES)
  const lines = [...splitter.push(bytes), ...splitter.end()]
  const mapped: Frame[] = []
  let diagnostics = 0
  for (const line of lines) {
    let read: ReturnType<typeof readLine<Frame>>
    try {
      read = readLine(line, decodeLine)
    } catch (cause) {
      tally.escaped++
      note(tally, `decode threw: ${String(cause).slice(0, 200)}`)
      continue
    }
    if (read.diagnostic !== undefined) diagnostics++
    for (const frame of read.frames) {
      tally.frames++
      let out: MapOutput
      try {
        out = mapper.map(frame, "run")
      } catch (cause) {
        tally.escaped++
        note(tally, `map threw: ${String(cause).slice(0, 200)}`)
        continue
      }
      tally.events += out.events.length
      const why = malformedOutput(out)
      if (why !== undefined) {
        tally.malformed++
        note(tally, `malformed: ${why.slice(0, 200)}`)
      }
      mapped.push(frame)
    }
  }
  if (diagnostics > 0) tally.badLines++
  if (mutated?.mustBeBad && diagnostics === 0) {
    tally.silentBadLines++
    note(
      tally,
      `a line that had to be bad gave no diagnostic: ${JSON.stringify(mutated.mutations).slice(0, 300)}`,
    )
  }
  if (mutated === undefined && diagnostics > 0) tally.cleanLinesFlagged++
  return mapped
}

/** The text of `bytes` as the FakePeer writes it (for the session run: text mutations only). */
export const asText = (bytes: Uint8Array): string => new TextDecoder().decode(bytes)

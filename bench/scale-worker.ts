/**
 * One measured call of the scaling benchmark (bench/scale.ts), in a process
 * of its own, bundled by esbuild and run with plain `node` (no loader in the
 * measured process). Files are read with plain node calls (testkit/node-fs.ts).
 *
 *   node scale-worker.mjs read <configDir> <cwd> <id>     read_session
 *   node scale-worker.mjs floor-read <path>…              the bytes read, line breaks found, nothing parsed
 *   node scale-worker.mjs floor-parse <path>…             that, and JSON.parse of the lines the reader parses
 *   node scale-worker.mjs list <configDir> <limit>        list_sessions (BENCH_STORAGE: the plugin storage file)
 *   node scale-worker.mjs floor-list <configDir>          a cold list's file-system calls alone
 *
 * Prints one JSON line: a `Sample` (bench/measure.ts), with `returned` (the
 * characters of text the answer holds, its strings summed) for a read.
 */
import { closeSync, openSync, readSync } from "node:fs"
import { Context, Effect } from "effect"
import { openJsonStorage } from "../host/broker/storage.ts"
import { isParsedLine } from "../history/chain.ts"
import { LinePrefix, LONG_LINE_BYTES } from "../files.ts"
import { listSessions, readSession } from "../history.ts"
import { Fs, Storage } from "../sdk/plugin-api.ts"
import { nodeFs } from "../testkit/node-fs.ts"
import { measureCall, rawEndsFloor, settleListCache } from "./measure.ts"

const [mode = "", a = "", b = "", c = ""] = process.argv.slice(2)

/** The characters of every string in a value: what an answer weighs, without serializing it. */
const textIn = (value: unknown): number => {
  if (typeof value === "string") return value.length
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + textIn(v), 0)
  if (typeof value === "object" && value !== null)
    return Object.values(value).reduce((n: number, v) => n + textIn(v), 0)
  return 0
}

/**
 * Read a file in 1 MiB chunks and count its line breaks: no decoding, no
 * parsing. A Node Buffer: its `indexOf` is Node's native search, the one the
 * reader's line splitter gets on the broker's chunks (a plain Uint8Array's
 * is V8's byte loop, which would make the floor mostly search).
 */
const floorBuffer = Buffer.allocUnsafeSlow(1024 * 1024)
const floorRead = (path: string): number => {
  const fd = openSync(path, "r")
  const buffer = floorBuffer
  let lines = 0
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) break
      const chunk = n === buffer.length ? buffer : buffer.subarray(0, n)
      for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++
    }
  } finally {
    closeSync(fd)
  }
  return lines
}

/**
 * The line numbers of a file the reader parses: history/chain.ts's own rule on each
 * line's first bytes (user, assistant, system, title records), lines the
 * reader cuts (past files.ts `LONG_LINE_BYTES`) left out. Found before the
 * measured call, with their bytes.
 */
const parsedLinesOf = (path: string): { lines: Uint32Array; bytes: number } => {
  const found: number[] = []
  let bytes = 0
  let line = 0
  let start = 0
  let head: Buffer | undefined
  let length = 0
  const fd = openSync(path, "r")
  const buffer = Buffer.allocUnsafeSlow(1024 * 1024)
  const decide = () => {
    if (length > 0 && length <= LONG_LINE_BYTES && head !== undefined && isParsedLine(head)) {
      found.push(line)
      bytes += length
    }
    line++
    length = 0
    head = undefined
  }
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) break
      start = 0
      for (;;) {
        const nl = buffer.indexOf(10, start)
        const stop = nl < 0 || nl >= n ? n : nl
        if (head === undefined || head.length < LinePrefix) {
          const take = buffer.subarray(start, Math.min(stop, start + LinePrefix - (head?.length ?? 0)))
          head = head === undefined ? Buffer.from(take) : Buffer.concat([head, take])
        }
        length += stop - start
        if (stop === n) break
        decide()
        start = stop + 1
      }
    }
    if (length > 0) decide()
  } finally {
    closeSync(fd)
  }
  return { lines: Uint32Array.from(found), bytes }
}

/**
 * The floor, and each line of `parsed` decoded and parsed (`JSON.parse` of
 * its text, the value read): the least a reader must do for what it
 * returns. A line split across two chunks is joined first, as any reader's
 * must be. Returns the lines parsed.
 */
const floorParse = (path: string, parsed: Uint32Array): number => {
  const fd = openSync(path, "r")
  const buffer = floorBuffer
  let line = 0
  let next = 0
  let want = parsed[0] ?? -1
  let carry: Buffer[] = []
  let keys = 0
  const parse = (text: string) => {
    const value = JSON.parse(text) as { type?: unknown }
    if (value.type !== undefined) keys++
    want = parsed[++next] ?? -1
  }
  try {
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null)
      if (n === 0) break
      const chunk = n === buffer.length ? buffer : buffer.subarray(0, n)
      let start = 0
      for (let at = chunk.indexOf(10); ; at = chunk.indexOf(10, at + 1)) {
        if (at < 0) {
          if (line === want) carry.push(Buffer.from(chunk.subarray(start)))
          break
        }
        if (line === want) {
          if (carry.length === 0) parse(chunk.toString("utf8", start, at))
          else {
            carry.push(chunk.subarray(start, at))
            parse(Buffer.concat(carry).toString("utf8"))
            carry = []
          }
        }
        line++
        start = at + 1
      }
    }
    if (line === want && carry.length > 0) parse(Buffer.concat(carry).toString("utf8"))
  } finally {
    closeSync(fd)
  }
  return keys
}

const main = async (): Promise<void> => {
  const storage = await openJsonStorage(process.env.BENCH_STORAGE ?? "/dev/null/none")
  const services = Context.make(Fs, nodeFs).pipe(Context.add(Storage, storage))
  const run = <A>(effect: Effect.Effect<A, never, Fs | Storage>) =>
    Effect.runPromise(effect.pipe(Effect.provideContext(services)))
  // Effect's runtime has run before, as in an active plugin; no history code has.
  await run(
    Effect.gen(function* () {
      return yield* (yield* Storage).keys
    }),
  )
  // The answer is weighed after the call: walking it is the benchmark's work, not the read's.
  let answer: unknown
  // floor-parse: which lines to parse, found before the call.
  const paths = process.argv.slice(3)
  const selections = mode === "floor-parse" ? paths.map(parsedLinesOf) : []
  const calls: Record<string, () => Promise<number>> = {
    read: async () => {
      const transcript = await run(readSession(a, b, c))
      answer = transcript
      return transcript?.items.length ?? -1
    },
    "floor-read": async () => paths.reduce((n, path) => n + floorRead(path), 0),
    "floor-parse": async () =>
      paths.reduce((n, path, i) => n + floorParse(path, selections[i]?.lines ?? new Uint32Array(0)), 0),
    list: async () => (await run(listSessions(a, { limit: Number(b) }))).sessions.length,
    "floor-list": async () => rawEndsFloor(a, 2 * 1024, 4 * 1024),
  }
  const call = calls[mode]
  if (call === undefined) throw new Error(`no such mode ${mode}`)
  const sample = await measureCall(call)
  // The summary cache is written after the answer: wait for it outside the call, for the warm run after.
  if (mode === "list") await settleListCache(storage)
  const parsed =
    mode === "floor-parse"
      ? { parsedLines: sample.count, parsedBytes: selections.reduce((n, s) => n + s.bytes, 0) }
      : {}
  process.stdout.write(`${JSON.stringify({ ...sample, returned: textIn(answer), ...parsed })}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  },
)

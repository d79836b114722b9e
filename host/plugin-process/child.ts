/**
 * The plugin process's entry (bundled to one file, run by plain Node under
 * the permission model, see child-flags.ts): take the IPC channel, put up
 * the lockdown, then run the plugin's bundle as a script and hand it the
 * channel. The bundle is a script, not a module: it has no `require`, no
 * `import.meta`, and its `import()` reaches no loader (refused and reported
 * here). Code generation from strings is off (a flag), so it cannot compile
 * its way around either. The byte lane (lane.ts, fd 4) is read here with
 * `fs.read` (lane.ts `readLane`: buffers of its own, handed on as views,
 * read into again only once a lending reader gave every piece back). The
 * bundle compiles from its V8 code cache when the host made one for this
 * very text (code-cache.ts).
 */
import { read, readFileSync } from "node:fs"
import { serialize } from "node:v8"
import { Script } from "node:vm"
import type { Message, Port } from "../../sdk/channel.ts"
import { cachedDataFor, codeCacheSupported, readCodeCache } from "./code-cache.ts"
import { LANE_FD, type ReadInto, readLane } from "./lane.ts"
import { lockdown, SandboxRefusal } from "./lockdown.ts"

const [bundlePath, cachePath] = process.argv.slice(2)
const send = process.send?.bind(process)
if (!send || !bundlePath) {
  process.stderr.write("the plugin process runs only as a child of a host, with the bundle's path\n")
  process.exit(2)
}

let receive: ((batch: ReadonlyArray<Message>) => void) | null = null
const early: ReadonlyArray<Message>[] = []
process.on("message", (batch: ReadonlyArray<Message>) => {
  if (!Array.isArray(batch)) return
  if (receive) receive(batch)
  else early.push(batch)
})
// The host is gone: nothing here may outlive it.
process.on("disconnect", () => process.exit(0))

/**
 * What of a batch the serializer refused can cross (a function or a symbol
 * cannot): an answer that cannot becomes an error for its call, a note a
 * logged drop; the rest goes as it was.
 */
const carriable = (batch: ReadonlyArray<Message>, error: unknown): Message[] =>
  batch.flatMap((m): Message[] => {
    try {
      serialize(m)
      return [m]
    } catch {
      const what = `a ${m.t} message the channel cannot carry (${String(error)})`
      if (m.t === "res") return [{ t: "err", id: m.id, error: { _tag: "Unserializable", message: what } }]
      return [{ t: "note", op: "log", args: { level: "warn", message: `${what} was dropped` } }]
    }
  })

const post = (batch: ReadonlyArray<Message>) => {
  try {
    send(batch)
  } catch (error) {
    // The host is gone: nothing to say it to.
    if (!process.connected) process.exit(0)
    try {
      send(carriable(batch, error))
    } catch {
      process.exit(0)
    }
  }
}
/** A batch handed over, resolved once written (a large answer's parts go one at a time: sdk/channel.ts). */
const postWhenWritten = (batch: ReadonlyArray<Message>): Promise<void> =>
  new Promise((resolve, reject) => {
    const failed = (error: unknown) =>
      reject({
        _tag: "Unserializable",
        message: `a part of an answer the channel cannot carry (${String(error)})`,
      })
    try {
      send(batch, undefined, undefined, (error: Error | null) => (error ? failed(error) : resolve()))
    } catch (error) {
      if (!process.connected) process.exit(0)
      failed(error)
    }
  })
const report = (what: string) => post([{ t: "note", op: "sandbox.refused", args: { what } }])
const log = (level: "info" | "warn", text: string) =>
  post([{ t: "note", op: "log", args: { level, message: text.trimEnd(), data: { from: "console" } } }])

const code = readFileSync(bundlePath, "utf8")
const cachedData = codeCacheSupported() ? cachedDataFor(code, readCodeCache(cachePath)) : undefined
lockdown(report, log)

let lane: ReturnType<typeof readLane> | null = null
const readLaneFd: ReadInto = (buffer, at, length, done) => read(LANE_FD, buffer, at, length, null, done)

const port: Port = {
  post,
  postWhenWritten,
  listenBytes: (deliver) => {
    lane = readLane(readLaneFd, deliver)
  },
  releaseBytes: (pieces) => lane?.release(pieces),
  listen: (handler) => {
    receive = handler
    for (const batch of early.splice(0)) handler(batch)
  },
  later: (flush) => queueMicrotask(flush),
}

const script = new Script(code, {
  filename: bundlePath,
  ...(cachedData && { cachedData }),
  importModuleDynamically: ((specifier: string) => {
    report(`import(${specifier})`)
    throw new SandboxRefusal(`import(${specifier}) is not available in the plugin process`)
  }) as never,
})
// What the start compiled from, for the host's debug log (a refused cache is only slower).
const compiled = !cachedData
  ? "no code cache"
  : script.cachedDataRejected
    ? "code cache refused by V8"
    : "code cache"
post([
  {
    t: "note",
    op: "log",
    args: {
      level: "debug",
      message: `plugin bundle compiled: ${compiled}`,
      data: { from: "plugin process" },
    },
  },
])
script.runInThisContext()
const entry = (globalThis as { __cvgPlugin?: { start: (port: Port) => void } }).__cvgPlugin
if (!entry) {
  report("the plugin bundle defines no entry")
  process.exit(3)
}
entry.start(port)

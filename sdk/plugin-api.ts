/**
 * The plugin API: what a host's capability broker gives a plugin, as Effect
 * services. A plugin reaches processes, files, the environment and its own
 * storage only through these, and only where its manifest grants it.
 *
 * Rules every host implements (host/ enforces them; sdk/testing/ imitates them):
 * - process: only granted command names, found on the login PATH.
 * - fs: read-only; a missing or ungranted path answers null, never throws.
 *   A link is followed and its target must itself lie in a granted scope.
 * - env: only granted names; read fresh at every call.
 */
import { Context, Data, type Effect, type Scope, type Stream } from "effect"
import type { AgentHost, AgentProvider } from "./protocol.ts"

// ---------------------------------------------------------------------------
// Errors

/** The broker refused: the capability was not granted. */
export class NotGranted extends Data.TaggedError("NotGranted")<{
  readonly capability: string
  readonly detail: string
}> {
  override get message() {
    return `${this.capability} not granted: ${this.detail}`
  }
}

/** A granted operation failed (e.g. the command was not found on PATH). */
export class BrokerFailure extends Data.TaggedError("BrokerFailure")<{
  readonly operation: string
  readonly detail: string
}> {
  override get message() {
    return `${this.operation} failed: ${this.detail}`
  }
}

export type BrokerError = NotGranted | BrokerFailure

// ---------------------------------------------------------------------------
// Processes

export interface SpawnOptions {
  readonly cwd?: string
  /** Variables added to (or, with value undefined, removed from) the login environment. */
  readonly env?: Readonly<Record<string, string | undefined>>
}

/** `ProcessShape.spawn`'s options: the process's, and how its stdout may be handed over. */
export interface SpawnStreamOptions extends SpawnOptions {
  /**
   * `{ lend: true }`: the caller is done with each stdout chunk before it
   * pulls the next (it splits lines and copies what it keeps, as sdk/lines.ts
   * does), so a host may read the chunks into buffers it reuses (the plugin
   * process's byte lane does). A host that cannot lend gives fresh chunks.
   */
  readonly stdout?: StreamOptions
}

export interface ProcessExit {
  /** null when the process was ended by a signal. */
  readonly code: number | null
  readonly signal: string | null
}

export interface ProcessHandle {
  readonly pid: number | undefined
  /** Raw bytes; a plugin splits them into lines itself (sdk/lines.ts). */
  readonly stdout: Stream.Stream<Uint8Array>
  readonly stderr: Stream.Stream<Uint8Array>
  /** Write text to stdin. Fails once stdin is closed or the process exited. */
  readonly write: (text: string) => Effect.Effect<void, BrokerFailure>
  readonly closeStdin: Effect.Effect<void>
  /** Completes when the process has exited. */
  readonly exit: Effect.Effect<ProcessExit>
  /** SIGTERM, then SIGKILL after a grace period if it is still alive. */
  readonly kill: (signal?: "SIGTERM" | "SIGKILL" | "SIGINT") => Effect.Effect<void>
}

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface ProcessShape {
  /**
   * Start a granted command. The process lives as long as the scope: closing
   * the scope ends it (SIGTERM, then SIGKILL) and waits for its exit.
   */
  readonly spawn: (
    command: string,
    args: ReadonlyArray<string>,
    options?: SpawnStreamOptions,
  ) => Effect.Effect<ProcessHandle, BrokerError, Scope.Scope>
  /** Run a granted command to its end and collect its output. */
  readonly run: (
    command: string,
    args: ReadonlyArray<string>,
    options?: SpawnOptions & { readonly timeoutMs?: number; readonly stdin?: string },
  ) => Effect.Effect<RunResult, BrokerError>
  /** Where the login PATH finds a granted command (null: not found). */
  readonly which: (command: string) => Effect.Effect<string | null, NotGranted>
}

export class Process extends Context.Service<Process, ProcessShape>()("convergence/Process") {}

// ---------------------------------------------------------------------------
// Files (read-only)

export interface FileStat {
  readonly kind: "file" | "directory" | "other"
  readonly size: number
  readonly mtimeMs: number
  readonly birthtimeMs: number
}

export interface DirEntry {
  readonly name: string
  readonly kind: "file" | "directory" | "link" | "other"
}

/** Both ends of a file and its metadata, from one open (`FsShape.readEnds`; the bytes are lent for one visit). */
export interface FileEnds {
  /** The first min(headBytes, size) bytes. */
  readonly head: Uint8Array
  /**
   * The last min(tailBytes, size) bytes. It may overlap the head; when the
   * head holds the whole file it may be a view of the same bytes.
   */
  readonly tail: Uint8Array
  /** The size when the file was opened; `head` and `tail` are cut to it. */
  readonly size: number
  readonly mtimeMs: number
  readonly birthtimeMs: number
}

/** What `FsShape.listEnds` reads of a folder's files. */
export interface ListEndsOptions {
  /** Files whose name ends so are visited (`.jsonl`)… */
  readonly suffix: string
  /** …and, when given, is this long (a `<uuid>.jsonl` is 42). */
  readonly nameLength?: number
  readonly headBytes: number
  readonly tailBytes: number
  /** Both ends only when at most this many files match; else sizes and times only. */
  readonly maxEnds: number
}

/**
 * The listing first (`withEnds`: the files' ends are read, else only their
 * sizes and times), then each matching file by its index in it (`FsShape.listEnds`).
 */
export interface ListEndsVisit {
  readonly entries: (entries: ReadonlyArray<DirEntry>, withEnds: boolean) => void
  readonly file: (index: number, ends: FileEnds | null) => void
}

/** How `FsShape.stream` may hand its chunks over. */
export interface StreamOptions {
  /**
   * The caller is done with each chunk before it pulls the next (it decodes
   * or copies what it keeps), so a host may read every chunk into the same
   * buffer: no fresh memory per chunk for a 1 GB transcript (the plugin
   * process's byte lane reads lent chunks into buffers it reuses). A host
   * that cannot lend gives fresh chunks anyway.
   */
  readonly lend?: boolean
}

export interface FsShape {
  /** Whole file as UTF-8 text, or null. */
  readonly read: (path: string) => Effect.Effect<string | null>
  /** Bytes [start, end) of a file, or null. `end` past the size is clipped. */
  readonly readRange: (path: string, start: number, end: number) => Effect.Effect<Uint8Array | null>
  /**
   * The file as a byte stream in chunks, or null (for large transcripts).
   * Each chunk is the caller's to keep, unless it asks for them lent
   * (`StreamOptions.lend`).
   */
  readonly stream: (
    path: string,
    start?: number,
    options?: StreamOptions,
  ) => Effect.Effect<Stream.Stream<Uint8Array> | null>
  readonly stat: (path: string) => Effect.Effect<FileStat | null>
  /**
   * Both ends of many files, one open each: `visit(index, ends)` once for
   * each path (in any order: a host may read several at once), `ends` null
   * for a path that is missing, refused or not a regular file (a folder).
   * The bytes are lent: valid only during that `visit` call (the host reads
   * every file into the same buffer), so decode or copy what you keep. For
   * listings that read both ends of a thousand files: one call keeps a
   * broker's per-call cost out of the per-file cost, and no file's bytes
   * take fresh memory. With `headBytes` and `tailBytes` both 0 it gives only
   * the sizes and times (a host may stat the files instead of opening them):
   * a listing that knows the content already. Optional: a host without it
   * is served by `stat` and `readRange` per file.
   */
  readonly readEnds?: (
    paths: ReadonlyArray<string>,
    headBytes: number,
    tailBytes: number,
    visit: (index: number, ends: FileEnds | null) => void,
  ) => Effect.Effect<void>
  /**
   * A folder's entries and the ends of its files in one call: `visit.entries`
   * once with the listing (and whether the ends are read), then `visit.file(index, ends)` once for each entry
   * (its index in the listing) that is a file or link whose name ends with
   * `suffix` (and is `nameLength` long, when given), as `readEnds` visits a path (lent bytes, null for one refused,
   * missing or not a regular file). Both ends are read only when at most
   * `maxEnds` files match; otherwise only their sizes and times (the answer
   * says which). Null when the folder is refused, missing, not a folder, or
   * holds more entries than the host lists in one call (logged as a
   * refusal): `list` and `readEnds` still serve it. Checked as `list` and
   * `readEnds` are. Optional: a host without it is served by those two.
   */
  readonly listEnds?: (
    dir: string,
    options: ListEndsOptions,
    visit: ListEndsVisit,
  ) => Effect.Effect<{ readonly withEnds: boolean } | null>
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<DirEntry> | null>
  readonly realpath: (path: string) => Effect.Effect<string | null>
  /** Named folders of the fs scopes: `home` and the plugin's `data` folder. */
  readonly paths: { readonly home: string; readonly data: string }
}

export class Fs extends Context.Service<Fs, FsShape>()("convergence/Fs") {}

// ---------------------------------------------------------------------------
// Environment (granted names only, read fresh)

export interface EnvShape {
  readonly get: (name: string) => Effect.Effect<string | undefined>
  /** Every granted variable of the login environment, read now. */
  readonly all: Effect.Effect<Readonly<Record<string, string>>>
}

export class Env extends Context.Service<Env, EnvShape>()("convergence/Env") {}

// ---------------------------------------------------------------------------
// Storage (the plugin's own key/value store, JSON values)

export interface StorageShape {
  readonly get: (key: string) => Effect.Effect<unknown>
  readonly set: (key: string, value: unknown) => Effect.Effect<void>
  readonly delete: (key: string) => Effect.Effect<void>
  readonly keys: Effect.Effect<ReadonlyArray<string>>
}

export class Storage extends Context.Service<Storage, StorageShape>()("convergence/Storage") {}

// ---------------------------------------------------------------------------
// Host calls

export interface ToolResult {
  readonly content: ReadonlyArray<{ readonly type: "text"; readonly text: string }>
  readonly isError?: boolean
}

export interface HostShape {
  /** Run one of the host's plugin tools for a session (`tools.call`). */
  readonly callTool: (
    sessionId: string,
    name: string,
    input: unknown,
  ) => Effect.Effect<ToolResult, BrokerFailure>
}

export class Host extends Context.Service<Host, HostShape>()("convergence/Host") {}

// ---------------------------------------------------------------------------
// Log

export interface LogShape {
  readonly debug: (message: string, data?: unknown) => Effect.Effect<void>
  readonly info: (message: string, data?: unknown) => Effect.Effect<void>
  readonly warn: (message: string, data?: unknown) => Effect.Effect<void>
  readonly error: (message: string, data?: unknown) => Effect.Effect<void>
}

export class Log extends Context.Service<Log, LogShape>()("convergence/Log") {}

// ---------------------------------------------------------------------------
// The whole API, as `activate` receives it

export type Broker = Process | Fs | Env | Storage | Host | Log

export interface AgentsShape {
  /** Serve an agent. `make` receives the host's event sink for it. */
  readonly provide: (id: string, make: (host: AgentHost) => AgentProvider) => Effect.Effect<void>
  readonly unprovide: (id: string) => Effect.Effect<void>
}

export interface PluginApi {
  readonly apiVersion: number
  readonly process: ProcessShape
  readonly fs: FsShape
  readonly env: EnvShape
  readonly storage: StorageShape
  readonly host: HostShape
  readonly log: LogShape
  readonly agents: AgentsShape
}

/** A plugin's entry point (`main` in plugin.manifest.json exports it). */
export type Activate = (api: PluginApi) => Effect.Effect<void, unknown>

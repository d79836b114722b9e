/**
 * The host's logger: the plugin's `api.log` and the broker's refusals land
 * here. Entries are kept (bounded) so tests and the front end can read them,
 * and passed to an optional sink (a file, the terminal).
 */

export type LogLevel = "debug" | "info" | "warn" | "error"

export interface LogEntry {
  readonly at: number
  readonly level: LogLevel
  /** `plugin` for api.log, `broker` for the broker's own notes and refusals. */
  readonly source: "plugin" | "broker" | "host"
  readonly message: string
  readonly data?: unknown
}

export interface HostLogger {
  readonly entries: ReadonlyArray<LogEntry>
  readonly log: (entry: Omit<LogEntry, "at">) => void
  /** Broker refusals (fs, process, env) only. */
  readonly refusals: () => ReadonlyArray<LogEntry>
  readonly subscribe: (listener: (entry: LogEntry) => void) => () => void
}

export interface HostLoggerOptions {
  /** Called for every entry. */
  readonly sink?: (entry: LogEntry) => void
  /** How many entries to keep (oldest dropped first). Default 10,000. */
  readonly keep?: number
}

export const REFUSED = "refused"

export const makeHostLogger = (options: HostLoggerOptions = {}): HostLogger => {
  const keep = options.keep ?? 10_000
  const entries: LogEntry[] = []
  const listeners = new Set<(entry: LogEntry) => void>()
  if (options.sink) listeners.add(options.sink)
  return {
    entries,
    log: (partial) => {
      const entry: LogEntry = { at: Date.now(), ...partial }
      entries.push(entry)
      if (entries.length > keep) entries.splice(0, entries.length - keep)
      for (const listener of listeners) {
        try {
          listener(entry)
        } catch {
          // A failing sink must not break the plugin's call.
        }
      }
    },
    refusals: () => entries.filter((e) => e.source === "broker" && e.message.startsWith(REFUSED)),
    subscribe: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
  }
}

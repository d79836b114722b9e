/**
 * api.env: the login environment, only the granted names (`NAME`, or
 * `PREFIX_*` for every name with that prefix), read from the host's source
 * at every call so a change applies without a restart.
 */
import { Effect } from "effect"
import type { EnvShape } from "../../sdk/plugin-api.ts"

export type EnvSource = () => Readonly<Record<string, string | undefined>>

/** A matcher for the manifest's env names (`CLAUDE_*` is a prefix wildcard). */
export const envNameMatcher = (names: ReadonlyArray<string>): ((name: string) => boolean) => {
  const exact = new Set(names.filter((n) => !n.endsWith("*")))
  const prefixes = names.filter((n) => n.endsWith("*")).map((n) => n.slice(0, -1))
  return (name) => exact.has(name) || prefixes.some((p) => name.startsWith(p) && name.length > p.length)
}

export interface EnvBrokerOptions {
  readonly names: ReadonlyArray<string>
  readonly source: EnvSource
  readonly refuse: (name: string) => void
}

export const makeEnvBroker = (options: EnvBrokerOptions): EnvShape => {
  const granted = envNameMatcher(options.names)
  return {
    get: (name) =>
      Effect.sync(() => {
        if (!granted(name)) {
          options.refuse(name)
          return undefined
        }
        return options.source()[name]
      }),
    all: Effect.sync(() => {
      const out: Record<string, string> = {}
      for (const [name, value] of Object.entries(options.source()))
        if (value !== undefined && granted(name)) out[name] = value
      return out
    }),
  }
}

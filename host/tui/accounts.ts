/**
 * `/account add`: a new entry in the plugin's `instances` storage, checked by
 * the plugin's own rule (instances.ts) before it is written. An account is a
 * name plus either its own configuration directory (a second login) or an
 * API key and base URL (a proxy or gateway). The plugin registers stored
 * accounts when it activates, so the front end reloads it afterwards.
 */
import { Effect, Result } from "effect"
import { parseArgs } from "node:util"
import { INSTANCES_KEY, validateAccount } from "../../instances.ts"
import type { JsonStorage } from "../broker/storage.ts"

export const ACCOUNT_ADD_USAGE =
  "/account add <id> [--name <name>] (--config-dir <dir> | --api-key <key> [--base-url <url>])"

export interface AccountEntry {
  readonly id: string
  readonly name?: string
  readonly configDir?: string
  readonly env?: Readonly<Record<string, string>>
}

/** The words after `/account add` as a stored entry, or the reason they are not one. */
export const parseAccountAdd = (words: ReadonlyArray<string>): Result.Result<AccountEntry, string> => {
  let parsed: ReturnType<
    typeof parseArgs<{
      allowPositionals: true
      options: {
        name: { type: "string" }
        "config-dir": { type: "string" }
        "api-key": { type: "string" }
        "base-url": { type: "string" }
      }
    }>
  >
  try {
    parsed = parseArgs({
      args: [...words],
      allowPositionals: true,
      options: {
        name: { type: "string" },
        "config-dir": { type: "string" },
        "api-key": { type: "string" },
        "base-url": { type: "string" },
      },
    })
  } catch (error) {
    return Result.fail(`${(error as Error).message}; ${ACCOUNT_ADD_USAGE}`)
  }
  const { values, positionals } = parsed
  const [id, ...rest] = positionals
  if (!id) return Result.fail(`name the account: ${ACCOUNT_ADD_USAGE}`)
  if (rest.length > 0) return Result.fail(`unexpected ${rest.join(" ")}; ${ACCOUNT_ADD_USAGE}`)
  const configDir = values["config-dir"]
  const apiKey = values["api-key"]
  const baseUrl = values["base-url"]
  if (configDir === undefined && apiKey === undefined && baseUrl === undefined)
    return Result.fail(`say how it signs in: ${ACCOUNT_ADD_USAGE}`)
  if (configDir !== undefined && (apiKey !== undefined || baseUrl !== undefined))
    return Result.fail("an account has either its own --config-dir or an --api-key/--base-url, not both")
  if (baseUrl !== undefined && !/^https?:\/\/\S+$/.test(baseUrl))
    return Result.fail(`--base-url ${baseUrl} is not an http(s) URL`)
  const env: Record<string, string> = {}
  if (apiKey !== undefined) env.ANTHROPIC_API_KEY = apiKey
  if (baseUrl !== undefined) env.ANTHROPIC_BASE_URL = baseUrl
  const entry: AccountEntry = {
    id,
    ...(values.name !== undefined && { name: values.name }),
    ...(configDir !== undefined && { configDir }),
    ...(Object.keys(env).length > 0 && { env }),
  }
  const checked = validateAccount(entry)
  return Result.isFailure(checked) ? Result.fail(checked.failure) : Result.succeed(entry)
}

/** The stored entries as they are (the default account is not stored). */
export const storedAccounts = async (storage: JsonStorage): Promise<ReadonlyArray<AccountEntry>> => {
  const value = await Effect.runPromise(storage.get(INSTANCES_KEY))
  return Array.isArray(value) ? (value as AccountEntry[]) : []
}

/** Add `entry`; refuses an id already stored. Resolves once the file is written. */
export const addAccount = async (storage: JsonStorage, entry: AccountEntry): Promise<void> => {
  const stored = await storedAccounts(storage)
  if (stored.some((a) => a.id === entry.id)) throw new Error(`an account ${entry.id} is already stored`)
  await Effect.runPromise(storage.set(INSTANCES_KEY, [...stored, entry]))
  await storage.flush()
}

/** A stored key shown in a list: its last four characters. */
export const maskKey = (key: string): string => (key.length <= 8 ? "…" : `…${key.slice(-4)}`)

/**
 * The accounts: the default `claude` agent plus one `claude:<id>` per stored
 * instance (plugin storage key `instances`). Each account may have its own
 * configuration directory and extra environment for the CLI.
 */
import { Effect, Result } from "effect"
import { z } from "zod"
import { Log, Storage } from "./sdk/plugin-api.ts"

export interface Account {
  readonly id: string
  readonly name: string
  /** The CLI's configuration directory (`~` allowed); absent: the login default. */
  readonly configDir?: string
  /** Extra variables for the child (e.g. ANTHROPIC_BASE_URL for a proxy account). */
  readonly env?: Readonly<Record<string, string>>
}

export const DEFAULT_ACCOUNT: Account = { id: "claude", name: "Claude Code" }

export const INSTANCES_KEY = "instances"

/** Variables an account may not set: HOME moves the keychain, the config dir is `configDir`'s job. */
export const FORBIDDEN_ENV = ["HOME", "CLAUDE_CONFIG_DIR"] as const

/** Lenient: unknown fields pass, so a newer host's extra keys survive a round trip. */
export const AccountSchema = z.looseObject({
  id: z
    .string()
    .min(1)
    .regex(/^[A-Za-z0-9._-]+$/, "id may hold only letters, digits, '.', '_' and '-'"),
  name: z.string().optional(),
  configDir: z.string().min(1).optional(),
  env: z.record(z.string(), z.string()).optional(),
})

/** The agent id an account registers under. */
export const agentIdFor = (account: Account): string =>
  account.id === DEFAULT_ACCOUNT.id ? DEFAULT_ACCOUNT.id : `claude:${account.id}`

/** Check one stored entry; the failure is one line a person can act on. */
export const validateAccount = (raw: unknown): Result.Result<Account, string> => {
  const parsed = AccountSchema.safeParse(raw)
  if (!parsed.success) {
    const id = typeof (raw as { id?: unknown })?.id === "string" ? (raw as { id: string }).id : "?"
    const issue = parsed.error.issues[0]
    return Result.fail(
      `account "${id}" is invalid: ${issue ? `${issue.path.join(".") || "entry"}: ${issue.message}` : "bad entry"}`,
    )
  }
  const entry = parsed.data
  if (entry.id === DEFAULT_ACCOUNT.id)
    return Result.fail(`account "${entry.id}" is refused: the id "claude" is the default account's`)
  const forbidden = FORBIDDEN_ENV.filter((name) => entry.env && Object.hasOwn(entry.env, name))
  if (forbidden.length > 0)
    return Result.fail(
      `account "${entry.id}" is refused: its env may not set ${forbidden.join(" or ")} ` +
        `(HOME is never overridden; use "configDir" for the configuration directory)`,
    )
  return Result.succeed({
    id: entry.id,
    name: entry.name && entry.name.trim() !== "" ? entry.name : `Claude Code (${entry.id})`,
    ...(entry.configDir !== undefined && { configDir: entry.configDir }),
    ...(entry.env !== undefined && { env: entry.env }),
  })
}

/**
 * The stored accounts (not the default one). Bad entries and repeated ids are
 * logged and skipped, so one typo never hides the others.
 */
export const loadAccounts: Effect.Effect<Account[], never, Storage | Log> = Effect.gen(function* () {
  const storage = yield* Storage
  const log = yield* Log
  const stored = yield* storage.get(INSTANCES_KEY)
  if (stored === undefined || stored === null) return []
  if (!Array.isArray(stored)) {
    yield* log.error(`storage "${INSTANCES_KEY}" is not a list of accounts; no extra accounts loaded`)
    return []
  }
  const accounts: Account[] = []
  const seen = new Set<string>()
  for (const raw of stored) {
    const result = validateAccount(raw)
    if (Result.isFailure(result)) {
      yield* log.error(result.failure)
      continue
    }
    const account = result.success
    if (seen.has(account.id)) {
      yield* log.error(`account "${account.id}" is listed twice; the first entry is used`)
      continue
    }
    seen.add(account.id)
    accounts.push(account)
  }
  return accounts
})

/** Store the accounts (the default account is never stored). */
export const saveAccounts = (accounts: ReadonlyArray<Account>): Effect.Effect<void, never, Storage> =>
  Effect.gen(function* () {
    const storage = yield* Storage
    yield* storage.set(
      INSTANCES_KEY,
      accounts
        .filter((a) => a.id !== DEFAULT_ACCOUNT.id)
        .map((a) => ({
          id: a.id,
          name: a.name,
          ...(a.configDir !== undefined && { configDir: a.configDir }),
          ...(a.env !== undefined && { env: { ...a.env } }),
        })),
    )
  })

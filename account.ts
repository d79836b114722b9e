/**
 * The account's sign-in state (`claude auth status --json` in the account's
 * exact environment), sign in and out, and maintenance: the CLI's version,
 * who installed it, the published version, and the update.
 */
import { Data, Effect, type Scope, Stream } from "effect"
import { configDirFor, childEnv } from "./config.ts"
import type { Account } from "./instances.ts"
import { type Env, Fs, Process, type ProcessExit, type RunResult } from "./sdk/plugin-api.ts"
import type { AgentStatus, Maintenance } from "./sdk/protocol.ts"
import { trimmed } from "./values.ts"

/** A sign-in, sign-out or update that did not happen; `message` is one line for the user. */
export class AccountError extends Data.TaggedError("AccountError")<{ readonly message: string }> {}

const PACKAGE = "@anthropic-ai/claude-code"

const firstLine = (text: string) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l !== "") ?? ""

const runFailed = (cause: { readonly message: string }): RunResult => ({
  code: null,
  stdout: "",
  stderr: cause.message,
})

// ---------------------------------------------------------------------------
// Sign-in state

export interface AuthStatus {
  readonly status: AgentStatus
  /** Why it is not Ready, or what to do (AgentInfo.statusMessage). */
  readonly message?: string
  /** Signed-in address and plan (AgentInfo.description). */
  readonly description?: string
  /** The CLI's answer as printed (parsed JSON, or the raw text when it was not an object). */
  readonly raw?: unknown
}

const PLAN_NAMES: Readonly<Record<string, string>> = {
  pro: "Claude Pro",
  max: "Claude Max",
  max_5x: "Claude Max 5x",
  max_20x: "Claude Max 20x",
  team: "Claude Team",
  enterprise: "Claude Enterprise",
}

const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  bedrock: "Amazon Bedrock",
  vertex: "Google Vertex AI",
  foundry: "Microsoft Foundry",
  anthropicAws: "Anthropic on AWS",
  anthropicGoogleCloud: "Anthropic on Google Cloud",
  mantle: "Mantle",
  gateway: "Gateway",
}

/** "<email> · <plan>" for a claude.ai login, "API key" for a key, the provider for a cloud. */
export const describeLogin = (info: Readonly<Record<string, unknown>>): string | undefined => {
  const email = trimmed(info.email)
  const method = trimmed(info.authMethod)
  const provider = trimmed(info.apiProvider)
  const tier = trimmed(info.planTier)
  const sub = trimmed(info.subscriptionType)
  const plan =
    (tier && tier !== "other" && tier !== "max_other" ? PLAN_NAMES[tier] : undefined) ??
    (sub ? (PLAN_NAMES[sub] ?? `Claude ${sub.charAt(0).toUpperCase()}${sub.slice(1)}`) : undefined)
  const how =
    method === "claude.ai"
      ? plan
      : method === "api_key"
        ? "API key"
        : method === "oauth_token"
          ? "OAuth token"
          : provider && provider !== "firstParty"
            ? (PROVIDER_NAMES[provider] ?? provider)
            : undefined
  const parts = [email, how].filter((p): p is string => p !== undefined)
  return parts.length > 0 ? parts.join(" · ") : undefined
}

/**
 * Decide the status from what `claude auth status --json` printed. `ownDir`:
 * the account has a configuration directory of its own; the default one is
 * signed in with a plain `claude auth login` (naming it in CLAUDE_CONFIG_DIR
 * makes the CLI read a credentials file instead of the keychain).
 */
export const authStatusFrom = (result: RunResult, configDir: string, ownDir = true): AuthStatus => {
  const text = result.stdout.trim()
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    // Not an answer about the login at all: never read it as "signed out".
    const said = firstLine(text) || firstLine(result.stderr)
    return {
      status: "Unavailable",
      message:
        result.code === null && text === ""
          ? `Claude Code could not be run: ${said || "no output"}`
          : `\`claude auth status\` gave no account information${said ? `: ${said}` : ""}`,
      ...(text !== "" && { raw: text }),
    }
  }
  const info = parsed as Record<string, unknown>
  const dir = trimmed(info.configDirectory) ?? configDir
  if (info.loggedIn === true) {
    const description = describeLogin(info)
    return { status: "Ready", ...(description && { description }), raw: info }
  }
  if (info.loggedIn === false)
    return {
      status: "AuthRequired",
      message:
        ownDir || !dir.endsWith("/.claude")
          ? `Not signed in to Claude Code for ${dir}. Sign in, or run \`claude auth login\` with CLAUDE_CONFIG_DIR=${dir}.`
          : "Not signed in to Claude Code. Sign in, or run `claude auth login`.",
      raw: info,
    }
  return {
    status: "Unavailable",
    message: "`claude auth status` did not say whether you are signed in",
    raw: info,
  }
}

/** Run `claude auth status --json` exactly as a session of this account would run. */
export const authStatus = (account: Account): Effect.Effect<AuthStatus, never, Process | Env | Fs> =>
  Effect.gen(function* () {
    const process = yield* Process
    const fs = yield* Fs
    const configDir = yield* configDirFor(account)
    const result = yield* process
      .run("claude", ["auth", "status", "--json"], {
        env: childEnv(account, fs.paths.home),
        timeoutMs: 30_000,
      })
      .pipe(Effect.catch((e) => Effect.succeed(runFailed(e))))
    return authStatusFrom(result, configDir, account.configDir !== undefined)
  })

/**
 * `claude auth status --json` in the exact folder and environment of a
 * session (project settings there may pick another login), for the recovery
 * identity. A probe that cannot run or answers no object fails: nothing
 * cached stands in for it.
 */
export const authStatusIn = (
  account: Account,
  cwd: string,
): Effect.Effect<Readonly<Record<string, unknown>>, AccountError, Process | Fs> =>
  Effect.gen(function* () {
    const process = yield* Process
    const fs = yield* Fs
    const result = yield* process
      .run("claude", ["auth", "status", "--json"], {
        cwd,
        env: childEnv(account, fs.paths.home),
        timeoutMs: 30_000,
      })
      .pipe(
        Effect.mapError(
          (e) => new AccountError({ message: `\`claude auth status\` could not run: ${e.message}` }),
        ),
      )
    const parsed = yield* Effect.try({
      try: () => JSON.parse(result.stdout.trim()) as unknown,
      catch: () =>
        new AccountError({ message: `\`claude auth status\` printed no JSON (exit ${result.code})` }),
    })
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return yield* new AccountError({ message: "`claude auth status` printed no account object" })
    return parsed as Record<string, unknown>
  })

// ---------------------------------------------------------------------------
// Sign in and out

export interface SignIn {
  /** The page to open, when the CLI printed one. */
  readonly url?: string
  readonly message: string
  /** Completes when the login process ends (then probe authStatus again). */
  readonly done: Effect.Effect<ProcessExit>
}

const URL_PATTERN = /https:\/\/\S+/

/**
 * Start `claude auth login` in the account's environment and return the
 * sign-in page it prints. The process keeps waiting for the browser in the
 * caller's scope; `done` says when it ended.
 */
export const signIn = (
  account: Account,
  waitForUrlMs = 30_000,
): Effect.Effect<SignIn, AccountError, Process | Fs | Scope.Scope> =>
  Effect.gen(function* () {
    const process = yield* Process
    const fs = yield* Fs
    const handle = yield* process
      .spawn("claude", ["auth", "login"], { env: childEnv(account, fs.paths.home) })
      .pipe(
        Effect.mapError(
          (e) => new AccountError({ message: `Could not start \`claude auth login\`: ${e.message}` }),
        ),
      )
    const url = yield* handle.stdout.pipe(
      Stream.decodeText(),
      Stream.splitLines,
      Stream.map((line) => URL_PATTERN.exec(line)?.[0]),
      Stream.filter((u): u is string => u !== undefined),
      Stream.runHead,
      Effect.timeoutOrElse({ duration: waitForUrlMs, orElse: () => Effect.succeedNone }),
    )
    if (url._tag === "Some")
      return {
        url: url.value,
        message: "Open the page to sign in to Claude Code.",
        done: handle.exit,
      }
    const exit = yield* handle.exit.pipe(
      Effect.timeoutOrElse({ duration: 1000, orElse: () => Effect.succeed(null) }),
    )
    if (exit?.code === 0) return { message: "Signed in to Claude Code.", done: Effect.succeed(exit) }
    yield* handle.kill()
    return yield* new AccountError({ message: "`claude auth login` did not print a sign-in page" })
  })

/** `claude auth logout` in the account's environment. */
export const signOut = (account: Account): Effect.Effect<void, AccountError, Process | Fs> =>
  Effect.gen(function* () {
    const process = yield* Process
    const fs = yield* Fs
    const result = yield* process
      .run("claude", ["auth", "logout"], { env: childEnv(account, fs.paths.home), timeoutMs: 30_000 })
      .pipe(Effect.mapError((e) => new AccountError({ message: `Could not sign out: ${e.message}` })))
    if (result.code !== 0)
      return yield* new AccountError({
        message: `Could not sign out: ${firstLine(result.stderr) || firstLine(result.stdout) || `exit ${result.code}`}`,
      })
  })

// ---------------------------------------------------------------------------
// Maintenance

export type Installer = { readonly manager: "native" } | { readonly manager: "npm"; readonly prefix: string }

const NPM_PACKAGE_DIR = /^(.*)\/lib\/node_modules\/@anthropic-ai\/claude-code(?:\/|$)/

/**
 * Who installed the binary at `path` (a resolved real path), when that can
 * be shown: the native installer's folders, or a global npm prefix with no
 * `node_modules` above it (a project checkout is not a global install).
 */
export const installerOf = (path: string): Installer | undefined => {
  if (path.endsWith("/.local/bin/claude") || path.includes("/.local/share/claude/"))
    return { manager: "native" }
  const npm = NPM_PACKAGE_DIR.exec(path)
  if (npm && npm[1] !== undefined && npm[1] !== "" && !npm[1].split("/").includes("node_modules"))
    return { manager: "npm", prefix: npm[1] }
  return undefined
}

/** "2.1.332 (Claude Code)" → "2.1.332". */
export const parseVersion = (text: string): string | undefined => /\d+\.\d+\.\d+[^\s()]*/.exec(text)?.[0]

/** Numeric x.y.z comparison; a pre-release suffix is ignored. */
export const isNewer = (candidate: string, current: string): boolean => {
  const parts = (v: string) => v.split(/[.-]/).slice(0, 3).map(Number)
  const a = parts(candidate)
  const b = parts(current)
  for (let i = 0; i < 3; i++) {
    const x = a[i] ?? 0
    const y = b[i] ?? 0
    if (Number.isNaN(x) || Number.isNaN(y)) return false
    if (x !== y) return x > y
  }
  return false
}

const run = (
  command: string,
  args: ReadonlyArray<string>,
  timeoutMs: number,
): Effect.Effect<RunResult, never, Process> =>
  Process.use((p) =>
    p.run(command, args, { timeoutMs }).pipe(Effect.catch((e) => Effect.succeed(runFailed(e)))),
  )

/** The published version, asked through npm (the owning prefix, when known). */
const publishedVersion = (prefix: string | undefined) =>
  Effect.gen(function* () {
    const args = ["view", PACKAGE, "version", ...(prefix ? ["--prefix", prefix] : [])]
    const result = yield* run("npm", args, 60_000)
    return result.code === 0 ? parseVersion(result.stdout) : undefined
  })

/**
 * Does the global npm at `prefix` hold the package? `undefined` when npm ran
 * and gave no answer to read; false when npm cannot run at all (then it
 * installed nothing).
 */
const npmHolds = (prefix: string) =>
  Effect.gen(function* () {
    const listed = yield* run("npm", ["ls", "-g", "--json", "--depth=0", "--prefix", prefix, PACKAGE], 30_000)
    if (listed.code === null) return false
    let answer: unknown
    try {
      answer = JSON.parse(listed.stdout)
    } catch {
      return undefined
    }
    if (typeof answer !== "object" || answer === null) return undefined
    const dependencies = (answer as { dependencies?: unknown }).dependencies
    return typeof dependencies === "object" && dependencies !== null && PACKAGE in dependencies
  })

/**
 * Where `which` found `claude` and who owns it. Without a readable real
 * path (a link out of the grants), `<prefix>/bin/claude` counts as npm's
 * only when that prefix's global npm lists the package; `~/.local/bin/claude`
 * is the native installer's link, or npm's with `prefix=~/.local`, so it is
 * native only once that npm says it does not hold the package.
 */
const locate = Effect.gen(function* () {
  const process = yield* Process
  const fs = yield* Fs
  const found = yield* process.which("claude").pipe(Effect.catch(() => Effect.succeed(null)))
  if (found === null) return { path: undefined, installer: undefined }
  const real = yield* fs.realpath(found)
  const path = real ?? found
  const installer = installerOf(path)
  // The native shape of an unresolved link is npm's too (`prefix=~/.local`): asked below.
  if (installer && (real !== null || installer.manager === "npm")) return { path, installer }
  const prefix = /^(.*)\/bin\/claude$/.exec(found)?.[1]
  if (real !== null || !prefix || prefix.split("/").includes("node_modules"))
    return { path, installer: undefined }
  const held = yield* npmHolds(prefix)
  if (held === true) return { path, installer: { manager: "npm", prefix } as Installer }
  if (held === false && installerOf(found)?.manager === "native")
    return { path, installer: { manager: "native" } as Installer }
  return { path, installer: undefined }
})

/** `AgentInfo.maintenance`: version, owner, published version; `can_update` only for a proven owner. */
export const maintenance = (): Effect.Effect<Maintenance, never, Process | Fs> =>
  Effect.gen(function* () {
    const versionRun = yield* run("claude", ["--version"], 30_000)
    const version = versionRun.code === 0 ? parseVersion(versionRun.stdout) : undefined
    const { path, installer } = yield* locate
    // Nobody proven to own the install: ask nothing, offer nothing.
    const latest = installer
      ? yield* publishedVersion(installer.manager === "npm" ? installer.prefix : undefined)
      : undefined
    return {
      ...(version && { version }),
      ...(installer && { manager: installer.manager }),
      ...(latest && { latest }),
      can_update: installer !== undefined,
      ...(path && { path }),
    }
  })

/** Run the owner's update: `claude update`, or npm's global install at the owning prefix. */
export const update = (): Effect.Effect<{ version?: string; message: string }, AccountError, Process | Fs> =>
  Effect.gen(function* () {
    const { installer } = yield* locate
    if (!installer)
      return yield* new AccountError({
        message:
          "Claude Code was not installed by its native installer or a global npm, so it is not updated here",
      })
    const result =
      installer.manager === "native"
        ? yield* run("claude", ["update"], 600_000)
        : yield* run("npm", ["install", "-g", "--prefix", installer.prefix, `${PACKAGE}@latest`], 600_000)
    if (result.code !== 0)
      return yield* new AccountError({
        message: `Update failed: ${firstLine(result.stderr) || firstLine(result.stdout) || `exit ${result.code}`}`,
      })
    const after = yield* run("claude", ["--version"], 30_000)
    const version = after.code === 0 ? parseVersion(after.stdout) : undefined
    return {
      ...(version && { version }),
      message: version ? `Claude Code ${version}` : "Claude Code updated",
    }
  })

/**
 * Recovery identity: whose quota a session runs on, decided only from
 * agreeing evidence. Pure: the facts come from the process's own
 * `initialize` answer (`account`) and `claude auth status --json` run in the
 * same folder and environment (account.ts `authStatusIn`).
 *
 * Rules (product notes "Recovery identity"; shapes seen on CLI 2.1.332):
 * - only a first-party claude.ai login is identified: the native account's
 *   email and organization, the auth status's `authMethod: "claude.ai"`,
 *   `orgId`, matching email (and organization name), and the effective
 *   configuration directory the account is known by;
 * - an API key (`apiKeySource`), an external token (`tokenSource` such as
 *   `ANTHROPIC_AUTH_TOKEN`, `authMethod: "oauth_token"`), a cloud provider,
 *   missing or conflicting evidence, custom CLI flags or setting sources stay
 *   unidentified, each with the reason;
 * - the key names all of it, so equal keys mean the same login in the same
 *   configuration, not a shared billing pool.
 */
import type { RecoveryIdentity } from "../sdk/protocol.ts"
import { isObject, trimmed } from "../values.ts"

export interface IdentityEvidence {
  /** The session process's `initialize` answer `account` (native). */
  readonly native: unknown
  /** What `claude auth status --json` printed, parsed. */
  readonly auth: unknown
  /** The account's effective configuration directory. */
  readonly configDir: string
  /** CLAUDE_EXTRA_ARGS given: the launch is not the one the evidence describes. */
  readonly customFlags: boolean
  /** CLAUDE_SETTING_SOURCES given: settings (an apiKeyHelper, env) may differ from the probe's. */
  readonly settingSources: boolean
}

const no = (reason: string): RecoveryIdentity => ({ identified: false, reason })

const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase()

const withoutSlash = (path: string) => path.replace(/\/+$/, "")

export const pairIdentity = (evidence: IdentityEvidence): RecoveryIdentity => {
  if (evidence.customFlags) return no("custom CLI flags (CLAUDE_EXTRA_ARGS) may change the account")
  if (evidence.settingSources)
    return no("custom setting sources (CLAUDE_SETTING_SOURCES) may change the account")
  if (!isObject(evidence.native)) return no("the session reported no account")
  if (!isObject(evidence.auth)) return no("`claude auth status` reported no account")
  const native = evidence.native
  const auth = evidence.auth
  const apiKeySource = trimmed(native.apiKeySource) ?? trimmed(auth.apiKeySource)
  if (apiKeySource && apiKeySource !== "none")
    return no(`an API key (${apiKeySource}) pays, not a claude.ai login`)
  const tokenSource = trimmed(native.tokenSource)
  if (tokenSource && tokenSource !== "none" && tokenSource !== "claude.ai")
    return no(`an external token (${tokenSource}) pays, not a claude.ai login`)
  for (const provider of [trimmed(native.apiProvider), trimmed(auth.apiProvider)])
    if (provider && provider !== "firstParty") return no(`the provider is ${provider}, not first-party`)
  const method = trimmed(auth.authMethod)
  if (auth.loggedIn !== true || method !== "claude.ai")
    return no(`the sign-in is ${method ?? "unknown"}, not a claude.ai login`)
  const email = trimmed(native.email)
  const organization = trimmed(native.organization)
  const orgId = trimmed(auth.orgId)
  const authEmail = trimmed(auth.email)
  const dir = trimmed(auth.configDirectory)
  if (!email || !organization) return no("the session's account has no email or organization")
  if (!orgId || !authEmail || !dir)
    return no("`claude auth status` has no organization id, email or configuration directory")
  if (!same(email, authEmail))
    return no("the session's account and `claude auth status` name different emails")
  const orgName = trimmed(auth.orgName)
  if (orgName && orgName !== organization)
    return no("the session's account and `claude auth status` name different organizations")
  if (withoutSlash(dir) !== withoutSlash(evidence.configDir))
    return no(`\`claude auth status\` answered for ${dir}, not ${evidence.configDir}`)
  return {
    identified: true,
    key: `claude.ai:${orgId}:${email.toLowerCase()}:${withoutSlash(dir)}`,
    email,
    organization_id: orgId,
    config_dir: withoutSlash(dir),
  }
}

/**
 * Recovery identity over the shapes CLI 2.1.332 reports: the `initialize`
 * answer's `account` (testdata/ recordings for an API key and a gateway
 * token; an offline claude.ai login seen live, NOTES.md) and
 * `claude auth status --json`.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { pairIdentity } from "./identity.ts"

const initAccount = (scenario: string): unknown =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, "..", "testdata", scenario, "stdout.jsonl"), "utf8").split(
      "\n",
    )[0] ?? "",
  ).response.response.account

const DIR = "/home/dev/.claude"
// Seen live with an offline claude.ai login (credentials file + oauthAccount).
const claudeAi = {
  email: "dev@example.com",
  organization: "Example Org",
  subscriptionType: "Claude Max",
  apiProvider: "firstParty",
}
const authClaudeAi = {
  loggedIn: true,
  authMethod: "claude.ai",
  apiProvider: "firstParty",
  configDirectory: DIR,
  email: "dev@example.com",
  orgId: "22222222-2222-4222-8222-222222222222",
  orgName: "Example Org",
  subscriptionType: "max",
}
const authApiKey = {
  loggedIn: true,
  authMethod: "api_key",
  apiProvider: "firstParty",
  configDirectory: DIR,
  apiKeySource: "ANTHROPIC_API_KEY",
}
const authToken = {
  loggedIn: true,
  authMethod: "oauth_token",
  apiProvider: "firstParty",
  configDirectory: DIR,
}
const base = { configDir: DIR, customFlags: false, settingSources: false }

describe("recovery identity", () => {
  it("agreeing first-party claude.ai evidence is identified, keyed by organization, email and directory", () => {
    expect(pairIdentity({ ...base, native: claudeAi, auth: authClaudeAi })).toEqual({
      identified: true,
      key: `claude.ai:${authClaudeAi.orgId}:dev@example.com:${DIR}`,
      email: "dev@example.com",
      organization_id: authClaudeAi.orgId,
      config_dir: DIR,
    })
  })

  it("an API key stays unidentified (text_thinking's account)", () => {
    const native = initAccount("text_thinking")
    expect(native).toMatchObject({ apiKeySource: "ANTHROPIC_API_KEY" })
    expect(pairIdentity({ ...base, native, auth: authApiKey })).toMatchObject({
      identified: false,
      reason: expect.stringContaining("API key"),
    })
  })

  it("an external token stays unidentified (rate_limit's gateway account)", () => {
    const native = initAccount("rate_limit")
    expect(native).toMatchObject({ tokenSource: "ANTHROPIC_AUTH_TOKEN" })
    expect(pairIdentity({ ...base, native, auth: authToken })).toMatchObject({
      identified: false,
      reason: expect.stringContaining("external token"),
    })
    expect(pairIdentity({ ...base, native: claudeAi, auth: authToken })).toMatchObject({ identified: false })
  })

  it("conflicting or missing evidence stays unidentified", () => {
    const cases: Array<[unknown, unknown, string]> = [
      [{ ...claudeAi, email: "other@example.com" }, authClaudeAi, "different emails"],
      [{ ...claudeAi, organization: "Other Org" }, authClaudeAi, "different organizations"],
      [
        claudeAi,
        { ...authClaudeAi, configDirectory: "/elsewhere/.claude" },
        "answered for /elsewhere/.claude",
      ],
      [claudeAi, { ...authClaudeAi, orgId: undefined }, "no organization id"],
      [{ ...claudeAi, organization: undefined }, authClaudeAi, "no email or organization"],
      [{ ...claudeAi, apiProvider: "bedrock" }, authClaudeAi, "bedrock"],
      [undefined, authClaudeAi, "no account"],
      [claudeAi, { ...authClaudeAi, loggedIn: false }, "not a claude.ai login"],
    ]
    for (const [native, auth, reason] of cases)
      expect(pairIdentity({ ...base, native, auth })).toEqual({
        identified: false,
        reason: expect.stringContaining(reason),
      })
  })

  it("custom CLI flags or setting sources stay unidentified, even with agreeing evidence", () => {
    expect(pairIdentity({ ...base, customFlags: true, native: claudeAi, auth: authClaudeAi })).toMatchObject({
      identified: false,
      reason: expect.stringContaining("CLAUDE_EXTRA_ARGS"),
    })
    expect(
      pairIdentity({ ...base, settingSources: true, native: claudeAi, auth: authClaudeAi }),
    ).toMatchObject({ identified: false, reason: expect.stringContaining("CLAUDE_SETTING_SOURCES") })
  })
})

/**
 * The plugin's entry point: `activate(api)` registers one agent per account.
 * The default `claude` agent registers at once; the stored accounts follow
 * once storage answers (after the Rust plugin's `legacy/` folder, if any, was
 * read into storage).
 */
import { Effect } from "effect"
import { type AgentTuning, makeClaudeAgent } from "./agent.ts"
import { type Account, agentIdFor, DEFAULT_ACCOUNT, loadAccounts } from "./instances.ts"
import { importLegacy } from "./legacy.ts"
import { withBroker } from "./sdk/context.ts"
import type { PluginApi } from "./sdk/plugin-api.ts"

const provideAccount = (api: PluginApi, account: Account, tuning?: AgentTuning) => {
  const id = agentIdFor(account)
  return api.agents.provide(id, (host) =>
    makeClaudeAgent(api, host, { id, name: account.name, account }, tuning),
  )
}

export const activate = (api: PluginApi, tuning?: AgentTuning) =>
  Effect.gen(function* () {
    yield* provideAccount(api, DEFAULT_ACCOUNT, tuning)
    const accounts = yield* Effect.andThen(importLegacy, loadAccounts).pipe(withBroker(api))
    for (const account of accounts)
      if (account.id !== DEFAULT_ACCOUNT.id) yield* provideAccount(api, account, tuning)
  })

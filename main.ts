/**
 * The plugin's entry point: `activate(api)` registers one agent per account.
 * The default `claude` agent registers at once; the stored accounts follow
 * once storage answers (after the Rust plugin's `legacy/` folder, if any, was
 * read into storage). Every call of every agent waits for that import, so a
 * call the host makes before `activate` ends (an early resume) still finds
 * the imported session state: the order of the two does not matter.
 */
import { Effect } from "effect"
import { type AgentReady, type AgentTuning, makeClaudeAgent } from "./agent.ts"
import { type Account, agentIdFor, DEFAULT_ACCOUNT, loadAccounts } from "./instances.ts"
import { importLegacy } from "./legacy.ts"
import { withBroker } from "./sdk/context.ts"
import type { PluginApi } from "./sdk/plugin-api.ts"

const provideAccount = (api: PluginApi, account: Account, ready: AgentReady, tuning?: AgentTuning) => {
  const id = agentIdFor(account)
  return api.agents.provide(id, (host) =>
    makeClaudeAgent(api, host, { id, name: account.name, account }, tuning, ready),
  )
}

export const activate = (api: PluginApi, tuning?: AgentTuning) =>
  Effect.gen(function* () {
    // Run once, by whichever asks first: activate below or an agent's early call.
    const imported = yield* Effect.cached(importLegacy.pipe(withBroker(api)))
    yield* provideAccount(api, DEFAULT_ACCOUNT, imported, tuning)
    const accounts = yield* Effect.andThen(imported, loadAccounts.pipe(withBroker(api)))
    for (const account of accounts)
      if (account.id !== DEFAULT_ACCOUNT.id) yield* provideAccount(api, account, imported, tuning)
  })

/**
 * The plugin's entry point: `activate(api)` registers one agent per account.
 * The default `claude` agent registers at once; stored accounts follow once
 * storage answers (instances.ts).
 */
import { Effect } from "effect"
import type { PluginApi } from "./sdk/plugin-api.ts"
import { makeClaudeAgent } from "./agent.ts"

export const activate = (api: PluginApi) =>
  Effect.gen(function* () {
    yield* api.agents.provide("claude", (host) =>
      makeClaudeAgent(api, host, { id: "claude", name: "Claude Code" }),
    )
  })

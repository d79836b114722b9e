/**
 * The agent's info as the plugin would declare it with nothing probed yet:
 * models.json's models and the options the plugin builds from them (the
 * plugin's own functions and capabilities, so the two cannot drift). A first start in a
 * fresh data folder answers `session/new` and `session/load` from it while
 * the catalog probe runs (agent.ts's `knownInfo`); the probe's answer then
 * follows as a `config_option_update` where it differs.
 *
 * Rules it keeps:
 * - It is a guess, never a check: what needs the catalog (prompts, mode and
 *   option changes) still waits for the probe and is checked against it,
 *   and a probe that finds the account signed out fails those requests
 *   with auth_required.
 * - The approval mode's choices are the plugin's own, so the modes a
 *   session is answered with are the ones the live catalog has.
 */
import { CAPABILITIES } from "../../agent/capabilities.ts"
import { agentOptions } from "../../options.ts"
import { modelCatalog } from "../../models.ts"
import type { AgentInfo } from "../../sdk/protocol.ts"

export const builtInInfo = (agentId: string): AgentInfo => {
  const models = modelCatalog(undefined)
  return {
    id: agentId,
    name: "Claude Code",
    status: "Ready",
    models,
    options: agentOptions(models),
    capabilities: CAPABILITIES,
  }
}

/**
 * The agent protocol: what a host sees of an agent provider.
 *
 * A plugin registers providers (`api.agents.provide`); the host calls the
 * methods and listens to the events each provider emits. Every payload
 * here is plain data (JSON-safe), so a host may run the plugin in another
 * process or sandbox. Field names follow the host's own spelling: snake_case
 * for event and item payloads, camelCase for AgentInfo (as the host declares
 * it). Documented for plugin authors in docs/agent-protocol.md.
 *
 * The types live in sdk/protocol/, one file per concern; this module is the
 * one place importers name.
 */
export type * from "./protocol/events.ts"
export type * from "./protocol/info.ts"
export type * from "./protocol/methods.ts"
export type * from "./protocol/provider.ts"
export type * from "./protocol/shapes.ts"

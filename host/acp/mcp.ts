/**
 * The client's `mcpServers` → the CLI's `--mcp-config` JSON. The plugin reads
 * `CLAUDE_MCP_CONFIG` from the login environment at every launch (NOTES.md,
 * launch knobs), so the front end passes a session's servers by setting it,
 * next to the user's own value, before the session's process starts.
 *
 * Only `http` and `sse` servers pass: a `stdio` server is a command the
 * client names, and the CLI would start it outside the host's process grant.
 * Refused servers are named so the session can say so.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import { quote } from "shell-quote"

export interface McpConfig {
  /** One `--mcp-config` value, or undefined when no server passed. */
  readonly json: string | undefined
  readonly refused: ReadonlyArray<string>
}

export const mcpConfigOf = (servers: ReadonlyArray<acp.McpServer> | undefined): McpConfig => {
  const passed: Record<string, unknown> = {}
  const refused: string[] = []
  for (const server of servers ?? []) {
    if ("type" in server && (server.type === "http" || server.type === "sse")) {
      passed[server.name] = {
        type: server.type,
        url: server.url,
        ...(server.headers.length > 0 && {
          headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
        }),
      }
    } else refused.push(server.name)
  }
  return {
    json: Object.keys(passed).length > 0 ? JSON.stringify({ mcpServers: passed }) : undefined,
    refused,
  }
}

/**
 * Sets `CLAUDE_MCP_CONFIG` in a live login-environment record: the user's own
 * value, then this one as one more shell word.
 */
export const mcpEnvSetter = (env: Record<string, string | undefined>) => {
  const own = env.CLAUDE_MCP_CONFIG
  return (json: string | undefined): void => {
    const value = [own, json === undefined ? undefined : quote([json])].filter(
      (v) => v !== undefined && v !== "",
    )
    if (value.length > 0) env.CLAUDE_MCP_CONFIG = value.join(" ")
    else delete env.CLAUDE_MCP_CONFIG
  }
}

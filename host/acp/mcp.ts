/**
 * The client's `mcpServers` → the CLI's `--mcp-config` JSON. The plugin reads
 * `CLAUDE_MCP_CONFIG` from the login environment at every launch (NOTES.md,
 * launch knobs), so the front end passes a session's servers by setting it,
 * next to the user's own value, before the session's process starts.
 *
 * `stdio`, `http` and `sse` servers pass: the client is the user, and the
 * CLI already starts the commands `CLAUDE_MCP_CONFIG` names. A stdio server
 * that cannot start is the CLI's to report (the plugin names it in a
 * notice); a transport the CLI has no config for is refused and named.
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
    if (!("type" in server) || server.type === undefined || (server.type as string) === "stdio") {
      const stdio = server as acp.McpServerStdio
      passed[server.name] = {
        type: "stdio",
        command: stdio.command,
        args: stdio.args ?? [],
        ...(stdio.env?.length ? { env: Object.fromEntries(stdio.env.map((e) => [e.name, e.value])) } : {}),
      }
    } else if (server.type === "http" || server.type === "sse") {
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

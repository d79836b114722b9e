/**
 * MCP servers that failed to start: the CLI's `system/init` frame lists
 * every server with its status (`connected`, `failed`, `pending`; 2.1.332:
 * a stdio server whose command is missing or exits at once is `failed`).
 * The session goes on without their tools; the user hears once per process
 * which ones, so a missing tool is not a mystery.
 */
import type { Frame } from "../wire.ts"

/** The names of the servers an init frame reports as failed (none for any other frame). */
export const failedMcpServers = (frame: Frame): string[] => {
  const record = frame as { type?: unknown; subtype?: unknown; mcp_servers?: unknown }
  if (record.type !== "system" || record.subtype !== "init" || !Array.isArray(record.mcp_servers)) return []
  return record.mcp_servers.flatMap((server: unknown) => {
    const s = server as { name?: unknown; status?: unknown } | null
    return s && typeof s.name === "string" && s.status === "failed" ? [s.name] : []
  })
}

export const mcpFailureText = (names: ReadonlyArray<string>): string =>
  `MCP server${names.length > 1 ? "s" : ""} ${names.join(", ")} could not start; the session goes on without ${names.length > 1 ? "their" : "its"} tools (check the command and its arguments)`

/**
 * An MCP server that lives inside the plugin and talks to the CLI over the
 * control channel (`mcp_message` control requests), so the host's plugin
 * tools reach the model without a socket or a child process.
 *
 * `handleMcp` answers one JSON-RPC message. `tools/call` runs the host's tool
 * and may take long: the caller runs each call on its own fiber so the
 * control reader never waits for a tool.
 */
import { Effect } from "effect"
import type { PluginTool } from "./protocol.ts"
import type { ToolResult } from "./plugin-api.ts"

export const MCP_PROTOCOL_VERSION = "2025-11-25"

export interface JsonRpcMessage {
  readonly jsonrpc?: string
  readonly id?: string | number | null
  readonly method?: string
  readonly params?: Record<string, unknown>
}

export interface McpServerSpec {
  readonly name: string
  readonly version: string
  readonly tools: ReadonlyArray<PluginTool>
  readonly callTool: (name: string, input: unknown) => Effect.Effect<ToolResult, { readonly message: string }>
}

/** The answer the CLI expects for a notification (it has no id to answer). */
export const NOTIFICATION_ACK = { jsonrpc: "2.0", result: {}, id: 0 } as const

const result = (id: JsonRpcMessage["id"], value: unknown) => ({ jsonrpc: "2.0", id: id ?? 0, result: value })
const failure = (id: JsonRpcMessage["id"], code: number, message: string) => ({
  jsonrpc: "2.0",
  id: id ?? 0,
  error: { code, message },
})

export const isNotification = (message: JsonRpcMessage): boolean =>
  message.id === undefined || message.id === null || (message.method?.startsWith("notifications/") ?? false)

/** Answer one JSON-RPC message for `spec`. Never fails: errors become JSON-RPC errors. */
export const handleMcp = (spec: McpServerSpec, message: JsonRpcMessage): Effect.Effect<unknown> => {
  if (isNotification(message)) return Effect.succeed(NOTIFICATION_ACK)
  switch (message.method) {
    case "initialize":
      return Effect.succeed(
        result(message.id, {
          protocolVersion: String(message.params?.protocolVersion ?? MCP_PROTOCOL_VERSION),
          capabilities: { tools: {} },
          serverInfo: { name: spec.name, version: spec.version },
        }),
      )
    case "ping":
      return Effect.succeed(result(message.id, {}))
    case "tools/list":
      return Effect.succeed(
        result(message.id, {
          tools: spec.tools.map((tool) => ({
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          })),
        }),
      )
    case "tools/call": {
      const name = String(message.params?.name ?? "")
      if (!spec.tools.some((tool) => tool.name === name))
        return Effect.succeed(failure(message.id, -32602, `Unknown tool: ${name}`))
      return spec.callTool(name, message.params?.arguments ?? {}).pipe(
        Effect.map((value) =>
          result(message.id, { content: value.content, isError: value.isError ?? false }),
        ),
        Effect.catch((error) =>
          Effect.succeed(
            result(message.id, { content: [{ type: "text", text: error.message }], isError: true }),
          ),
        ),
      )
    }
    default:
      return Effect.succeed(failure(message.id, -32601, `Method not found: ${message.method}`))
  }
}

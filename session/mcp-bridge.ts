/**
 * The MCP bridge: the host's plugin tools served to the CLI as the SDK MCP
 * server `convergence`, one JSON-RPC message per `mcp_message` control
 * request (sdk/mcp.ts answers it). Each message is answered on its own
 * fiber, so a slow `tools/call` never holds the reader; the answer goes back
 * as `{ mcp_response }`.
 */
import { Effect } from "effect"
import { MCP_SERVER_NAME } from "./launch.ts"
import { handleMcp, type JsonRpcMessage, type McpServerSpec } from "../sdk/mcp.ts"
import { Host } from "../sdk/plugin-api.ts"
import type { PluginTool } from "../sdk/protocol.ts"
import { isObject } from "../values.ts"
import type { McpMessageRequest } from "../wire.ts"
import type { SessionContext } from "./context.ts"
import type { ControlChannel } from "./control.ts"

export interface McpBridge {
  /** Answer one `mcp_message` request of `channel`'s process, off the reader fiber. */
  readonly onMessage: (
    channel: ControlChannel,
    requestId: string,
    request: McpMessageRequest,
  ) => Effect.Effect<void>
}

/** The wire's JSON-RPC message as sdk/mcp.ts reads it. */
const jsonRpcOf = (message: McpMessageRequest["message"]): JsonRpcMessage => ({
  ...(message.jsonrpc != null ? { jsonrpc: message.jsonrpc } : {}),
  ...(message.id !== undefined ? { id: message.id } : {}),
  ...(message.method != null ? { method: message.method } : {}),
  ...(isObject(message.params) ? { params: message.params } : {}),
})

/** `tools`: the tools of the process now running (a resume may give the next one others). */
export const makeMcpBridge = (
  ctx: SessionContext,
  tools: () => ReadonlyArray<PluginTool>,
): Effect.Effect<McpBridge, never, Host> =>
  Effect.gen(function* () {
    const host = yield* Host
    const spec = (): McpServerSpec => ({
      name: MCP_SERVER_NAME,
      version: "0.2.0",
      tools: tools(),
      callTool: (name, input) => host.callTool(ctx.sid, name, input),
    })
    return {
      onMessage: (channel, requestId, request) =>
        ctx
          .fork(
            handleMcp(spec(), jsonRpcOf(request.message)).pipe(
              Effect.flatMap((answer) => channel.respond(requestId, { mcp_response: answer })),
            ),
          )
          .pipe(Effect.asVoid),
    }
  })

/**
 * The host's plugin tools: what the host offers a session (`SessionParams.tools`)
 * and runs when the plugin relays a model's call (`api.host.callTool`).
 */
import { Cause, Effect } from "effect"
import { BrokerFailure, type ToolResult } from "../../sdk/plugin-api.ts"
import type { PluginTool } from "../../sdk/protocol.ts"

export interface ToolSpec {
  readonly description: string
  /** JSON Schema of the input. */
  readonly inputSchema: Readonly<Record<string, unknown>>
}

export interface ToolCallContext {
  readonly sessionId: string
}

export type ToolHandler = (
  input: unknown,
  context: ToolCallContext,
) => ToolResult | Promise<ToolResult> | Effect.Effect<ToolResult, unknown>

export interface ToolTable {
  /** Add (or replace) a tool; returns its removal. */
  readonly register: (name: string, spec: ToolSpec, handler: ToolHandler) => () => void
  /** What to pass as `tools` to create/resume/fork_session. */
  readonly list: () => ReadonlyArray<PluginTool>
  /** An unknown tool fails; a handler that throws answers an error result for the model. */
  readonly call: (sessionId: string, name: string, input: unknown) => Effect.Effect<ToolResult, BrokerFailure>
}

const errorResult = (text: string): ToolResult => ({ content: [{ type: "text", text }], isError: true })

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

export const makeToolTable = (): ToolTable => {
  const tools = new Map<string, { readonly spec: ToolSpec; readonly handler: ToolHandler }>()
  return {
    register: (name, spec, handler) => {
      const entry = { spec, handler }
      tools.set(name, entry)
      return () => {
        if (tools.get(name) === entry) tools.delete(name)
      }
    },
    list: () =>
      [...tools].map(([name, { spec }]) => ({
        name,
        description: spec.description,
        inputSchema: spec.inputSchema,
      })),
    call: (sessionId, name, input) => {
      const tool = tools.get(name)
      if (!tool)
        return Effect.fail(
          new BrokerFailure({ operation: "tools.call", detail: `the host has no tool ${name}` }),
        )
      return Effect.suspend(() => {
        const out = tool.handler(input, { sessionId })
        return Effect.isEffect(out)
          ? (out as Effect.Effect<ToolResult, unknown>)
          : Effect.tryPromise({ try: async () => out, catch: (e) => e })
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.succeed(errorResult(`${name} failed: ${describe(Cause.squash(cause))}`)),
        ),
      )
    },
  }
}

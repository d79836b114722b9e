// A stdio MCP server for the ACP e2e tests: one tool, `echo`, that answers
// "echo: <text>" (and the value of MCP_ECHO_TAG when set, so a test sees
// which environment the client passed). Newline-delimited JSON-RPC, the MCP
// stdio transport; plain Node, no dependencies.
import { createInterface } from "node:readline"

const send = (message) => process.stdout.write(`${JSON.stringify(message)}\n`)
const tag = process.env.MCP_ECHO_TAG ?? ""

createInterface({ input: process.stdin }).on("line", (line) => {
  let message
  try {
    message = JSON.parse(line)
  } catch {
    return
  }
  const { id, method, params } = message
  if (id === undefined) return
  if (method === "initialize")
    send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "echo", version: "1.0.0" },
      },
    })
  else if (method === "tools/list")
    send({
      jsonrpc: "2.0",
      id,
      result: {
        tools: [
          {
            name: "echo",
            description: "Echo the text back",
            inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          },
        ],
      },
    })
  else if (method === "tools/call")
    send({
      jsonrpc: "2.0",
      id,
      result: {
        content: [{ type: "text", text: `echo: ${params?.arguments?.text ?? ""}${tag ? ` [${tag}]` : ""}` }],
      },
    })
  else send({ jsonrpc: "2.0", id, error: { code: -32601, message: `no method ${method}` } })
})

/**
 * A recording ACP client for tests, on the SDK's own client side: it keeps
 * every `session/update`, answers `session/request_permission` and
 * `elicitation/create` through replaceable policies (and records them), and
 * connects either in-process to an AgentApp or over a child's stdio.
 */
import type { ChildProcess } from "node:child_process"
import { Readable, Writable } from "node:stream"
import * as acp from "@agentclientprotocol/sdk/unstable"

export interface Recorded {
  readonly sessionId: string
  readonly update: acp.SessionUpdate
}

export interface TestClient {
  readonly agent: acp.ClientContext
  readonly connection: acp.ClientConnection
  readonly updates: Recorded[]
  readonly permissions: acp.RequestPermissionRequest[]
  readonly elicitations: acp.CreateElicitationRequest[]
  /** How the next permission requests are answered (default: the first allow option). */
  onPermission: (
    request: acp.RequestPermissionRequest,
    signal: AbortSignal,
  ) => Promise<acp.RequestPermissionResponse>
  onElicitation: (request: acp.CreateElicitationRequest) => Promise<acp.CreateElicitationResponse>
  /** Updates of one session (optionally of one kind). */
  readonly of: <K extends acp.SessionUpdate["sessionUpdate"]>(
    sessionId: string,
    kind?: K,
  ) => Array<Extract<acp.SessionUpdate, { sessionUpdate: K }>>
  /** The first recorded or later update matching `match`. */
  readonly waitFor: (match: (r: Recorded) => boolean, timeoutMs?: number) => Promise<Recorded>
  readonly text: (sessionId: string, kind?: "agent_message_chunk" | "agent_thought_chunk") => string
  readonly close: () => void
}

export const allowFirst = async (
  request: acp.RequestPermissionRequest,
): Promise<acp.RequestPermissionResponse> => {
  const option = request.options.find((o) => o.kind === "allow_once") ?? request.options[0]!
  return { outcome: { outcome: "selected", optionId: option.optionId } }
}

export const choose =
  (kind: acp.PermissionOptionKind) =>
  async (request: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> => {
    const option = request.options.find((o) => o.kind === kind)
    return option
      ? { outcome: { outcome: "selected", optionId: option.optionId } }
      : { outcome: { outcome: "cancelled" } }
  }

export const makeTestClient = (target: acp.AgentApp | acp.Stream): TestClient => {
  const updates: Recorded[] = []
  const permissions: acp.RequestPermissionRequest[] = []
  const elicitations: acp.CreateElicitationRequest[] = []
  const waiters = new Set<{ match: (r: Recorded) => boolean; resolve: (r: Recorded) => void }>()
  const self: Partial<TestClient> & Pick<TestClient, "onPermission" | "onElicitation"> = {
    onPermission: allowFirst,
    onElicitation: async () => ({ action: "cancel" }),
  }
  const app = acp
    .client({ name: "test-client" })
    .onNotification("session/update", ({ params }) => {
      const recorded = { sessionId: params.sessionId, update: params.update }
      updates.push(recorded)
      for (const w of [...waiters])
        if (w.match(recorded)) {
          waiters.delete(w)
          w.resolve(recorded)
        }
    })
    .onRequest("session/request_permission", ({ params, signal }) => {
      permissions.push(params)
      return self.onPermission(params, signal)
    })
    .onRequest("elicitation/create", ({ params }) => {
      elicitations.push(params)
      return self.onElicitation(params)
    })
  const connection = "writable" in target ? app.connect(target) : app.connect(target)
  const of = ((sessionId: string, kind?: string) =>
    updates
      .filter((r) => r.sessionId === sessionId && (kind === undefined || r.update.sessionUpdate === kind))
      .map((r) => r.update)) as TestClient["of"]
  return Object.assign(self, {
    agent: connection.agent,
    connection,
    updates,
    permissions,
    elicitations,
    of,
    waitFor: (match: (r: Recorded) => boolean, timeoutMs = 30_000) =>
      new Promise<Recorded>((resolve, reject) => {
        const found = updates.find(match)
        if (found) return resolve(found)
        const timer = setTimeout(() => {
          waiters.delete(waiter)
          reject(new Error(`no matching session/update within ${timeoutMs} ms`))
        }, timeoutMs)
        const waiter = {
          match,
          resolve: (r: Recorded) => {
            clearTimeout(timer)
            resolve(r)
          },
        }
        waiters.add(waiter)
      }),
    text: (sessionId: string, kind: "agent_message_chunk" | "agent_thought_chunk" = "agent_message_chunk") =>
      of(sessionId, kind)
        .map((u) => (u.content.type === "text" ? u.content.text : ""))
        .join(""),
    close: () => connection.close(),
  }) as TestClient
}

/** The ACP stream over a child's stdio. */
export const childStream = (child: ChildProcess): acp.Stream =>
  acp.ndJsonStream(
    Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
    Readable.toWeb(child.stdout!) as ReadableStream<Uint8Array>,
  )

/** initialize with the capabilities a test client has (elicitation only when asked). */
export const initialize = (client: TestClient, options: { readonly elicitation?: boolean } = {}) =>
  client.agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      fs: { readTextFile: false, writeTextFile: false },
      terminal: false,
      ...(options.elicitation && { elicitation: { form: {} } }),
    },
    clientInfo: { name: "test-client", version: "0" },
  })

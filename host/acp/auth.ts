/**
 * `initialize`, `authenticate` and `logout`: what the agent is and can do,
 * and the account's sign-in. `initialize` never waits for the host or the
 * catalog probe (it answers from the catalog last seen).
 */
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { Catalog } from "./catalog.ts"
import { type AcpAgentOptions, type AcpContext, AUTH_METHODS, call } from "./context.ts"

/**
 * The sign-in methods, the terminal login as the client can run it: ACP's
 * terminal auth, else the legacy `_meta["terminal-auth"]` command (Zed's
 * older builds), else `authenticate` starts the login and answers its address.
 */
const authMethods = (
  caps: acp.ClientCapabilities,
  self: AcpAgentOptions["selfCommand"],
): acp.AuthMethod[] => [
  caps.auth?.terminal
    ? {
        type: "terminal" as const,
        id: AUTH_METHODS.login,
        name: "Log in to Claude",
        description: "Runs `claude auth login` in a terminal (a Claude subscription or Console account)",
        args: ["--login"],
      }
    : {
        id: AUTH_METHODS.login,
        name: "Log in to Claude",
        description: "Starts `claude auth login`; open the address it gives in a browser",
        ...(self &&
          (caps._meta as { "terminal-auth"?: unknown } | null | undefined)?.["terminal-auth"] === true && {
            _meta: {
              "terminal-auth": {
                command: self.command,
                args: [...self.args, "--login"],
                label: "Claude Login",
              },
            },
          }),
      },
  {
    id: AUTH_METHODS.apiKey,
    name: "Anthropic API key",
    description: "Set ANTHROPIC_API_KEY in the agent's environment (the editor's agent settings)",
  },
  {
    id: AUTH_METHODS.gateway,
    name: "Gateway or proxy account",
    description:
      "Set ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN in the agent's environment, or run it with --account <id>",
  },
]

export const onAccount = (
  app: acp.AgentApp,
  ctx: AcpContext,
  catalog: Catalog,
  setCaps: (caps: acp.ClientCapabilities) => void,
): acp.AgentApp =>
  app
    .onRequest("initialize", async ({ params }) => {
      const caps = params.clientCapabilities ?? {}
      setCaps(caps)
      // The catalog probe runs from the start (catalog.ts); initialize does not wait for it.
      const current = catalog.current()
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: {
          name: "convergence-claude",
          title: "Claude Code (convergence)",
          version: ctx.options.version ?? "0",
        },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: {
            image: current?.capabilities.images ?? true,
            embeddedContext: true,
            audio: false,
          },
          mcpCapabilities: { http: true, sse: true },
          sessionCapabilities: {
            list: {},
            resume: {},
            close: {},
            fork: {},
            delete: {},
            additionalDirectories: {},
            systemPrompt: { mode: { override: {} } },
          },
          auth: { logout: {} },
        },
        authMethods: authMethods(caps, ctx.options.selfCommand),
      }
    })
    .onRequest("authenticate", async ({ params }) => {
      if (params.methodId === AUTH_METHODS.login) {
        const started = await call("authenticate", () => ctx.host.call(ctx.agentId, "signIn"))
        ctx.log(`claude auth login: ${started.message}${started.url ? ` ${started.url}` : ""}`)
        catalog.forget()
        return {
          _meta: { claudeCode: { message: started.message, ...(started.url && { url: started.url }) } },
        }
      }
      if (params.methodId === AUTH_METHODS.apiKey || params.methodId === AUTH_METHODS.gateway) {
        catalog.forget()
        const current = await catalog.info()
        if (current.status !== "Ready")
          throw acp.RequestError.authRequired(
            {},
            params.methodId === AUTH_METHODS.apiKey
              ? "No usable ANTHROPIC_API_KEY in the agent's environment"
              : "No gateway (ANTHROPIC_BASE_URL and ANTHROPIC_AUTH_TOKEN) in the agent's environment",
          )
        return {}
      }
      throw acp.RequestError.invalidParams(
        { methodId: params.methodId },
        `unknown auth method ${params.methodId}`,
      )
    })
    .onRequest("logout", async () => {
      await call("logout", () => ctx.host.call(ctx.agentId, "signOut"))
      catalog.signedOut()
      return {}
    })

/**
 * The methods of a running session: `session/prompt`, `session/cancel`,
 * `session/set_mode` and `session/set_config_option`.
 *
 * Rules kept:
 * - Option values must be ones the agent declared, prompts carry only what
 *   the agent can send; a bad request is a JSON-RPC error and the session
 *   goes on.
 * - Every prompt gets one answer (session.ts); a failed run is an error
 *   carrying the CLI's message (its stderr tail); the provider resumes the
 *   conversation at the next prompt.
 */
import { randomUUID } from "node:crypto"
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { Catalog } from "./catalog.ts"
import { type AcpContext, call } from "./context.ts"
import { APPROVAL_OPTION, checkValue } from "./options.ts"
import { PromptRefused, promptParts } from "./prompt.ts"
import type { AcpSession, PromptEnd } from "./session.ts"
import type { Sessions } from "./sessions.ts"

const CLIENT_ERROR = "session/prompt failed"

/** The provider's stop reason when the CLI stopped at the session's `maxTurns`. */
const MAX_TURNS = "max_turns"

/** A run's stop reason: the provider's when it gives one ACP knows, else end_turn. */
export const stopReasonOf = (end: PromptEnd): acp.StopReason => {
  if (end.kind !== "ended" || end.cancelled || end.outcome === "Cancelled") return "cancelled"
  const reason = end.event.stop_reason
  if (reason === MAX_TURNS) return "max_turn_requests"
  if (reason === "max_tokens" || reason === "refusal" || reason === "max_turn_requests") return reason
  return "end_turn"
}

/** A run's usage in ACP's spelling. */
const usageOf = (end: PromptEnd): acp.Usage | undefined => {
  const usage = end.kind === "ended" ? end.event.usage : undefined
  if (!usage) return undefined
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens:
      usage.input_tokens +
      usage.output_tokens +
      (usage.cache_read_tokens ?? 0) +
      (usage.cache_write_tokens ?? 0),
    ...(usage.thinking_tokens !== undefined && { thoughtTokens: usage.thinking_tokens }),
    ...(usage.cache_read_tokens !== undefined && { cachedReadTokens: usage.cache_read_tokens }),
    ...(usage.cache_write_tokens !== undefined && { cachedWriteTokens: usage.cache_write_tokens }),
  }
}

/** `session/cancel`, or `$/cancel_request` on the prompt: the turn ends, answered `cancelled`. */
const cancel = (ctx: AcpContext, session: AcpSession) => {
  session.cancel(ctx.options.cancelGraceMs ?? 8_000)
  return ctx.host
    .call(ctx.agentId, "cancel", { sessionId: session.id })
    .catch((e: unknown) => ctx.log(`cancel: ${String(e)}`))
}

const prompt = async (
  ctx: AcpContext,
  sessions: Sessions,
  params: acp.PromptRequest,
  signal: AbortSignal,
) => {
  const session = sessions.need(params.sessionId)
  await session.ready
  let parts: ReturnType<typeof promptParts>
  try {
    parts = promptParts(params.prompt, session.skills)
  } catch (error) {
    if (error instanceof PromptRefused) throw acp.RequestError.invalidParams({}, error.message)
    throw error
  }
  if (parts.text.trim() === "" && parts.images.length === 0 && parts.skill === undefined)
    throw acp.RequestError.invalidParams({}, "the prompt is empty")
  const deliveryId = randomUUID()
  sessions.prompted(session.id)
  const accepted = await call(CLIENT_ERROR, () =>
    ctx.host.call(ctx.agentId, "prompt", {
      sessionId: session.id,
      deliveryId,
      text: parts.text,
      ...(parts.images.length > 0 && { images: parts.images }),
      ...(parts.skill !== undefined && { skill: parts.skill }),
    }),
  )
  const onAbort = () => void cancel(ctx, session)
  signal.addEventListener("abort", onAbort, { once: true })
  const end = await session
    .waitRun(accepted.run_id, deliveryId)
    .finally(() => signal.removeEventListener("abort", onAbort))
  await session.flushed()
  // A run stopped at its turn limit is a stop reason the client knows, not a failure.
  if (
    end.kind === "ended" &&
    end.outcome === "Failed" &&
    !end.cancelled &&
    end.event.stop_reason !== MAX_TURNS
  )
    throw acp.RequestError.internalError(
      { error: end.event.error },
      end.event.error ? `The run failed: ${end.event.error}` : "The run failed",
    )
  const usage = usageOf(end)
  return {
    stopReason: stopReasonOf(end),
    // What names this prompt in `_meta.claudeCode.inputDelivery` (updates.ts).
    _meta: { claudeCode: { deliveryId, ...(accepted.input_uuid && { inputUuid: accepted.input_uuid }) } },
    ...(usage && { usage }),
  }
}

const setConfigOption = async (
  ctx: AcpContext,
  catalog: Catalog,
  sessions: Sessions,
  params: acp.SetSessionConfigOptionRequest,
) => {
  const session = sessions.need(params.sessionId)
  await session.ready
  let current = await catalog.info()
  if (params.configId === APPROVAL_OPTION)
    throw acp.RequestError.invalidParams(
      { configId: params.configId },
      "the approval mode is set with session/set_mode",
    )
  let checked = checkValue(current, session.values, params.configId, params.value)
  // The agent's info may predate the session's start, whose CLI fills the catalog (its models
  // replace the plugin's built-in list): a value refused by it is checked once more, freshly asked.
  if ("error" in checked && current === catalog.live()) {
    catalog.forget()
    current = await catalog.info()
    checked = checkValue(current, session.values, params.configId, params.value)
  }
  if ("error" in checked)
    throw acp.RequestError.invalidParams({ configId: params.configId, value: params.value }, checked.error)
  const value = checked.value
  await call("session/set_config_option", () =>
    ctx.host.call(ctx.agentId, "setOption", { sessionId: session.id, optionId: params.configId, value }),
  )
  session.values = { ...session.values, [params.configId]: value }
  return { configOptions: catalog.configFor(session, current) }
}

export const onTurns = (
  app: acp.AgentApp,
  ctx: AcpContext,
  catalog: Catalog,
  sessions: Sessions,
): acp.AgentApp => {
  return app
    .onRequest("session/set_mode", async ({ params }) => {
      const session = sessions.need(params.sessionId)
      await session.ready
      const current = await catalog.info()
      const checked = checkValue(current, session.values, APPROVAL_OPTION, params.modeId)
      if ("error" in checked) throw acp.RequestError.invalidParams({ modeId: params.modeId }, checked.error)
      await call("session/set_mode", () =>
        ctx.host.call(ctx.agentId, "setOption", {
          sessionId: session.id,
          optionId: APPROVAL_OPTION,
          value: params.modeId,
        }),
      )
      const changed = session.values[APPROVAL_OPTION] !== params.modeId
      session.values = { ...session.values, [APPROVAL_OPTION]: params.modeId }
      if (changed) void session.notify({ sessionUpdate: "current_mode_update", currentModeId: params.modeId })
      return {}
    })
    .onRequest("session/set_config_option", ({ params }) => setConfigOption(ctx, catalog, sessions, params))
    .onRequest("session/prompt", ({ params, signal }) => prompt(ctx, sessions, params, signal))
    .onNotification("session/cancel", async ({ params }) => {
      const session = sessions.get(params.sessionId)
      if (session) await cancel(ctx, session)
    })
}

/**
 * What a client asks of a new, loaded, resumed or forked session beyond its
 * `cwd` and MCP servers, as claude-agent-acp reads it (acpx sends these):
 * - `_meta.claudeCode.options`: `model`, `allowedTools`, `maxTurns`,
 *   `additionalDirectories` (other keys are the SDK's and ignored);
 * - `_meta.systemPrompt`: a string replaces the system prompt, `{append}`
 *   appends to it; the spec's own `systemPrompt` (`append`/`override`, text
 *   blocks) wins over it;
 * - `additionalDirectories` (the spec's; absolute paths).
 * `_meta` keys this file does not name are ignored (the spec reserves
 * `_meta`). A malformed value is a JSON-RPC error naming the field, before
 * any session starts.
 */
import { isAbsolute } from "node:path"
import * as acp from "@agentclientprotocol/sdk/unstable"
import type { SessionLaunch } from "../../sdk/protocol.ts"

export interface ClientSessionOptions {
  /** A model the client chose (checked against the catalog by the caller). */
  readonly model?: string
  readonly launch?: SessionLaunch
}

interface SessionRequestFields {
  readonly _meta?: { readonly [key: string]: unknown } | null
  readonly additionalDirectories?: ReadonlyArray<string> | null
  readonly systemPrompt?: acp.SystemPrompt | null
}

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {}

const bad = (field: string, value: unknown, why: string) =>
  acp.RequestError.invalidParams({ [field]: value }, `${field} ${why}`)

const strings = (field: string, value: unknown): string[] | undefined => {
  if (value === undefined || value === null) return undefined
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string"))
    throw bad(field, value, "must be a list of strings")
  return value
}

/** The spec's system prompt: its text blocks, appended or replacing. */
const specPrompt = (prompt: acp.SystemPrompt): Pick<SessionLaunch, "systemPrompt" | "appendSystemPrompt"> => {
  const blocks = prompt.content ?? []
  if (!blocks.every((b) => b.type === "text"))
    throw bad("systemPrompt.content", prompt.content, "must hold only text blocks")
  const text = blocks.map((b) => (b as { text: string }).text).join("\n\n")
  if (prompt.mode === "override") return { systemPrompt: text }
  if (prompt.mode === "append") return { appendSystemPrompt: text }
  throw bad("systemPrompt.mode", prompt.mode, "must be append or override")
}

/** `_meta.systemPrompt`: a string replaces, `{ append }` appends. */
const metaPrompt = (value: unknown): Pick<SessionLaunch, "systemPrompt" | "appendSystemPrompt"> => {
  if (value === undefined || value === null) return {}
  if (typeof value === "string") return { systemPrompt: value }
  const append = record(value).append
  if (typeof append === "string") return { appendSystemPrompt: append }
  throw bad("_meta.systemPrompt", value, "must be a string (replace) or { append: string }")
}

export const clientSessionOptions = (params: SessionRequestFields): ClientSessionOptions => {
  const meta = record(params._meta)
  const options = record(record(meta.claudeCode).options)
  const model = options.model
  if (model !== undefined && (typeof model !== "string" || model.trim() === ""))
    throw bad("_meta.claudeCode.options.model", model, "must be a model name")
  const maxTurns = options.maxTurns
  if (maxTurns !== undefined && !(Number.isInteger(maxTurns) && (maxTurns as number) > 0))
    throw bad("_meta.claudeCode.options.maxTurns", maxTurns, "must be a positive whole number")
  const allowedTools = strings("_meta.claudeCode.options.allowedTools", options.allowedTools)
  const directories = [
    ...(strings("additionalDirectories", params.additionalDirectories) ?? []),
    ...(strings("_meta.claudeCode.options.additionalDirectories", options.additionalDirectories) ?? []),
  ]
  for (const dir of directories)
    if (!isAbsolute(dir)) throw bad("additionalDirectories", dir, `entries must be absolute paths: ${dir}`)
  const prompt = params.systemPrompt ? specPrompt(params.systemPrompt) : metaPrompt(meta.systemPrompt)
  const launch: SessionLaunch = {
    ...prompt,
    ...(allowedTools && allowedTools.length > 0 && { allowedTools }),
    ...(maxTurns !== undefined && { maxTurns: maxTurns as number }),
    ...(directories.length > 0 && { additionalDirectories: [...new Set(directories)] }),
  }
  return {
    ...(typeof model === "string" && { model: model.trim() }),
    ...(Object.keys(launch).length > 0 && { launch }),
  }
}

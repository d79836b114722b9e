/**
 * The agent's options (AgentInfo.options) as ACP sees them: the approval
 * mode as ACP session modes, and model, effort, thinking and fast mode as
 * session config options. Plain functions; values are the provider's own
 * (option ids and choice values pass through unchanged), so what the client
 * picks is what `setOption` gets.
 */
import type * as acp from "@agentclientprotocol/sdk/unstable"
import type { AgentInfo, AgentOption, OptionChoice } from "../../sdk/protocol.ts"

export const APPROVAL_OPTION = "approval_mode"
/** Plan mode, a toggle beside the approval mode (the plugin's). */
export const PLAN_OPTION = "plan_mode"
const MODEL_OPTION = "model"
const EFFORT_OPTION = "effort"

/** The values a session runs with: the provider's defaults under what was chosen. */
export type OptionValues = Readonly<Record<string, string | boolean>>

export const defaultsOf = (info: AgentInfo): Record<string, string | boolean> => {
  const out: Record<string, string | boolean> = {}
  for (const option of info.options) if (option.default !== undefined) out[option.id] = option.default
  return out
}

/** The four approval modes as ACP modes; the current one from the values. */
export const modesOf = (info: AgentInfo, values: OptionValues): acp.SessionModeState | null => {
  const option = info.options.find((o) => o.id === APPROVAL_OPTION)
  if (!option?.choices?.length) return null
  const current = values[APPROVAL_OPTION]
  return {
    currentModeId: typeof current === "string" ? current : String(option.default ?? option.choices[0]!.value),
    availableModes: option.choices.map((c) => ({
      id: c.value,
      name: c.label,
      ...(c.description !== undefined && { description: c.description }),
    })),
  }
}

const CATEGORY: Readonly<Record<string, acp.SessionConfigOptionCategory>> = {
  [MODEL_OPTION]: "model",
  [EFFORT_OPTION]: "thought_level",
  thinking: "thought_level",
  fast_mode: "model_config",
}

/** Effort's choices follow the chosen model (ultracode only where the model has xhigh). */
const choicesFor = (option: AgentOption, values: OptionValues): ReadonlyArray<OptionChoice> => {
  const model = values[MODEL_OPTION]
  if (option.choicesByModel && typeof model === "string" && option.choicesByModel[model])
    return option.choicesByModel[model]!
  return option.choices ?? []
}

/** A toggle for a client that did not declare boolean options: a select of these two. */
const TOGGLE_CHOICES = [
  { value: "true", name: "On" },
  { value: "false", name: "Off" },
]

/**
 * Every option but the approval mode (that one is the ACP mode), with its
 * current value. Toggles are `boolean` options only for a client that
 * declared `session.configOptions.boolean` (the spec forbids them
 * otherwise); for any other they are selects of "true" and "false".
 */
export const configOptionsOf = (
  info: AgentInfo,
  values: OptionValues,
  booleans = false,
): acp.SessionConfigOption[] =>
  info.options
    .filter((o) => o.id !== APPROVAL_OPTION)
    .flatMap((o): acp.SessionConfigOption[] => {
      const category = CATEGORY[o.id]
      const base = {
        id: o.id,
        name: o.label,
        ...(o.appliesAtNextStart && { description: "Applies when the session next starts" }),
        ...(category !== undefined && { category }),
      }
      if (o.kind === "toggle") {
        const value = values[o.id]
        const on = typeof value === "boolean" ? value : o.default === true
        if (booleans) return [{ ...base, type: "boolean", currentValue: on }]
        return [{ ...base, type: "select", currentValue: String(on), options: TOGGLE_CHOICES }]
      }
      const choices = choicesFor(o, values)
      if (choices.length === 0) return []
      const value = values[o.id]
      const current =
        typeof value === "string" && choices.some((c) => c.value === value)
          ? value
          : typeof o.default === "string" && choices.some((c) => c.value === o.default)
            ? o.default
            : choices[0]!.value
      return [
        {
          ...base,
          type: "select",
          currentValue: current,
          options: choices.map((c) => ({
            value: c.value,
            name: c.label,
            ...(c.description !== undefined && { description: c.description }),
          })),
        },
      ]
    })

/**
 * The value this option takes for `value` (a model alias such as `sonnet`
 * becomes its model's value), or a clear error, before the provider sees it.
 */
export const checkValue = (
  info: AgentInfo,
  values: OptionValues,
  optionId: string,
  value: unknown,
): { readonly value: string | boolean } | { readonly error: string } => {
  const option = info.options.find((o) => o.id === optionId)
  if (!option) return { error: `no option ${optionId} (have: ${info.options.map((o) => o.id).join(", ")})` }
  if (option.kind === "toggle") {
    // Clients send what they have: a boolean, or its word (acpx's `set thinking false` sends "false").
    const word = typeof value === "string" ? value.trim().toLowerCase() : undefined
    if (typeof value === "boolean") return { value }
    if (word !== undefined && ["true", "on", "yes", "1"].includes(word)) return { value: true }
    if (word !== undefined && ["false", "off", "no", "0"].includes(word)) return { value: false }
    return { error: `${optionId} takes true or false` }
  }
  const choices = optionId === APPROVAL_OPTION ? (option.choices ?? []) : choicesFor(option, values)
  if (choices.length === 0)
    return {
      error: `${optionId} has no choices for ${typeof values[MODEL_OPTION] === "string" ? `the model ${values[MODEL_OPTION]}` : "this model"}`,
    }
  if (typeof value === "string" && choices.some((c) => c.value === value)) return { value }
  const model =
    optionId === MODEL_OPTION && typeof value === "string"
      ? info.models.find((m) => m.aliases?.includes(value))
      : undefined
  if (model && choices.some((c) => c.value === model.value)) return { value: model.value }
  return { error: `${optionId} takes one of ${choices.map((c) => c.value).join(", ")}` }
}

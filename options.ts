/**
 * The composer options: model, effort (ultracode after max), approval mode,
 * thinking and fast mode. What they become at launch (flags) and live
 * (control requests), and how the agent declares them.
 */
import { type CliSupport, FULL_SUPPORT } from "./cli-version.ts"
import { type ClaudeModel, defaultModel, resolveModel } from "./models.ts"
import type { AgentOption, ModelEntry, OptionChoice } from "./sdk/protocol.ts"

// ---------------------------------------------------------------------------
// Ids and values

export const OPTION_IDS = {
  model: "model",
  effort: "effort",
  approval: "approval_mode",
  thinking: "thinking",
  fastMode: "fast_mode",
} as const

export type ApprovalMode = "supervised" | "accept_edits" | "auto" | "full"

export const APPROVAL_MODES: ReadonlyArray<ApprovalMode> = ["supervised", "accept_edits", "auto", "full"]

/** The CLI's `--permission-mode` for each shared mode (`default` is the one that asks). */
export const PERMISSION_MODE: Readonly<Record<ApprovalMode, string>> = {
  supervised: "default",
  accept_edits: "acceptEdits",
  auto: "auto",
  full: "bypassPermissions",
}

/** Unset is the strictest: the host reads an unset option as Supervised. */
export const permissionModeFor = (approval: ApprovalMode | undefined): string =>
  PERMISSION_MODE[approval ?? "supervised"]

export const EFFORT_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const
/** xhigh plus standing dynamic-workflow orchestration, for the session only. */
export const ULTRACODE = "ultracode"

export interface SessionOptions {
  readonly model?: string
  readonly effort?: string
  readonly approval?: ApprovalMode
  readonly thinking?: boolean
  readonly fastMode?: boolean
}

/** The settings that switch workflows (and so ultracode) on and off. */
export interface WorkflowSettings {
  readonly enableWorkflows?: unknown
  readonly disableWorkflows?: unknown
  readonly workflowKeywordTriggerEnabled?: unknown
}

export const workflowsEnabled = (settings: WorkflowSettings | undefined): boolean =>
  settings?.enableWorkflows !== false && settings?.disableWorkflows !== true

const asBoolean = (value: unknown): boolean | undefined => {
  if (typeof value === "boolean") return value
  if (typeof value !== "string") return undefined
  const v = value.trim().toLowerCase()
  if (["1", "true", "yes", "on"].includes(v)) return true
  if (["0", "false", "no", "off"].includes(v)) return false
  return undefined
}

const asText = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined

const isApproval = (value: unknown): value is ApprovalMode =>
  typeof value === "string" && (APPROVAL_MODES as ReadonlyArray<string>).includes(value)

/** The host's option record → typed options; unknown or malformed values are dropped. */
export const parseOptions = (record: Readonly<Record<string, unknown>> | undefined): SessionOptions => {
  if (!record) return {}
  const model = asText(record[OPTION_IDS.model])
  const effort = asText(record[OPTION_IDS.effort])?.toLowerCase()
  const approval = record[OPTION_IDS.approval]
  const thinking = asBoolean(record[OPTION_IDS.thinking])
  const fastMode = asBoolean(record[OPTION_IDS.fastMode])
  return {
    ...(model !== undefined && { model }),
    ...(effort !== undefined && effort !== "default" && { effort }),
    ...(isApproval(approval) && { approval }),
    ...(thinking !== undefined && { thinking }),
    ...(fastMode !== undefined && { fastMode }),
  }
}

/** Options back to the host's record (for SessionInfo and forks). */
export const optionsRecord = (opts: SessionOptions): Record<string, string | boolean> => ({
  ...(opts.model !== undefined && { [OPTION_IDS.model]: opts.model }),
  ...(opts.effort !== undefined && { [OPTION_IDS.effort]: opts.effort }),
  ...(opts.approval !== undefined && { [OPTION_IDS.approval]: opts.approval }),
  ...(opts.thinking !== undefined && { [OPTION_IDS.thinking]: opts.thinking }),
  ...(opts.fastMode !== undefined && { [OPTION_IDS.fastMode]: opts.fastMode }),
})

/** One option changed; other values kept. An unusable value clears that option. */
export const applyOption = (opts: SessionOptions, optionId: string, value: unknown): SessionOptions => {
  const next = parseOptions({ ...optionsRecord(opts), [optionId]: value })
  return next
}

// ---------------------------------------------------------------------------
// Launch

/** Does `effort` apply to this model? Unknown models take any known level. */
const effortFits = (effort: string, model: ModelEntry | undefined): boolean => {
  const levels = model?.efforts
  if (effort === ULTRACODE) return levels === undefined || levels.includes("xhigh")
  if (levels === undefined) return (EFFORT_LEVELS as ReadonlyArray<string>).includes(effort)
  return levels.includes(effort)
}

/** The value `--model` / `set_model` gets: the versioned id when known, else as stored. */
export const modelValue = (value: string, catalog: ReadonlyArray<ModelEntry>): string =>
  resolveModel(value, catalog)?.value ?? value

/**
 * The option flags of a launch. Approval always goes out (unset → `default`,
 * the strictest). Thinking on shows summarized reasoning; off asks the CLI
 * to disable it (models that cannot turn it off keep thinking). A CLI
 * without ultracode gets its nearest level, xhigh.
 */
export const launchFlags = (
  opts: SessionOptions,
  catalog: ReadonlyArray<ModelEntry>,
  cli: CliSupport = FULL_SUPPORT,
): string[] => {
  const flags: string[] = []
  const model = opts.model ? resolveModel(opts.model, catalog) : defaultModel(catalog)
  if (opts.model) flags.push("--model", model?.value ?? opts.model)
  // `--effort ultracode` is accepted by the CLI, which sends xhigh and turns ultracode on.
  const effort = opts.effort === ULTRACODE && !cli.has("ultracodeEffort") ? "xhigh" : opts.effort
  if (effort && effortFits(effort, model)) flags.push("--effort", effort)
  flags.push("--permission-mode", permissionModeFor(opts.approval))
  if (opts.approval === "full") flags.push("--allow-dangerously-skip-permissions")
  if (opts.thinking === false) flags.push("--thinking", "disabled")
  else flags.push("--thinking-display", "summarized")
  if (opts.fastMode === true && (model === undefined || model.supportsFastMode === true))
    flags.push("--settings", JSON.stringify({ fastMode: true }))
  return flags
}

// ---------------------------------------------------------------------------
// Live changes

export type ControlRequest = { readonly subtype: string; readonly [key: string]: unknown }

/** Options that only apply when the process next starts (nothing to send live). */
export const appliesAtNextStart = (optionId: string): boolean => optionId === OPTION_IDS.thinking

/** The effort as the `apply_flag_settings` layer takes it (ultracode = xhigh + ultracode, where the CLI has it). */
export const effortSettings = (
  effort: string | undefined,
  cli: CliSupport = FULL_SUPPORT,
): { effortLevel: string | null; ultracode: boolean } =>
  effort === ULTRACODE
    ? { effortLevel: "xhigh", ultracode: cli.has("ultracodeEffort") }
    : { effortLevel: effort && effort !== "default" ? effort : null, ultracode: false }

/**
 * The control requests that apply one option change to a running process.
 * `opts` are the options after the change. Thinking has no live request:
 * it applies at the next start.
 */
export const liveRequests = (
  optionId: string,
  value: unknown,
  opts: SessionOptions,
  catalog: ReadonlyArray<ModelEntry> = [],
  cli: CliSupport = FULL_SUPPORT,
): ControlRequest[] => {
  switch (optionId) {
    case OPTION_IDS.model: {
      const model = asText(value)
      // No model: back to the CLI's default.
      return [
        model && model !== "default"
          ? { subtype: "set_model", model: modelValue(model, catalog) }
          : { subtype: "set_model" },
      ]
    }
    case OPTION_IDS.approval:
      return [
        { subtype: "set_permission_mode", mode: permissionModeFor(isApproval(value) ? value : undefined) },
      ]
    case OPTION_IDS.effort: {
      const effort = asText(value)?.toLowerCase() ?? opts.effort
      return [{ subtype: "apply_flag_settings", settings: effortSettings(effort, cli) }]
    }
    case OPTION_IDS.fastMode:
      return [{ subtype: "apply_flag_settings", settings: { fastMode: asBoolean(value) === true } }]
    default:
      return []
  }
}

// ---------------------------------------------------------------------------
// What the agent declares

const EFFORT_LABELS: Readonly<Record<string, string>> = {
  low: "Low",
  medium: "Medium",
  high: "High",
  xhigh: "Extra high",
  max: "Max",
}

const ultracodeChoice: OptionChoice = {
  value: ULTRACODE,
  label: "Ultracode",
  description: "Extra high effort with standing dynamic workflows, for this session only",
  transient: true,
  mark: "workflow",
}

/** The effort choices of one model: its levels, then ultracode when it has xhigh, workflows are on and the CLI has it. */
export const effortChoices = (
  model: ModelEntry,
  settings?: WorkflowSettings,
  cli: CliSupport = FULL_SUPPORT,
): OptionChoice[] => {
  const levels = model.efforts ?? []
  const choices: OptionChoice[] = levels.map((level) => ({
    value: level,
    label: EFFORT_LABELS[level] ?? level,
  }))
  if (levels.includes("xhigh") && workflowsEnabled(settings) && cli.has("ultracodeEffort"))
    choices.push(ultracodeChoice)
  return choices
}

const APPROVAL_CHOICES: OptionChoice[] = [
  { value: "supervised", label: "Supervised", description: "Ask before every change and command" },
  { value: "accept_edits", label: "Accept edits", description: "Edit files freely; ask before commands" },
  { value: "auto", label: "Auto", description: "A classifier approves safe actions; ask for the rest" },
  { value: "full", label: "Full access", description: "Never ask (bypassPermissions)" },
]

/** The options an agent declares for its catalog. */
export const agentOptions = (
  catalog: ReadonlyArray<ModelEntry>,
  settings?: WorkflowSettings,
  cli: CliSupport = FULL_SUPPORT,
): AgentOption[] => {
  const fallback = defaultModel(catalog) as ClaudeModel | undefined
  const options: AgentOption[] = [
    {
      id: OPTION_IDS.model,
      label: "Model",
      kind: "select",
      choices: catalog.map((m) => ({
        value: m.value,
        label: m.label,
        ...(m.description !== undefined && { description: m.description }),
      })),
      ...(fallback && { default: fallback.value }),
    },
  ]
  const choicesByModel: Record<string, OptionChoice[]> = {}
  const union = new Map<string, OptionChoice>()
  for (const model of catalog) {
    const choices = effortChoices(model, settings, cli)
    choicesByModel[model.value] = choices
    for (const choice of choices) if (!union.has(choice.value)) union.set(choice.value, choice)
  }
  // One list in the CLI's order, ultracode after max.
  const order = [...EFFORT_LEVELS, ULTRACODE] as ReadonlyArray<string>
  const effortList = [...union.values()].sort((a, b) => order.indexOf(a.value) - order.indexOf(b.value))
  if (effortList.length > 0)
    options.push({
      id: OPTION_IDS.effort,
      label: "Effort",
      kind: "select",
      choices: effortList,
      choicesByModel,
      ...(fallback?.defaultEffort && { default: fallback.defaultEffort }),
    })
  options.push({
    id: OPTION_IDS.approval,
    label: "Approvals",
    kind: "select",
    choices: APPROVAL_CHOICES,
    default: "supervised",
  })
  options.push({
    id: OPTION_IDS.thinking,
    label: "Thinking",
    kind: "toggle",
    default: true,
    appliesAtNextStart: true,
  })
  if (catalog.some((m) => m.supportsFastMode === true))
    options.push({ id: OPTION_IDS.fastMode, label: "Fast mode", kind: "toggle", default: false })
  return options
}

/**
 * Words in a prompt that change how a turn runs: `ultracode`, unless its
 * trigger or workflows are off. The keyword predates `--effort ultracode`
 * (2.1.200 has its "Ultracode keyword trigger" setting), so it needs no check.
 */
export const promptKeywords = (
  settings?: WorkflowSettings,
): Array<{ readonly word: string; readonly description: string }> =>
  settings?.workflowKeywordTriggerEnabled === false || !workflowsEnabled(settings)
    ? []
    : [{ word: ULTRACODE, description: "Run this turn as a dynamic workflow" }]

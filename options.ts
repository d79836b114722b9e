/**
 * The composer options: model, effort (ultracode after max), approval mode,
 * thinking, fast mode and Agent Trace. What they become at launch (flags) and
 * live (control requests), and how the agent declares them; the Agent
 * Trace launch knobs (`CLAUDE_AGENT_TRACE*`), which the option can only narrow;
 * and the maintenance check's knob (`CLAUDE_MAINTENANCE_CHECK`).
 */
import { type CliSupport, FULL_SUPPORT } from "./cli-version.ts"
import { type ClaudeModel, defaultModel, resolveModel } from "./models.ts"
import type { AgentOption, ModelEntry, OptionChoice } from "./sdk/protocol.ts"
import { trimmed } from "./values.ts"
import type { ControlSubtype } from "./wire.ts"

// ---------------------------------------------------------------------------
// Ids and values

export const OPTION_IDS = {
  model: "model",
  effort: "effort",
  approval: "approval_mode",
  thinking: "thinking",
  fastMode: "fast_mode",
  agentTrace: "agent_trace",
  plan: "plan_mode",
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

/** The CLI's mode: `plan` while plan mode is on (it changes nothing, whoever approves), else the approval's. */
export const cliModeFor = (opts: SessionOptions): string =>
  opts.plan === true ? "plan" : permissionModeFor(opts.approval)

/**
 * The user's `permissions.defaultMode` as the declared defaults: a front end shows and sends
 * them, so the session runs the mode it shows. `dontAsk` and unknown values keep Supervised.
 */
export const settingsDefaults = (
  settings: PermissionSettings | undefined,
): { approval: ApprovalMode; plan: boolean } => {
  const mode = (settings?.permissions as { defaultMode?: unknown } | undefined)?.defaultMode
  if (mode === "plan") return { approval: "supervised", plan: true }
  const approval = APPROVAL_MODES.find((m) => PERMISSION_MODE[m] === mode)
  return { approval: approval ?? "supervised", plan: false }
}

/** The settings that carry the user's default permission mode. */
export interface PermissionSettings {
  readonly permissions?: unknown
}

export const EFFORT_LEVELS = ["low", "medium", "high", "xhigh", "max"] as const
/** xhigh plus standing dynamic-workflow orchestration, for the session only. */
export const ULTRACODE = "ultracode"

export interface SessionOptions {
  readonly model?: string
  readonly effort?: string
  readonly approval?: ApprovalMode
  readonly thinking?: boolean
  readonly fastMode?: boolean
  /** Agent Trace notes for this session's commits (unset: on). */
  readonly agentTrace?: boolean
  /** Plan mode: the agent plans and changes nothing until its plan is accepted (unset: off). */
  readonly plan?: boolean
}

/** The settings that switch workflows (and so ultracode) on and off. */
export interface WorkflowSettings {
  readonly enableWorkflows?: unknown
  readonly disableWorkflows?: unknown
  readonly workflowKeywordTriggerEnabled?: unknown
}

export const workflowsEnabled = (settings: WorkflowSettings | undefined): boolean =>
  settings?.enableWorkflows !== false && settings?.disableWorkflows !== true

export const asBoolean = (value: unknown): boolean | undefined => {
  if (typeof value === "boolean") return value
  if (typeof value !== "string") return undefined
  const v = value.trim().toLowerCase()
  if (["1", "true", "yes", "on"].includes(v)) return true
  if (["0", "false", "no", "off"].includes(v)) return false
  return undefined
}

const isApproval = (value: unknown): value is ApprovalMode =>
  typeof value === "string" && (APPROVAL_MODES as ReadonlyArray<string>).includes(value)

/** The host's option record → typed options; unknown or malformed values are dropped. */
export const parseOptions = (record: Readonly<Record<string, unknown>> | undefined): SessionOptions => {
  if (!record) return {}
  const model = trimmed(record[OPTION_IDS.model])
  const effort = trimmed(record[OPTION_IDS.effort])?.toLowerCase()
  const approval = record[OPTION_IDS.approval]
  const thinking = asBoolean(record[OPTION_IDS.thinking])
  const fastMode = asBoolean(record[OPTION_IDS.fastMode])
  const agentTrace = asBoolean(record[OPTION_IDS.agentTrace])
  const plan = asBoolean(record[OPTION_IDS.plan])
  return {
    ...(model !== undefined && { model }),
    ...(effort !== undefined && effort !== "default" && { effort }),
    ...(isApproval(approval) && { approval }),
    ...(thinking !== undefined && { thinking }),
    ...(fastMode !== undefined && { fastMode }),
    ...(agentTrace !== undefined && { agentTrace }),
    ...(plan !== undefined && { plan }),
  }
}

/** Options back to the host's record (for SessionInfo and forks). */
export const optionsRecord = (opts: SessionOptions): Record<string, string | boolean> => ({
  ...(opts.model !== undefined && { [OPTION_IDS.model]: opts.model }),
  ...(opts.effort !== undefined && { [OPTION_IDS.effort]: opts.effort }),
  ...(opts.approval !== undefined && { [OPTION_IDS.approval]: opts.approval }),
  ...(opts.thinking !== undefined && { [OPTION_IDS.thinking]: opts.thinking }),
  ...(opts.fastMode !== undefined && { [OPTION_IDS.fastMode]: opts.fastMode }),
  ...(opts.agentTrace !== undefined && { [OPTION_IDS.agentTrace]: opts.agentTrace }),
  ...(opts.plan !== undefined && { [OPTION_IDS.plan]: opts.plan }),
})

/** One option changed; other values kept. An unusable value clears that option. */
export const applyOption = (opts: SessionOptions, optionId: string, value: unknown): SessionOptions => {
  const next = parseOptions({ ...optionsRecord(opts), [optionId]: value })
  return next
}

// ---------------------------------------------------------------------------
// Launch

/** Lets a running session switch to `bypassPermissions` (without it the CLI answers `bypass_not_launched`). */
export const ALLOW_BYPASS_FLAG = "--allow-dangerously-skip-permissions"

/**
 * Did the CLI refuse to start because of that flag? 2.1.332 as root without
 * `IS_SANDBOX=1` exits 1 with "--dangerously-skip-permissions cannot be used
 * with root/sudo privileges for security reasons". The plugin cannot see its
 * user id, so it learns this from the first launch.
 */
export const refusedBypassFlag = (stderr: string): boolean => stderr.includes("root/sudo")

/** Does `effort` apply to this model? Unknown models take any known level. */
const effortFits = (effort: string, model: ModelEntry | undefined): boolean => {
  const levels = model?.efforts
  if (effort === ULTRACODE) return levels === undefined || levels.includes("xhigh")
  if (levels === undefined) return (EFFORT_LEVELS as ReadonlyArray<string>).includes(effort)
  return levels.includes(effort)
}

/**
 * The options as a workspace whose settings turn dynamic workflows off can
 * run them: ultracode (xhigh plus workflows) becomes plain xhigh.
 */
export const withinWorkflowSwitch = (opts: SessionOptions, workflowsOn: boolean): SessionOptions =>
  workflowsOn || opts.effort !== ULTRACODE ? opts : { ...opts, effort: "xhigh" }

/**
 * Thinking is off but the session's model cannot turn it off (`thinkingOff:
 * false`: the 5.x models, where 2.1.332 sends adaptive thinking whatever
 * `--thinking` says): that model, so the session can say so; else undefined.
 */
export const thinkingStaysOn = (
  opts: SessionOptions,
  catalog: ReadonlyArray<ModelEntry>,
): ClaudeModel | undefined => {
  if (opts.thinking !== false) return undefined
  const model = opts.model ? resolveModel(opts.model, catalog) : defaultModel(catalog)
  return model?.thinkingOff === false ? model : undefined
}

/** The value `--model` / `set_model` gets: the versioned id when known, else as stored. */
export const modelValue = (value: string, catalog: ReadonlyArray<ModelEntry>): string =>
  resolveModel(value, catalog)?.value ?? value

/**
 * The option flags of a launch. Approval always goes out (unset → `default`,
 * the strictest). `--allow-dangerously-skip-permissions` goes on every launch
 * the CLI allows it (`allowBypass`: not as root without `IS_SANDBOX`), so
 * Full access can be chosen live on a session launched in another mode.
 * Thinking on shows summarized reasoning; off asks the CLI to disable it,
 * except on a model that cannot turn it off, which keeps it shown
 * (`thinkingStaysOn`). A CLI without ultracode gets its nearest level, xhigh.
 */
export const launchFlags = (
  opts: SessionOptions,
  catalog: ReadonlyArray<ModelEntry>,
  allowBypass = true,
  cli: CliSupport = FULL_SUPPORT,
): string[] => {
  const flags: string[] = []
  const model = opts.model ? resolveModel(opts.model, catalog) : defaultModel(catalog)
  if (opts.model) flags.push("--model", model?.value ?? opts.model)
  // `--effort ultracode` is accepted by the CLI, which sends xhigh and turns ultracode on.
  const effort = opts.effort === ULTRACODE && !cli.has("ultracodeEffort") ? "xhigh" : opts.effort
  if (effort && effortFits(effort, model)) flags.push("--effort", effort)
  flags.push("--permission-mode", cliModeFor(opts))
  if (allowBypass) flags.push(ALLOW_BYPASS_FLAG)
  if (opts.thinking === false && thinkingStaysOn(opts, catalog) === undefined)
    flags.push("--thinking", "disabled")
  else flags.push("--thinking-display", "summarized")
  if (opts.fastMode === true && (model === undefined || model.supportsFastMode === true))
    flags.push("--settings", JSON.stringify({ fastMode: true }))
  return flags
}

// ---------------------------------------------------------------------------
// Live changes

export type ControlRequest = { readonly subtype: ControlSubtype; readonly [key: string]: unknown }

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
      const model = trimmed(value)
      // No model: back to the CLI's default.
      const setModel: ControlRequest =
        model && model !== "default"
          ? { subtype: "set_model", model: modelValue(model, catalog) }
          : { subtype: "set_model" }
      // A launch on a model without xhigh left ultracode off: ask again on the new model.
      return opts.effort === ULTRACODE
        ? [setModel, { subtype: "apply_flag_settings", settings: effortSettings(ULTRACODE, cli) }]
        : [setModel]
    }
    case OPTION_IDS.approval:
      // While planning the CLI stays in plan mode; the new approval mode applies when the plan is accepted.
      return opts.plan === true
        ? []
        : [{ subtype: "set_permission_mode", mode: permissionModeFor(isApproval(value) ? value : undefined) }]
    case OPTION_IDS.plan:
      return [{ subtype: "set_permission_mode", mode: cliModeFor(opts) }]
    case OPTION_IDS.effort: {
      const effort = trimmed(value)?.toLowerCase() ?? opts.effort
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
  settings?: WorkflowSettings & PermissionSettings,
  cli: CliSupport = FULL_SUPPORT,
): AgentOption[] => {
  const adopted = settingsDefaults(settings)
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
    default: adopted.approval,
  })
  options.push({
    id: OPTION_IDS.plan,
    label: "Plan mode",
    kind: "toggle",
    default: adopted.plan,
  })
  // Offered only where turning thinking off can do something.
  if (catalog.some((m) => (m as ClaudeModel).thinkingOff !== false))
    options.push({
      id: OPTION_IDS.thinking,
      label: "Thinking",
      kind: "toggle",
      default: true,
      appliesAtNextStart: true,
    })
  if (catalog.some((m) => m.supportsFastMode === true))
    options.push({ id: OPTION_IDS.fastMode, label: "Fast mode", kind: "toggle", default: false })
  options.push({ id: OPTION_IDS.agentTrace, label: "Agent Trace notes", kind: "toggle", default: true })
  return options
}

/** The model a launch runs: the option's versioned id, else the catalog's default. */
export const launchedModel = (
  opts: SessionOptions,
  catalog: ReadonlyArray<ModelEntry>,
): string | undefined =>
  opts.model ? (resolveModel(opts.model, catalog)?.value ?? opts.model) : defaultModel(catalog)?.value

// ---------------------------------------------------------------------------
// Agent Trace knobs (login environment, read at each use)

export const TRACE_KNOBS = {
  /** `0`/`false`/`no`/`off` turns Agent Trace off for every session. */
  enabled: "CLAUDE_AGENT_TRACE",
  /** `1`/`true`/`yes`/`on` pushes the notes after each `git push` the agent runs. */
  push: "CLAUDE_AGENT_TRACE_PUSH",
  /** The deadline of all git calls of one notes push, in ms (default 8000). */
  pushTimeoutMs: "CLAUDE_AGENT_TRACE_PUSH_TIMEOUT_MS",
} as const

export interface TraceKnobs {
  readonly enabled: boolean
  readonly push: boolean
  readonly pushTimeoutMs: number
}

export const DEFAULT_PUSH_TIMEOUT_MS = 8_000

/**
 * `0`/`false`/`no`/`off` skips the maintenance check in `initialize` (the
 * CLI's version, its owner, and the published version, which asks `npm`):
 * for a front end with no update method, such as the ACP agent, it is work
 * on the way to the first answer that nobody reads.
 */
export const MAINTENANCE_KNOB = "CLAUDE_MAINTENANCE_CHECK"

export const maintenanceCheckOn = (value: string | undefined): boolean => asBoolean(value) !== false

export const traceKnobs = (env: Readonly<Record<string, string | undefined>>): TraceKnobs => {
  const timeout = Number(env[TRACE_KNOBS.pushTimeoutMs])
  return {
    enabled: asBoolean(env[TRACE_KNOBS.enabled]) !== false,
    push: asBoolean(env[TRACE_KNOBS.push]) === true,
    pushTimeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_PUSH_TIMEOUT_MS,
  }
}

/** Agent Trace is on unless the knob or the session's option turns it off. */
export const traceEnabled = (opts: SessionOptions, knobs: TraceKnobs): boolean =>
  knobs.enabled && opts.agentTrace !== false

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

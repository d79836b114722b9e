/**
 * The composer options changed on a running process: the control requests
 * one change sends (`set_model`, `set_permission_mode`,
 * `apply_flag_settings`), and which options have none (they apply at the
 * next start). What the options are and how a launch carries them is
 * options.ts.
 */
import { type CliSupport, FULL_SUPPORT } from "../cli-version.ts"
import {
  asBoolean,
  cliModeFor,
  isApproval,
  modelValue,
  OPTION_IDS,
  permissionModeFor,
  type SessionOptions,
  ULTRACODE,
} from "../options.ts"
import type { ModelEntry } from "../sdk/protocol.ts"
import { trimmed } from "../values.ts"
import type { ControlSubtype } from "../wire.ts"

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

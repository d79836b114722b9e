/**
 * What a value for a session option may be, checked the same way for a flag
 * (`--effort`) and a command (`/effort`): the agent's own choices, its
 * models and their aliases. Approval modes the CLI would refuse are not
 * offered, with the reason; `full` needs a process started for it, so a
 * live switch to it restarts the session.
 */
import type { AgentInfo } from "../../sdk/protocol.ts"

export const OPTION = { model: "model", effort: "effort", approval: "approval_mode" } as const

export interface Choice {
  readonly value: string
  readonly label: string
  readonly aliases: ReadonlyArray<string>
  /** Why it cannot be chosen here; undefined when it can. */
  readonly unavailable?: string
}

export interface ChoiceContext {
  /** The model the session runs (efforts depend on it). */
  readonly model?: string
  /** Running as root without IS_SANDBOX: the CLI refuses to skip permissions. */
  readonly rootWithoutSandbox: boolean
  /** The agent's own word that full access cannot run here (its notice), which settles it. */
  readonly fullRefused?: string
}

export const rootWithoutSandbox = (env: Readonly<Record<string, string | undefined>>): boolean =>
  typeof process.getuid === "function" && process.getuid() === 0 && !env.IS_SANDBOX

export const choicesFor = (info: AgentInfo, optionId: string, context: ChoiceContext): Choice[] => {
  if (optionId === OPTION.model)
    return info.models.map((m) => ({ value: m.value, label: m.label, aliases: m.aliases ?? [] }))
  const option = info.options.find((o) => o.id === optionId)
  const model =
    context.model && info.models.find((m) => m.value === context.model || m.aliases?.includes(context.model!))
  const list = (model && option?.choicesByModel?.[model.value]) || option?.choices || []
  return list.map((c) => ({
    value: c.value,
    label: c.label,
    aliases: [],
    ...(optionId === OPTION.approval &&
      c.value === "full" &&
      (context.fullRefused !== undefined || context.rootWithoutSandbox) && {
        unavailable:
          context.fullRefused ??
          "the CLI refuses to skip permissions for root unless IS_SANDBOX=1 says it runs in a sandbox",
      }),
  }))
}

export type Resolved =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly message: string }

/** The value `typed` names among `choices`, or the message that says why it names none. */
export const resolveChoice = (choices: ReadonlyArray<Choice>, typed: string, label: string): Resolved => {
  if (choices.length === 0) return { ok: true, value: typed }
  const chosen = choices.find(
    (c) => c.value === typed || c.aliases.includes(typed) || c.label.toLowerCase() === typed.toLowerCase(),
  )
  if (!chosen)
    return {
      ok: false,
      message: `unknown ${label} ${typed}; one of: ${choices
        .filter((c) => !c.unavailable)
        .map((c) => c.value)
        .join(", ")}`,
    }
  if (chosen.unavailable)
    return { ok: false, message: `${label} ${chosen.value} is not available: ${chosen.unavailable}` }
  return { ok: true, value: chosen.value }
}

/** A live switch to this approval mode cannot work on a running process: restart with its flags. */
export const needsRestart = (optionId: string, value: string): boolean =>
  optionId === OPTION.approval && value === "full"

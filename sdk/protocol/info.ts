/** What a provider tells the host about itself: status, models, options, skills, usage limits. */

export type AgentStatus = "Ready" | "AuthRequired" | "Unavailable"

export interface OptionChoice {
  readonly value: string
  readonly label: string
  readonly description?: string
  /** The host does not carry this choice into new chats (ultracode). */
  readonly transient?: boolean
  /** An icon name the host shows next to the choice (e.g. "workflow"). */
  readonly mark?: string
}

export interface AgentOption {
  readonly id: string
  readonly label: string
  readonly kind: "select" | "toggle"
  readonly choices?: ReadonlyArray<OptionChoice>
  readonly default?: string | boolean
  /** The value applies at the next start of the session process, not live. */
  readonly appliesAtNextStart?: boolean
  /** For a model-scoped option (effort): the choices per model value. */
  readonly choicesByModel?: Readonly<Record<string, ReadonlyArray<OptionChoice>>>
}

export interface ModelEntry {
  readonly value: string
  readonly label: string
  readonly description?: string
  /** Other spellings that select this model (the CLI's picker values). */
  readonly aliases?: ReadonlyArray<string>
  readonly efforts?: ReadonlyArray<string>
  readonly contextWindow?: number
  readonly supportsFastMode?: boolean
}

export interface SkillInfo {
  readonly name: string
  readonly description?: string
  readonly source: "user" | "project" | "cli"
  /** Only the user may start it (the model may not). */
  readonly manual_only?: boolean
  /** Not offered in the picker the user drives (only the model starts it). */
  readonly hidden_from_picker?: boolean
}

export interface UsageWindow {
  /** e.g. five_hour, seven_day, seven_day_overage_included */
  readonly id: string
  readonly label: string
  /** Share of the window used, 0 to 1. */
  readonly used: number
  /** When the window resets, ISO 8601. */
  readonly resets_at?: string
  readonly status?: "allowed" | "allowed_warning" | "rejected"
}

export interface UsageLimits {
  readonly windows: ReadonlyArray<UsageWindow>
  /** Credits that reopen a window early. Claude has none: always empty. */
  readonly reset_credits: ReadonlyArray<never>
  /** The window responsible for a rejection, if any. */
  readonly blocking_window?: string
  readonly updated_at: string
}

export interface AgentInfo {
  readonly id: string
  readonly name: string
  readonly version?: string
  readonly status: AgentStatus
  readonly statusMessage?: string
  /** Signed-in address and plan, the only free text the host shows. */
  readonly description?: string
  /** Two agents with the same key can continue each other's chats. */
  readonly continuationKey?: string
  readonly usageLimits?: UsageLimits
  /** Words in a prompt that change how a turn runs (e.g. "ultracode"). */
  readonly promptKeywords?: ReadonlyArray<{ readonly word: string; readonly description: string }>
  readonly models: ReadonlyArray<ModelEntry>
  readonly options: ReadonlyArray<AgentOption>
  readonly skills?: ReadonlyArray<SkillInfo>
  readonly maintenance?: Maintenance
  readonly capabilities: {
    readonly rollback: boolean
    readonly fork: boolean
    readonly cancelTask: boolean
    readonly steering: boolean
    readonly images: boolean
  }
}

export interface Maintenance {
  readonly version?: string
  readonly manager?: "native" | "npm"
  readonly latest?: string
  readonly can_update: boolean
  readonly path?: string
}

/**
 * The model list the composer offers: every model by version from
 * models.json, with the CLI's own picker values (from the `initialize`
 * response) folded in as aliases of the model their `resolvedModel` names,
 * so a stored `opus`, `opus[1m]` or `default` selects the right entry. There
 * is no "Default" entry: `default` is an alias like the others.
 */
import { z } from "zod"
import data from "./models.json" with { type: "json" }
import type { ModelEntry } from "./sdk/protocol.ts"

/** A catalog entry, with what the options need beyond the protocol's ModelEntry. */
export interface ClaudeModel extends ModelEntry {
  readonly family?: string
  readonly efforts: ReadonlyArray<string>
  readonly aliases: ReadonlyArray<string>
  /** The CLI's default effort for this model, when it has one. */
  readonly defaultEffort?: string
  /** false when the model rejects `--thinking disabled` (thinking stays on). */
  readonly thinkingOff?: boolean
}

const StaticModel = z.object({
  value: z.string(),
  label: z.string(),
  family: z.string().optional(),
  description: z.string().optional(),
  contextWindow: z.number().optional(),
  efforts: z.array(z.string()),
  defaultEffort: z.string().optional(),
  supportsFastMode: z.boolean().optional(),
  thinkingOff: z.boolean().optional(),
})

/** models.json, checked once at load: a broken file is a build error, not a runtime surprise. */
export const STATIC_MODELS: ReadonlyArray<ClaudeModel> = z
  .array(StaticModel)
  .parse(data.models)
  .map((m) => ({ ...m, aliases: [] }))

/** One `models[]` row of the `initialize` control response (lenient). */
export const CliModel = z.looseObject({
  value: z.string(),
  resolvedModel: z.string().optional(),
  displayName: z.string().optional(),
  description: z.string().optional(),
  supportedEffortLevels: z.array(z.string()).optional(),
  supportsFastMode: z.boolean().optional(),
  supportsThinkingOff: z.boolean().optional(),
  disabled: z.boolean().optional(),
})
export type CliModel = z.infer<typeof CliModel>

const InitializeModels = z.looseObject({ models: z.array(z.unknown()).optional() })

const ONE_M = "[1m]"
const strip1m = (value: string) => (value.endsWith(ONE_M) ? value.slice(0, -ONE_M.length) : value)
/** `claude-haiku-4-5-20251001` → `claude-haiku-4-5`. */
const stripDate = (value: string) => value.replace(/-\d{8}(?=$|\[)/, "")

/** The CLI rows of an initialize response; rows that fail their schema are skipped. */
export const cliModelsOf = (initializeResponse: unknown): CliModel[] => {
  const parsed = InitializeModels.safeParse(initializeResponse)
  if (!parsed.success) return []
  return (parsed.data.models ?? []).flatMap((row) => {
    const m = CliModel.safeParse(row)
    return m.success ? [m.data] : []
  })
}

/** "Opus 5.5 · Best for …" → "Opus 5.5" (the CLI's label carries no version). */
const labelFrom = (row: CliModel, resolved: string) =>
  row.description?.split(" · ")[0]?.trim() || row.displayName || resolved

/**
 * The catalog: models.json's entries, the CLI's picker values as aliases,
 * and any model the CLI resolves to that models.json does not know yet.
 */
export const modelCatalog = (initializeResponse: unknown): ClaudeModel[] => {
  const entries = STATIC_MODELS.map((m) => ({ ...m, aliases: [...m.aliases] as string[] }))
  const byValue = (value: string) => entries.find((e) => e.value === value)
  for (const row of cliModelsOf(initializeResponse)) {
    const resolved = stripDate(row.resolvedModel ?? row.value)
    const wants1m = row.value.endsWith(ONE_M) || resolved.endsWith(ONE_M)
    let target =
      (wants1m ? byValue(`${strip1m(resolved)}${ONE_M}`) : undefined) ??
      byValue(resolved) ??
      byValue(strip1m(resolved))
    if (!target) {
      // A model this file does not list yet: offer it under its versioned id.
      const value = resolved
      target = {
        value,
        label: labelFrom(row, value),
        efforts: row.supportedEffortLevels ?? [],
        aliases: [],
        ...(row.supportsFastMode !== undefined && { supportsFastMode: row.supportsFastMode }),
        ...(row.supportsThinkingOff !== undefined && { thinkingOff: row.supportsThinkingOff }),
      }
      entries.push(target)
    } else {
      // The running CLI knows its models better than a file written for one version.
      if (row.supportedEffortLevels && row.supportedEffortLevels.length > 0)
        target.efforts = [...row.supportedEffortLevels]
      if (row.supportsThinkingOff !== undefined) target.thinkingOff = row.supportsThinkingOff
    }
    if (row.value !== target.value && !target.aliases.includes(row.value)) target.aliases.push(row.value)
  }
  return entries
}

/** The entry a stored or typed model value selects (value, alias, dated id, any case). */
export const resolveModel = (
  value: string | undefined,
  catalog: ReadonlyArray<ModelEntry>,
): ClaudeModel | undefined => {
  if (!value) return undefined
  const find = (v: string) =>
    catalog.find((m) => m.value === v) ?? catalog.find((m) => m.aliases?.includes(v) ?? false)
  const lower = value.trim().toLowerCase()
  const hit =
    find(value) ??
    find(lower) ??
    find(stripDate(lower)) ??
    (lower.endsWith(ONE_M) ? find(strip1m(stripDate(lower))) : undefined)
  return hit as ClaudeModel | undefined
}

/** The effort levels a model takes (none for a model without effort). */
export const effortsFor = (model: ModelEntry | undefined): ReadonlyArray<string> => model?.efforts ?? []

/** The entry the CLI uses when no model is chosen (the `default` alias), if known. */
export const defaultModel = (catalog: ReadonlyArray<ModelEntry>): ClaudeModel | undefined =>
  resolveModel("default", catalog)

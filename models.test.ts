import { readdirSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { cliModelsOf, defaultModel, effortsFor, modelCatalog, resolveModel, STATIC_MODELS } from "./models.ts"

/** The `initialize` control responses the recorder captured (stdout line 1 of each scenario). */
const recordedInitializeResponses = (): Array<{ scenario: string; response: unknown }> => {
  const found: Array<{ scenario: string; response: unknown }> = []
  for (const scenario of readdirSync("testdata")) {
    let first: string | undefined
    try {
      first = readFileSync(`testdata/${scenario}/stdout.jsonl`, "utf8").split("\n", 1)[0]
    } catch {
      continue
    }
    if (!first) continue
    const frame = JSON.parse(first)
    if (
      frame.type === "control_response" &&
      frame.response?.subtype === "success" &&
      frame.response.response?.models
    )
      found.push({ scenario, response: frame.response.response })
  }
  return found
}

const recorded = recordedInitializeResponses()

describe("models.json", () => {
  it("lists every model by version, with no Default entry", () => {
    const values = STATIC_MODELS.map((m) => m.value)
    expect(values).toContain("claude-opus-5-5")
    expect(values).toContain("claude-sonnet-5-5")
    expect(values).toContain("claude-fable-5-2")
    expect(values).toContain("claude-haiku-4-5")
    expect(values.some((v) => v === "default" || v === "opus")).toBe(false)
    expect(new Set(values).size).toBe(values.length)
  })
  it("offers [1m] where it is an opt-in variant, but not for Sonnet 4.6 (it needs usage credits)", () => {
    expect(STATIC_MODELS.find((m) => m.value === "claude-opus-4-6[1m]")?.contextWindow).toBe(1_000_000)
    expect(STATIC_MODELS.find((m) => m.value === "claude-opus-4-6")?.contextWindow).toBe(200_000)
    expect(STATIC_MODELS.some((m) => m.value === "claude-sonnet-4-6[1m]")).toBe(false)
  })
  it("knows each model's effort levels (Opus 4.6 has no xhigh, Haiku 4.5 no effort)", () => {
    expect(effortsFor(resolveModel("claude-opus-5-5", STATIC_MODELS))).toEqual([
      "low",
      "medium",
      "high",
      "xhigh",
      "max",
    ])
    expect(effortsFor(resolveModel("claude-opus-4-6", STATIC_MODELS))).toEqual([
      "low",
      "medium",
      "high",
      "max",
    ])
    expect(effortsFor(resolveModel("claude-haiku-4-5", STATIC_MODELS))).toEqual([])
    expect(effortsFor(undefined)).toEqual([])
  })
})

describe("modelCatalog from a recorded initialize response", () => {
  it("has at least one recording to read", () => {
    expect(recorded.length).toBeGreaterThan(0)
  })
  it.each(recorded)(
    "$scenario: the CLI's picker values become aliases of their resolvedModel",
    ({ response }) => {
      const rows = cliModelsOf(response)
      expect(rows.map((r) => r.value)).toContain("default")
      const catalog = modelCatalog(response)
      expect(catalog.some((m) => m.value === "default")).toBe(false)
      for (const row of rows) {
        const entry = resolveModel(row.value, catalog)
        expect(entry?.value, row.value).toBe(row.resolvedModel)
        expect(entry?.aliases).toContain(row.value)
      }
      // default and opus both select Opus 5.5 in CLI 2.1.332.
      expect(resolveModel("default", catalog)?.value).toBe("claude-opus-5-5")
      expect(resolveModel("opus", catalog)?.value).toBe("claude-opus-5-5")
      expect(defaultModel(catalog)?.value).toBe("claude-opus-5-5")
      // Every versioned model stays on offer beside the aliased ones.
      expect(catalog.length).toBe(STATIC_MODELS.length)
    },
  )
})

describe("modelCatalog rules", () => {
  const base = recorded[0]?.response as { models: unknown[] }

  it("maps opus[1m] to the Opus entry its resolvedModel names", () => {
    const response = {
      models: [
        ...base.models,
        { value: "opus[1m]", resolvedModel: "claude-opus-5-5[1m]", displayName: "Opus (1M context)" },
        { value: "claude-opus-4-6[1m]", resolvedModel: "claude-opus-4-6[1m]", displayName: "Opus 4.6 (1M)" },
        { value: "sonnet[1m]", resolvedModel: "claude-sonnet-4-6", displayName: "Sonnet (1M)" },
      ],
    }
    const catalog = modelCatalog(response)
    expect(resolveModel("opus[1m]", catalog)?.value).toBe("claude-opus-5-5")
    expect(resolveModel("claude-opus-4-6[1m]", catalog)?.value).toBe("claude-opus-4-6[1m]")
    expect(resolveModel("sonnet[1m]", catalog)?.value).toBe("claude-sonnet-4-6")
  })

  it("adds a model the CLI resolves to that models.json does not list, under its versioned id", () => {
    const catalog = modelCatalog({
      models: [
        {
          value: "default",
          resolvedModel: "claude-opus-6",
          displayName: "Default (recommended)",
          description: "Use the default model (currently Opus 6)",
        },
        {
          value: "opus",
          resolvedModel: "claude-opus-6",
          displayName: "Opus",
          description: "Opus 6 · Best for everyday tasks",
          supportedEffortLevels: ["low", "high"],
          supportsFastMode: true,
        },
      ],
    })
    const added = resolveModel("opus", catalog)
    expect(added?.value).toBe("claude-opus-6")
    expect(added?.aliases).toEqual(["default", "opus"])
    expect(catalog.filter((m) => m.value === "claude-opus-6")).toHaveLength(1)
  })

  it("takes the running CLI's effort levels for a model it lists", () => {
    const catalog = modelCatalog({
      models: [{ value: "haiku", resolvedModel: "claude-haiku-5-5", supportedEffortLevels: ["low", "high"] }],
    })
    expect(effortsFor(resolveModel("haiku", catalog))).toEqual(["low", "high"])
  })

  it("without a response offers models.json as it is; bad rows are skipped", () => {
    expect(modelCatalog(undefined).map((m) => m.value)).toEqual(STATIC_MODELS.map((m) => m.value))
    const catalog = modelCatalog({
      models: [{ nope: 1 }, { value: "sonnet", resolvedModel: "claude-sonnet-5-5" }],
    })
    expect(resolveModel("sonnet", catalog)?.value).toBe("claude-sonnet-5-5")
  })
})

describe("resolveModel", () => {
  const catalog = modelCatalog({ models: [{ value: "opus", resolvedModel: "claude-opus-5-5" }] })
  it("finds values, aliases, other cases and dated ids; unknown is undefined", () => {
    expect(resolveModel("claude-sonnet-4-6", catalog)?.label).toBe("Sonnet 4.6")
    expect(resolveModel("OPUS", catalog)?.value).toBe("claude-opus-5-5")
    expect(resolveModel("claude-haiku-4-5-20251001", catalog)?.value).toBe("claude-haiku-4-5")
    expect(resolveModel("claude-opus-5-5[1m]", catalog)?.value).toBe("claude-opus-5-5")
    expect(resolveModel("gpt-5", catalog)).toBeUndefined()
    expect(resolveModel(undefined, catalog)).toBeUndefined()
  })
})

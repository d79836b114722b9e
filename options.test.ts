import { describe, expect, it } from "vitest"
import { modelCatalog } from "./models.ts"
import {
  agentOptions,
  applyOption,
  appliesAtNextStart,
  launchedModel,
  launchFlags,
  liveRequests,
  OPTION_IDS,
  optionsRecord,
  parseOptions,
  promptKeywords,
  refusedBypassFlag,
  thinkingStaysOn,
  traceEnabled,
  traceKnobs,
} from "./options.ts"

const catalog = modelCatalog({
  models: [
    {
      value: "default",
      resolvedModel: "claude-opus-5-5",
      supportedEffortLevels: ["low", "medium", "high", "xhigh", "max"],
    },
    {
      value: "opus",
      resolvedModel: "claude-opus-5-5",
      supportedEffortLevels: ["low", "medium", "high", "xhigh", "max"],
    },
    { value: "haiku", resolvedModel: "claude-haiku-5-5" },
  ],
})

describe("parseOptions", () => {
  it("reads the host's record and drops what it cannot use", () => {
    expect(
      parseOptions({
        model: "opus",
        effort: "HIGH",
        approval_mode: "accept_edits",
        thinking: false,
        fast_mode: "on",
      }),
    ).toEqual({ model: "opus", effort: "high", approval: "accept_edits", thinking: false, fastMode: true })
    expect(parseOptions({ approval_mode: "yolo", thinking: "maybe", model: "  " })).toEqual({})
    expect(parseOptions(undefined)).toEqual({})
  })
  it("round-trips through optionsRecord and applyOption", () => {
    const opts = parseOptions({ model: "opus", approval_mode: "full" })
    expect(parseOptions(optionsRecord(opts))).toEqual(opts)
    expect(applyOption(opts, OPTION_IDS.effort, "ultracode")).toEqual({ ...opts, effort: "ultracode" })
    expect(applyOption(opts, OPTION_IDS.approval, "bogus")).toEqual({ model: "opus" })
  })
})

describe("launchFlags", () => {
  it("sends the strictest permission mode when approval is unset, and summarized thinking", () => {
    expect(launchFlags({}, catalog)).toEqual([
      "--permission-mode",
      "default",
      "--allow-dangerously-skip-permissions",
      "--thinking-display",
      "summarized",
    ])
  })
  it.each([
    ["supervised", ["--permission-mode", "default"]],
    ["accept_edits", ["--permission-mode", "acceptEdits"]],
    ["auto", ["--permission-mode", "auto"]],
    ["full", ["--permission-mode", "bypassPermissions"]],
  ] as const)(
    "maps approval %s, allowing a live switch to full whenever the CLI allows it",
    (approval, expected) => {
      const flags = launchFlags({ approval }, catalog)
      expect(flags.slice(0, expected.length)).toEqual(expected)
      expect(flags.includes("--allow-dangerously-skip-permissions")).toBe(true)
      expect(launchFlags({ approval }, catalog, false)).not.toContain("--allow-dangerously-skip-permissions")
    },
  )
  it("reads the CLI's refusal of the allow flag (root without IS_SANDBOX) from its stderr", () => {
    expect(
      refusedBypassFlag(
        "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons",
      ),
    ).toBe(true)
    expect(refusedBypassFlag("Error: No message found with message.uuid of: x")).toBe(false)
  })
  it("passes the versioned model for a stored alias, effort and fast mode", () => {
    expect(launchFlags({ model: "opus", effort: "max", fastMode: true }, catalog)).toEqual([
      "--model",
      "claude-opus-5-5",
      "--effort",
      "max",
      "--permission-mode",
      "default",
      "--allow-dangerously-skip-permissions",
      "--thinking-display",
      "summarized",
      "--settings",
      '{"fastMode":true}',
    ])
  })
  it("turns thinking off only on a model that can: a 5.x model keeps it shown, and says so", () => {
    expect(launchFlags({ model: "claude-haiku-4-5", thinking: false }, catalog).slice(-2)).toEqual([
      "--thinking",
      "disabled",
    ])
    expect(thinkingStaysOn({ model: "claude-haiku-4-5", thinking: false }, catalog)).toBeUndefined()
    for (const opts of [{ model: "opus", thinking: false }, { thinking: false }]) {
      expect(launchFlags(opts, catalog).slice(-2)).toEqual(["--thinking-display", "summarized"])
      expect(thinkingStaysOn(opts, catalog)?.label).toBe("Opus 5.5")
    }
    expect(thinkingStaysOn({ model: "opus" }, catalog)).toBeUndefined()
  })
  it("sends ultracode as --effort ultracode, only for a model with xhigh", () => {
    expect(launchFlags({ model: "claude-opus-5-5", effort: "ultracode" }, catalog)).toContain("ultracode")
    const opus46 = launchFlags({ model: "claude-opus-4-6", effort: "ultracode" }, catalog)
    expect(opus46).not.toContain("--effort")
  })
  it("leaves out an effort the model does not take and fast mode where it does not exist", () => {
    const flags = launchFlags({ model: "claude-haiku-4-5", effort: "high", fastMode: true }, catalog)
    expect(flags).toEqual([
      "--model",
      "claude-haiku-4-5",
      "--permission-mode",
      "default",
      "--allow-dangerously-skip-permissions",
      "--thinking-display",
      "summarized",
    ])
  })
  it("passes an unknown model as stored", () => {
    expect(launchFlags({ model: "claude-opus-9", effort: "high" }, catalog).slice(0, 4)).toEqual([
      "--model",
      "claude-opus-9",
      "--effort",
      "high",
    ])
  })
})

describe("liveRequests", () => {
  it("model → set_model with the versioned id; back to default without one", () => {
    expect(liveRequests("model", "opus", {}, catalog)).toEqual([
      { subtype: "set_model", model: "claude-opus-5-5" },
    ])
    expect(liveRequests("model", "default", {}, catalog)).toEqual([{ subtype: "set_model" }])
  })
  it("model with ultracode chosen → set_model, then ultracode asked for again on the new model", () => {
    expect(liveRequests("model", "opus", { effort: "ultracode" }, catalog)).toEqual([
      { subtype: "set_model", model: "claude-opus-5-5" },
      { subtype: "apply_flag_settings", settings: { effortLevel: "xhigh", ultracode: true } },
    ])
    expect(liveRequests("model", "opus", { effort: "high" }, catalog)).toHaveLength(1)
  })
  it("approval → set_permission_mode", () => {
    expect(liveRequests("approval_mode", "accept_edits", {})).toEqual([
      { subtype: "set_permission_mode", mode: "acceptEdits" },
    ])
    expect(liveRequests("approval_mode", "full", {})).toEqual([
      { subtype: "set_permission_mode", mode: "bypassPermissions" },
    ])
  })
  it("effort → apply_flag_settings; ultracode is xhigh plus ultracode, any other level turns it off", () => {
    expect(liveRequests("effort", "ultracode", {})).toEqual([
      { subtype: "apply_flag_settings", settings: { effortLevel: "xhigh", ultracode: true } },
    ])
    expect(liveRequests("effort", "low", {})).toEqual([
      { subtype: "apply_flag_settings", settings: { effortLevel: "low", ultracode: false } },
    ])
    expect(liveRequests("effort", "default", {})).toEqual([
      { subtype: "apply_flag_settings", settings: { effortLevel: null, ultracode: false } },
    ])
  })
  it("fast mode → apply_flag_settings; thinking applies at the next start", () => {
    expect(liveRequests("fast_mode", true, {})).toEqual([
      { subtype: "apply_flag_settings", settings: { fastMode: true } },
    ])
    expect(liveRequests("thinking", false, {})).toEqual([])
    expect(appliesAtNextStart("thinking")).toBe(true)
    expect(appliesAtNextStart("model")).toBe(false)
  })
})

describe("agentOptions", () => {
  const byId = (settings?: Record<string, unknown>) =>
    Object.fromEntries(agentOptions(catalog, settings).map((o) => [o.id, o]))

  it("declares model, effort, approval, plan mode, thinking, fast mode and Agent Trace", () => {
    const options = byId()
    expect(Object.keys(options)).toEqual([
      "model",
      "effort",
      "approval_mode",
      "plan_mode",
      "thinking",
      "fast_mode",
      "agent_trace",
    ])
    expect(options.agent_trace).toMatchObject({ kind: "toggle", default: true })
    expect(options.model?.default).toBe("claude-opus-5-5")
    expect(options.model?.choices?.map((c) => c.value)).not.toContain("default")
    expect(options.approval_mode?.default).toBe("supervised")
    expect(options.approval_mode?.choices?.map((c) => c.value)).toEqual([
      "supervised",
      "accept_edits",
      "auto",
      "full",
    ])
    expect(options.thinking).toMatchObject({ kind: "toggle", default: true, appliesAtNextStart: true })
  })
  it("puts ultracode after max for models with xhigh: transient, with the workflow mark", () => {
    const effort = byId().effort
    expect(effort?.choices?.map((c) => c.value)).toEqual([
      "low",
      "medium",
      "high",
      "xhigh",
      "max",
      "ultracode",
    ])
    const opus = effort?.choicesByModel?.["claude-opus-5-5"]
    expect(opus?.at(-1)).toMatchObject({ value: "ultracode", transient: true, mark: "workflow" })
    expect(effort?.choicesByModel?.["claude-opus-4-6"]?.map((c) => c.value)).toEqual([
      "low",
      "medium",
      "high",
      "max",
    ])
    expect(effort?.choicesByModel?.["claude-haiku-4-5"]).toEqual([])
  })
  it("offers the Thinking toggle only where some model can turn thinking off", () => {
    const fiveOnly = catalog.filter((m) => m.thinkingOff === false)
    expect(fiveOnly.length).toBeGreaterThan(0)
    expect(agentOptions(fiveOnly).map((o) => o.id)).not.toContain("thinking")
    // The CLI's own word on a model wins over models.json's.
    const cliSays = modelCatalog({
      models: [{ value: "opus", resolvedModel: "claude-opus-5-5", supportsThinkingOff: true }],
    })
    expect(cliSays.find((m) => m.value === "claude-opus-5-5")?.thinkingOff).toBe(true)
  })
  it("offers no ultracode when workflows are off", () => {
    const effort = byId({ enableWorkflows: false }).effort
    expect(effort?.choices?.map((c) => c.value)).not.toContain("ultracode")
    expect(effort?.choicesByModel?.["claude-opus-5-5"]?.map((c) => c.value)).not.toContain("ultracode")
  })
})

describe("plan mode and the user's default mode", () => {
  const byId = (settings?: Record<string, unknown>) =>
    Object.fromEntries(agentOptions(catalog, settings).map((o) => [o.id, o]))

  it("adopts permissions.defaultMode as the declared defaults; dontAsk and unknown values stay supervised", () => {
    const defaults = (defaultMode: unknown) => {
      const o = byId({ permissions: { defaultMode } })
      return [o.approval_mode?.default, o.plan_mode?.default]
    }
    expect(defaults("acceptEdits")).toEqual(["accept_edits", false])
    expect(defaults("auto")).toEqual(["auto", false])
    expect(defaults("bypassPermissions")).toEqual(["full", false])
    expect(defaults("plan")).toEqual(["supervised", true])
    expect(defaults("dontAsk")).toEqual(["supervised", false])
    expect(defaults(42)).toEqual(["supervised", false])
    expect([byId().approval_mode?.default, byId().plan_mode?.default]).toEqual(["supervised", false])
  })

  it("launches in plan mode while planning, in the approval's mode otherwise", () => {
    const mode = (record: Record<string, unknown>) => {
      const flags = launchFlags(parseOptions(record), catalog)
      return flags[flags.indexOf("--permission-mode") + 1]
    }
    expect(mode({ approval_mode: "accept_edits", plan_mode: true })).toBe("plan")
    expect(mode({ approval_mode: "accept_edits", plan_mode: false })).toBe("acceptEdits")
    expect(mode({ plan_mode: "true" })).toBe("plan")
  })

  it("switches live: plan on and off, and an approval change waits while planning", () => {
    const planning = parseOptions({ approval_mode: "auto", plan_mode: true })
    expect(liveRequests(OPTION_IDS.plan, true, planning)).toEqual([
      { subtype: "set_permission_mode", mode: "plan" },
    ])
    const done = parseOptions({ approval_mode: "auto", plan_mode: false })
    expect(liveRequests(OPTION_IDS.plan, false, done)).toEqual([
      { subtype: "set_permission_mode", mode: "auto" },
    ])
    expect(liveRequests(OPTION_IDS.approval, "full", { ...planning, approval: "full" })).toEqual([])
    expect(liveRequests(OPTION_IDS.approval, "full", { ...done, approval: "full" })).toEqual([
      { subtype: "set_permission_mode", mode: "bypassPermissions" },
    ])
  })
})

describe("promptKeywords", () => {
  it("declares ultracode unless the keyword trigger or workflows are off", () => {
    expect(promptKeywords({}).map((k) => k.word)).toEqual(["ultracode"])
    expect(promptKeywords(undefined).map((k) => k.word)).toEqual(["ultracode"])
    expect(promptKeywords({ workflowKeywordTriggerEnabled: false })).toEqual([])
    expect(promptKeywords({ enableWorkflows: false })).toEqual([])
  })
})

describe("Agent Trace option and knobs", () => {
  it("reads the option as a boolean and gives it back", () => {
    expect(parseOptions({ agent_trace: false })).toEqual({ agentTrace: false })
    expect(parseOptions({ agent_trace: "off" })).toEqual({ agentTrace: false })
    expect(optionsRecord({ agentTrace: false })).toEqual({ agent_trace: false })
    expect(applyOption({ agentTrace: false }, "agent_trace", true)).toEqual({ agentTrace: true })
  })
  it("is on by default; the knob or the option turns it off", () => {
    expect(traceKnobs({})).toEqual({ enabled: true, push: false, pushTimeoutMs: 8_000 })
    expect(traceEnabled({}, traceKnobs({}))).toBe(true)
    expect(traceEnabled({ agentTrace: false }, traceKnobs({}))).toBe(false)
    expect(traceEnabled({ agentTrace: true }, traceKnobs({ CLAUDE_AGENT_TRACE: "0" }))).toBe(false)
  })
  it("pushes only when asked, within the knob's deadline (a bad value keeps the default)", () => {
    expect(
      traceKnobs({ CLAUDE_AGENT_TRACE_PUSH: "1", CLAUDE_AGENT_TRACE_PUSH_TIMEOUT_MS: "2500" }),
    ).toMatchObject({
      push: true,
      pushTimeoutMs: 2_500,
    })
    expect(traceKnobs({ CLAUDE_AGENT_TRACE_PUSH_TIMEOUT_MS: "soon" }).pushTimeoutMs).toBe(8_000)
  })
  it("names the launched model: the option's versioned id, else the default", () => {
    expect(launchedModel({}, catalog)).toBe("claude-opus-5-5")
    expect(launchedModel({ model: "opus" }, catalog)).toBe("claude-opus-5-5")
    expect(launchedModel({ model: "my-model" }, catalog)).toBe("my-model")
  })
})

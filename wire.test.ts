import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { describe, expect, it } from "vitest"
import {
  AskUserQuestionInput,
  conforms,
  decodeLine,
  decodeRecord,
  GetSettingsResponse,
  GetUsageResponse,
  InitializeResponse,
  isKnownControlRequest,
  isKnownFrame,
  WorkflowAgentEntry,
} from "./wire.ts"

const scenarios = readdirSync("testdata").filter((d) => existsSync(`testdata/${d}/stdout.jsonl`))
const linesOf = (path: string) =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")

describe("decodeLine", () => {
  it("answers blank, error or frame and never throws", () => {
    expect(decodeLine("")).toEqual({ kind: "blank" })
    expect(decodeLine("   ")).toEqual({ kind: "blank" })
    expect(decodeLine("{not json").kind).toBe("error")
    expect(decodeLine("[1,2]")).toEqual({ kind: "error", message: "frame is not a JSON object" })
    expect(decodeLine('{"subtype":"init"}')).toEqual({ kind: "error", message: "frame has no type" })
    for (const junk of [
      "null",
      "42",
      '"x"',
      '{"type":"system","subtype":"init"}',
      '{"type":"stream_event","event":7}',
      "\u0000",
      "{".repeat(5000),
    ])
      expect(() => decodeLine(junk)).not.toThrow()
  })

  it("keeps unknown frame types and system subtypes unvalidated", () => {
    const d = decodeLine('{"type":"command_lifecycle","state":"queued"}')
    expect(d).toEqual({ kind: "frame", frame: { type: "command_lifecycle", state: "queued" } })
    if (d.kind === "frame") expect(isKnownFrame(d.frame)).toBe(false)
    const s = decodeLine('{"type":"system","subtype":"brand_new","x":1}')
    expect(s.kind === "frame" && !isKnownFrame(s.frame)).toBe(true)
  })

  it("makes a known frame that fails its schema one diagnostic naming the field", () => {
    const d = decodeLine('{"type":"system","subtype":"init","session_id":"s"}')
    expect(d.kind).toBe("error")
    expect(d.kind === "error" && d.message).toMatch(/^system\/init: model/)
    expect(decodeLine('{"type":"result","subtype":7}').kind).toBe("error")
  })

  it("passes unknown fields through, nested ones included", () => {
    const d = decodeLine(
      JSON.stringify({
        type: "assistant",
        message: {
          id: "m",
          content: [{ type: "text", text: "hi", citations: [1] }],
          usage: { input_tokens: 1, speed: "fast" },
        },
        parent_tool_use_id: null,
        thinking_display: "updates",
      }),
    )
    expect(d.kind).toBe("frame")
    if (d.kind !== "frame" || !isKnownFrame(d.frame) || d.frame.type !== "assistant")
      throw new Error("not an assistant frame")
    expect(d.frame.thinking_display).toBe("updates")
    expect(d.frame.message.content).toEqual([{ type: "text", text: "hi", citations: [1] }])
    expect(d.frame.message.usage).toEqual({ input_tokens: 1, speed: "fast" })
  })

  it.each(scenarios)("decodes every stdout line of the %s recording", (scenario) => {
    for (const line of linesOf(`testdata/${scenario}/stdout.jsonl`)) {
      const d = decodeLine(line)
      expect(d.kind, d.kind === "error" ? d.message : line.slice(0, 100)).toBe("frame")
    }
  })

  it("narrows control requests the session answers", () => {
    const line = scenarios
      .flatMap((s) => linesOf(`testdata/${s}/stdout.jsonl`))
      .find((l) => l.includes('"subtype":"can_use_tool"')) as string
    const d = decodeLine(line)
    if (d.kind !== "frame" || !isKnownFrame(d.frame) || d.frame.type !== "control_request")
      throw new Error("no can_use_tool")
    const request = d.frame.request
    expect(isKnownControlRequest(request)).toBe(true)
    if (isKnownControlRequest(request) && request.subtype === "can_use_tool") {
      expect(typeof request.tool_name).toBe("string")
      expect(request.input).toBeTypeOf("object")
    }
    const other = decodeLine(
      '{"type":"control_request","request_id":"r","request":{"subtype":"ui_open","x":1}}',
    )
    expect(
      other.kind === "frame" && isKnownFrame(other.frame) && other.frame.type === "control_request",
    ).toBe(true)
    if (other.kind === "frame" && isKnownFrame(other.frame) && other.frame.type === "control_request")
      expect(isKnownControlRequest(other.frame.request)).toBe(false)
  })
})

describe("stored records", () => {
  const jsonl = (dir: string): string[] =>
    readdirSync(dir).flatMap((n) => {
      const p = `${dir}/${n}`
      return statSync(p).isDirectory() ? jsonl(p) : p.endsWith(".jsonl") ? [p] : []
    })

  it("decodes every transcript record of the recordings", () => {
    const files = scenarios
      .filter((s) => existsSync(`testdata/${s}/projects`))
      .flatMap((s) => jsonl(`testdata/${s}/projects`))
    expect(files.length).toBeGreaterThan(0)
    for (const file of files)
      for (const line of linesOf(file)) {
        const d = decodeRecord(line)
        expect(d.kind, `${file}: ${d.kind === "error" ? d.message : ""}`).toBe("record")
      }
  })

  it("reports a torn last line as one error and keeps unknown record fields", () => {
    expect(decodeRecord('{"type":"user","message":{"role":"us').kind).toBe("error")
    const d = decodeRecord('{"type":"custom-title","customTitle":"Mine","sessionId":"s","extra":1}')
    expect(d).toEqual({
      kind: "record",
      record: { type: "custom-title", customTitle: "Mine", sessionId: "s", extra: 1 },
    })
    expect(decodeRecord('{"type":"queue-operation","operation":"enqueue"}').kind).toBe("record")
  })
})

describe("responses", () => {
  it("reads the recorded initialize response, keeping fields it does not name", () => {
    const line = linesOf(`testdata/${scenarios[0]}/stdout.jsonl`).find((l) =>
      l.includes('"type":"control_response"'),
    ) as string
    const body = JSON.parse(line).response.response
    const init = InitializeResponse.parse(body)
    expect(init.models?.length).toBeGreaterThan(0)
    expect(init.models?.[0]).toHaveProperty("value")
    expect(init.current_permission_mode).toBe("default")
    expect(
      (init as Record<string, unknown>).capabilities ?? (init as Record<string, unknown>).pid,
    ).toBeDefined()
  })

  it("reads get_settings, get_usage and AskUserQuestion input", () => {
    expect(
      GetSettingsResponse.parse({
        effective: {},
        sources: [],
        applied: { effort: "xhigh", ultracode: false },
      }).applied?.ultracode,
    ).toBe(false)
    expect(
      GetUsageResponse.parse({
        session: {},
        subscription_type: null,
        rate_limits_available: false,
        rate_limits: null,
        behaviors: null,
      }).rate_limits,
    ).toBeNull()
    const q = AskUserQuestionInput.parse({
      questions: [
        {
          question: "Which color?",
          header: "Color",
          multiSelect: false,
          options: [{ label: "Blue", description: "b" }],
        },
      ],
    })
    expect(q.questions[0]?.options?.[0]?.label).toBe("Blue")
  })

  it("checks a value without copying it (conforms)", () => {
    const entry = { type: "workflow_agent", index: 1, extra: { deep: true } }
    expect(conforms(WorkflowAgentEntry, entry)).toBe(true)
    expect(conforms(WorkflowAgentEntry, { type: "workflow_agent" })).toBe(false)
  })
})

/**
 * A tool call's started and finished objects are built by assignment
 * (map/calls.ts): they must be, key for key and in the same order (the
 * host's JSON), the objects the literals of spreads they replaced made. A
 * fast-check property over every optional field present or absent.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ToolCall } from "../sdk/protocol.ts"
import type { ToolDescription, ToolResultInfo } from "../tools.ts"
import { finishedCall, startedCall } from "./calls.ts"

const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined })
const description: fc.Arbitrary<ToolDescription> = fc.record({
  kind: fc.constantFrom("edit", "execute", "read", "other"),
  title: fc.string(),
  path: opt(fc.string()),
  diff: opt(fc.string()),
  new_text: opt(fc.string()),
}) as fc.Arbitrary<ToolDescription>
const result: fc.Arbitrary<ToolResultInfo> = fc.record({
  status: fc.constantFrom("Completed", "Failed", "Cancelled"),
  output: fc.oneof(fc.constant(undefined), fc.string(), fc.dictionary(fc.string(), fc.string())),
  output_text: fc.string(),
  exit_code: opt(fc.integer()),
  diff: opt(fc.string()),
}) as fc.Arbitrary<ToolResultInfo>

// What map/calls.ts wrote before: literals of conditional spreads.
const spreadStarted = (
  id: string,
  name: string,
  input: unknown,
  d: ToolDescription,
  taskId?: string,
): ToolCall => ({
  id,
  name,
  kind: d.kind,
  title: d.title,
  input,
  ...(d.diff === undefined ? {} : { diff: d.diff }),
  ...(d.new_text === undefined ? {} : { new_text: d.new_text }),
  ...(d.path === undefined ? {} : { path: d.path }),
  status: "Running",
  ...(taskId === undefined ? {} : { task_id: taskId }),
})
const spreadFinished = (started: ToolCall, r: ToolResultInfo): ToolCall => ({
  ...started,
  status: r.status,
  output: r.output,
  output_text: r.output_text,
  ...(r.exit_code === undefined ? {} : { exit_code: r.exit_code }),
  ...(r.diff === undefined ? {} : { diff: r.diff }),
})
const stub = (id: string): ToolCall => ({
  id,
  name: "",
  kind: "other",
  title: "Tool",
  input: {},
  status: "Running",
})
const sameObject = (a: unknown, b: unknown) => {
  expect(JSON.stringify(a)).toBe(JSON.stringify(b))
  expect(Object.keys(a as object)).toEqual(Object.keys(b as object))
}

describe("a tool call's objects", () => {
  it("are the spreads' objects, key order and all", () => {
    fc.assert(
      fc.property(
        fc.string(),
        description,
        opt(fc.string()),
        result,
        fc.boolean(),
        (id, d, taskId, r, known) => {
          const started = startedCall(id, "Edit", { a: 1 }, d, taskId)
          sameObject(started, spreadStarted(id, "Edit", { a: 1 }, d, taskId))
          const from = known ? started : stub(id)
          sameObject(finishedCall(from, r), spreadFinished(from, r))
        },
      ),
      { numRuns: 2000 },
    )
  })
})

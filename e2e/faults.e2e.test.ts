/**
 * The fault matrix end to end (e2e/fault-cases.ts): the fast cases in
 * `npm test`, every case under `npm run faults` (FAULTS=all), which prints
 * the table (case, outcome, time to end, next prompt ok, history, leftovers)
 * and writes it to .cache/faults-table.md.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { FAULT_CASES } from "./fault-cases.ts"
import { type FaultResult, faultTable, runFaultCase } from "./fault-run.ts"
import { repoRoot, strayClaudes } from "./harness.ts"

const all = process.env.FAULTS === "all"
const only = process.env.FAULTS_ONLY
const cases = FAULT_CASES.filter((c) => (only ? c.name.includes(only) : all || c.fast))
const results: FaultResult[] = []

afterAll(() => {
  const table = faultTable(results)
  if (all || only) {
    mkdirSync(join(repoRoot, ".cache"), { recursive: true })
    writeFileSync(join(repoRoot, ".cache", "faults-table.md"), `${table}\n`)
    const failing = results.filter((r) => r.problems.length > 0).length
    console.log(
      `${table}\n\nfaults: ${results.length} cases, ${results.length - failing} held, ${failing} did not`,
    )
  }
  expect(strayClaudes()).toEqual([])
})

describe("the fault matrix: every run ends, the session recovers, nothing is left behind", () => {
  it("has at least 50 cases", () => {
    expect(FAULT_CASES.length).toBeGreaterThanOrEqual(50)
    expect(new Set(FAULT_CASES.map((c) => c.name)).size).toBe(FAULT_CASES.length)
  })

  it.each(cases.map((c) => [c.name, c] as const))(
    "%s",
    async (_name, c) => {
      const result = await runFaultCase(c)
      results.push(result)
      expect(result.problems).toEqual([])
    },
    120_000,
  )
})

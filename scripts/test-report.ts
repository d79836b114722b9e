/**
 * `npm test`'s closing summary (a vitest reporter): one line per project
 * (passed, failed, skipped, the sum of its files' durations), then every
 * failure again with its project, since CI keeps only the tail of what ran.
 * It writes the counts summed over every project to .tmp/vitest-report.json,
 * from which .ci/run prints its closing line.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { SerializedError } from "vitest"
import type { Reporter, TestModule } from "vitest/node"

interface ProjectCounts {
  name: string
  passed: number
  failed: number
  skipped: number
  files: number
  /** The sum of its files' durations (wall time, files in parallel), in seconds. */
  seconds: number
}

const firstLine = (text: string): string =>
  (text.split("\n").find((l) => l.trim() !== "") ?? "").trim().slice(0, 240)

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandled: ReadonlyArray<SerializedError>): void {
    const projects = new Map<string, ProjectCounts>()
    const files: Array<{ project: string; file: string; seconds: number }> = []
    const failures: string[] = []
    for (const module of modules) {
      const name = module.project.name
      const counts = projects.get(name) ?? { name, passed: 0, failed: 0, skipped: 0, files: 0, seconds: 0 }
      projects.set(name, counts)
      counts.files++
      counts.seconds += module.diagnostic().duration / 1000
      files.push({
        project: name,
        file: module.relativeModuleId,
        seconds: module.diagnostic().duration / 1000,
      })
      const where = `[${name}] ${module.relativeModuleId}`
      for (const test of module.children.allTests()) {
        const result = test.result()
        if (result.state === "passed") counts.passed++
        else if (result.state === "failed") {
          counts.failed++
          failures.push(`${where} > ${test.fullName}: ${firstLine(result.errors[0]?.message ?? "")}`)
        } else counts.skipped++
      }
      // A file that failed outside its tests (an import, a hook) counts as one failure.
      for (const error of module.errors()) {
        counts.failed++
        failures.push(`${where}: ${firstLine(error.message ?? "")}`)
      }
    }
    for (const error of unhandled) failures.push(`unhandled: ${firstLine(error.message ?? "")}`)
    const all = [...projects.values()].sort((a, b) => a.name.localeCompare(b.name))
    const sum = (key: "passed" | "failed" | "skipped") => all.reduce((n, p) => n + p[key], 0)
    const summary = {
      numPassedTests: sum("passed"),
      numFailedTests: sum("failed") + unhandled.length,
      numPendingTests: sum("skipped"),
      numTodoTests: 0,
      numTotalTests: sum("passed") + sum("failed") + sum("skipped"),
      success: failures.length === 0 && sum("passed") > 0,
      projects: all.map((p) => ({ ...p, seconds: Math.round(p.seconds) })),
      /** Slowest first: where the time goes. */
      files: files
        .sort((a, b) => b.seconds - a.seconds)
        .map((f) => ({ ...f, seconds: Math.round(f.seconds * 10) / 10 })),
    }
    const root = join(import.meta.dirname, "..")
    mkdirSync(join(root, ".tmp"), { recursive: true })
    writeFileSync(join(root, ".tmp", "vitest-report.json"), `${JSON.stringify(summary, null, 2)}\n`)
    console.log("\n=== projects (files' durations summed: files run in parallel)")
    for (const p of all)
      console.log(
        `  ${p.name.padEnd(22)} ${String(p.files).padStart(3)} files  ${p.passed} passed, ${p.failed} failed` +
          `${p.skipped ? `, ${p.skipped} skipped` : ""}  ${Math.round(p.seconds)} s`,
      )
    for (const line of failures) console.log(`  ✗ ${line}`)
  }
}

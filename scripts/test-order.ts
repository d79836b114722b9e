/**
 * The order a run starts its files in (vitest's `sequence.sequencer`): the
 * e2e files of every leg first, longest first (last run's duration, else the
 * larger file), so the long ones never start last and leave one core idle at
 * the end; then the `solo` files; then each `unit` project's files in one
 * stretch, since a worker keeps its modules only while the next file it gets
 * is of the same project.
 */
import { statSync } from "node:fs"
import { relative } from "node:path"
import { BaseSequencer, type TestSpecification } from "vitest/node"

const KINDS = ["e2e", "solo", "unit"]

const kindOf = (spec: TestSpecification): number => {
  const kind = KINDS.indexOf(spec.project.name.split("/")[0] ?? "")
  return kind < 0 ? KINDS.length : kind
}

export class MatrixSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const weight = new Map(files.map((spec) => [spec, this.weightOf(spec)]))
    return [...files].sort(
      (a, b) =>
        kindOf(a) - kindOf(b) ||
        (kindOf(a) === 0 ? 0 : a.project.name.localeCompare(b.project.name)) ||
        (weight.get(b) ?? 0) - (weight.get(a) ?? 0),
    )
  }

  /** Last run's duration in ms when known (a failure first), else the file's size (bytes, a few per ms). */
  private weightOf(spec: TestSpecification): number {
    const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`
    const last = this.ctx.cache.getFileTestResults(key)
    if (last) return last.failed ? Number.MAX_SAFE_INTEGER : last.duration
    try {
      return statSync(spec.moduleId).size
    } catch {
      return 0
    }
  }
}

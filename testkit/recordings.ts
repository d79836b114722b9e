/**
 * The recorded CLI streams (`testdata/<scenario>/stdout*.jsonl`) as the
 * property tests, the fuzz run and the live benchmarks replay them: each
 * file's lines, or one long stream made of every scenario's `stdout.jsonl`
 * repeated with its message, tool, request and agent ids made new each
 * time, so no mapper sees an id twice (as a long session would not).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

export interface Recording {
  readonly name: string
  readonly lines: ReadonlyArray<string>
}

const linesOf = (path: string): string[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")

/** Every `<root>/<scenario>/stdout*.jsonl` (the main stream and its variants), blank lines left out. */
export const recordings = (root = "testdata"): Recording[] =>
  readdirSync(root)
    .sort()
    .flatMap((scenario) =>
      readdirSync(join(root, scenario))
        .filter((f) => /^stdout(\..+)?\.jsonl$/.test(f))
        .sort()
        .map((f) => ({ name: `${scenario}/${f}`, lines: linesOf(join(root, scenario, f)) })),
    )

/** An id the scripted model or the CLI made, with any suffix a repetition already gave it. */
const IDS = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16}(?:_[A-Za-z0-9]+)*)\b/g

/** The scenarios under `<root>/testdata` that hold a recorded stdout, in name order. */
export const recordingNames = (root = "."): string[] =>
  readdirSync(join(root, "testdata"))
    .filter((d) => existsSync(join(root, "testdata", d, "stdout.jsonl")))
    .sort()

/** Each scenario's recorded stdout lines, in name order, its ids made its own (the scenarios share the scripted model's). */
export const scenarioLines = (root = "."): string[][] => {
  const scenarios = recordingNames(root).map((d, k) =>
    linesOf(join(root, "testdata", d, "stdout.jsonl")).map((l) => l.replace(IDS, `$1_s${k}`)),
  )
  if (scenarios.length === 0) throw new Error(`no recordings under ${root}/testdata/*/stdout.jsonl`)
  return scenarios
}

/** Every scenario's lines (scenarioLines), one after another. */
export const recordedLines = (root = "."): string[] => scenarioLines(root).flat()

/** Repetition `rep` of the recorded lines: their ids made new. */
export const repetition = (base: ReadonlyArray<string>, rep: number): string[] =>
  base.map((line) => line.replace(IDS, `$1_${rep}`))

/** The recorded lines repeated, ids made new each repetition, until there are at least `min`. */
export const repeatedLines = (min: number, root = "."): string[] => {
  const base = recordedLines(root)
  const lines: string[] = []
  for (let rep = 0; lines.length < min; rep++) lines.push(...repetition(base, rep))
  return lines
}

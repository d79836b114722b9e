/**
 * The recorded CLI streams the live benchmarks replay: every
 * `testdata/<scenario>/stdout.jsonl`, in name order, repeated with message,
 * tool, request and agent ids made new each time so no mapper sees an id
 * twice (as a long session would not).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"

const IDS = /\b(msg_[A-Za-z0-9_]+|toolu_[A-Za-z0-9_]+|req_[A-Za-z0-9_]+|a[0-9a-f]{16})\b/g

/** The scenarios under `<root>/testdata` that hold a recorded stdout, in name order. */
export const recordingNames = (root = "."): string[] =>
  readdirSync(join(root, "testdata"))
    .filter((d) => existsSync(join(root, "testdata", d, "stdout.jsonl")))
    .sort()

/** Every recorded stdout line under `<root>/testdata`, blank lines left out. */
export const recordedLines = (root = "."): string[] => {
  const lines = recordingNames(root).flatMap((d) =>
    readFileSync(join(root, "testdata", d, "stdout.jsonl"), "utf8")
      .split("\n")
      .filter((l) => l.trim() !== ""),
  )
  if (lines.length === 0) throw new Error(`no recordings under ${root}/testdata/*/stdout.jsonl`)
  return lines
}

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

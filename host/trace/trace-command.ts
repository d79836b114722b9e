/**
 * `report --base <rev> [--head <rev>] [--ref <name>] [--repo <dir>]`: the
 * Agent Trace report of a range as Markdown (trace/report.ts), for every
 * front end that offers it: `npm run trace --` (trace-report.ts), the
 * terminal front end, and the Claude Code plugin's script (hook-main.ts).
 * It reads only. Exit 0 with the report, or with a short notice when git
 * cannot read the range; 2 on a usage error.
 */
import { parseArgs } from "node:util"
import { Effect } from "effect"
import { readReport, renderReport } from "../../trace/report.ts"
import { nodeGit } from "./node-git.ts"

export const USAGE =
  "usage: npm run trace -- report --base <rev> [--head <rev>] [--ref <notes ref, default agent-trace>] [--repo <dir>]"

export interface Outcome {
  readonly code: 0 | 2
  readonly stdout: string
  readonly stderr: string
}

/** The command's whole run for the given arguments (`usage` names how the caller was started). */
export const traceCommand = async (
  argv: ReadonlyArray<string>,
  cwd = process.cwd(),
  usage = USAGE,
): Promise<Outcome> => {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    return { code: 2, stdout: "", stderr: `${(error as Error).message}\n${usage}\n` }
  }
  const [verb, ...rest] = parsed.positionals
  const base = parsed.values.base
  if (verb !== "report" || rest.length > 0 || base === undefined || base === "")
    return { code: 2, stdout: "", stderr: `${usage}\n` }
  const report = await Effect.runPromise(
    readReport(nodeGit(), parsed.values.repo ?? cwd, {
      base,
      ...(parsed.values.head ? { head: parsed.values.head } : {}),
      ...(parsed.values.ref ? { ref: parsed.values.ref } : {}),
    }),
  )
  return { code: 0, stdout: renderReport(report), stderr: "" }
}

const parse = (argv: ReadonlyArray<string>) =>
  parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      base: { type: "string" },
      head: { type: "string" },
      ref: { type: "string" },
      repo: { type: "string" },
    },
  })

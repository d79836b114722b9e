/**
 * The Claude Code plugin's one script, bundled from this file by
 * scripts/build-trace-plugin.mjs into
 * agent-trace-plugin/skills/agent-trace-report/scripts/agent-trace.mjs, which
 * plain `node` runs (no TypeScript tooling):
 *
 *   agent-trace.mjs hook                 one hook call, the CLI's payload on stdin (hook-call.ts)
 *   agent-trace.mjs report --base <rev>  the range report (trace-command.ts), for the skill
 *
 * A hook call always exits 0 and prints nothing.
 */
import { readFileSync } from "node:fs"
import { hookCall } from "./hook-call.ts"
import { traceCommand } from "./trace-command.ts"

const PLUGIN_USAGE =
  "usage: node agent-trace.mjs report --base <rev> [--head <rev>] [--ref <notes ref, default agent-trace>] [--repo <dir>]"

const main = async (argv: ReadonlyArray<string>) => {
  if (argv[0] === "hook") {
    let stdin = ""
    try {
      stdin = readFileSync(0, "utf8")
    } catch {}
    await hookCall(stdin, process.env)
    process.exit(0)
  }
  const outcome = await traceCommand(argv, process.cwd(), PLUGIN_USAGE)
  process.stdout.write(outcome.stdout)
  process.stderr.write(outcome.stderr)
  process.exitCode = outcome.code
}

await main(process.argv.slice(2))

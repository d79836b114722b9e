/**
 * `npm run trace -- report --base <rev> [--head <rev>] [--ref <name>] [--repo <dir>]`:
 * the Agent Trace report of a range as Markdown on stdout (trace-command.ts).
 */
import { traceCommand } from "./trace-command.ts"

export { type Outcome, traceCommand, USAGE } from "./trace-command.ts"

if (import.meta.url === `file://${process.argv[1]}`) {
  const outcome = await traceCommand(process.argv.slice(2))
  process.stdout.write(outcome.stdout)
  process.stderr.write(outcome.stderr)
  process.exitCode = outcome.code
}

// Named scenarios: a model script for the scripted API plus the driver steps
// (user messages, permission answers, control requests) that run the real CLI
// through it. Used by the recorder (record.ts) and by the e2e tests. What a
// scenario is and how one runs: scenario-run.ts; the scenarios: scenarios/.

import type { ScenarioDef } from "./scenario-run.ts"
import {
  compact,
  interrupt,
  pluginTool,
  resume,
  subagentBackground,
  subagentForeground,
  askUser,
} from "./scenarios/agents.ts"
import { bashAllow, bashDeny, tasks, textThinking, todo, writeEdit } from "./scenarios/basic.ts"
import { localCommands } from "./scenarios/commands.ts"
import { apiRetry, rateLimit, workflow } from "./scenarios/limits.ts"

export * from "./scenario-run.ts"
export * from "./scenarios/agents.ts"
export * from "./scenarios/basic.ts"
export * from "./scenarios/commands.ts"
export * from "./scenarios/limits.ts"
export { isControlRequest, isResult, toolResultTexts } from "./cli.ts"

/** Every scenario the recorder knows, in the order `npm run record -- all` runs them. */
export const SCENARIOS: readonly ScenarioDef[] = [
  textThinking,
  bashAllow,
  bashDeny,
  writeEdit,
  todo,
  tasks,
  subagentForeground,
  subagentBackground,
  askUser,
  interrupt,
  resume,
  compact,
  pluginTool,
  rateLimit,
  apiRetry,
  workflow,
  localCommands,
]

export function scenarioByName(name: string): ScenarioDef {
  const s = SCENARIOS.find((x) => x.name === name)
  if (!s) throw new Error(`unknown scenario ${name}; known: ${SCENARIOS.map((x) => x.name).join(", ")}`)
  return s
}

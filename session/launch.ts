/**
 * The `claude` command line of one session process, in the order the notes
 * give it. Pure: the option flags (options.ts) and the launch knobs
 * (config.ts) arrive already turned into arguments. A flag the CLI lacks
 * (cli-version.ts) is left off: an unknown option makes the CLI exit before
 * its first frame.
 */
import { type CliSupport, FULL_SUPPORT } from "../cli-version.ts"
import type { SessionLaunch } from "../sdk/protocol.ts"
import type { StartMode } from "../types.ts"

/** The fixed head: headless stream-json both ways, prompts over stdio. */
export const PROTOCOL_ARGS: ReadonlyArray<string> = [
  "--output-format",
  "stream-json",
  "--input-format",
  "stream-json",
  "--verbose",
  "--include-partial-messages",
  "--permission-prompt-tool",
  "stdio",
]

/** How the process joins its conversation. `--session-id` goes with `--resume` only when forking. */
export const startArgs = (start: StartMode): string[] => {
  switch (start.kind) {
    case "new":
      return ["--session-id", start.cliId]
    case "resume":
      return ["--resume", start.cliId]
    case "resumeAt":
      return ["--resume", start.cliId, "--resume-session-at", start.at]
    case "fork":
      // 2.1.332 takes --resume-session-at with a fork: the copy ends at that message.
      return [
        "--resume",
        start.origin,
        ...(start.at === undefined ? [] : ["--resume-session-at", start.at]),
        "--fork-session",
        "--session-id",
        start.cliId,
      ]
  }
}

export interface LaunchArgsInput {
  readonly start: StartMode
  /** The workspace: the process's cwd and its first `--add-dir`. */
  readonly workspace: string
  /** `--model`, `--effort`, `--permission-mode`, thinking, `--settings` (options.launchFlags). */
  readonly optionFlags: ReadonlyArray<string>
  /** `--mcp-config`…, `--strict-mcp-config`, `--setting-sources` (from the launch knobs). */
  readonly knobFlags?: ReadonlyArray<string>
  /** More directories (CLAUDE_ADD_DIRS), each given its own flag. */
  readonly addDirs?: ReadonlyArray<string>
  /** The user's own arguments (CLAUDE_EXTRA_ARGS), last. */
  readonly extraArgs?: ReadonlyArray<string>
  /** What the CLI accepts (default: everything). */
  readonly cli?: CliSupport
}

/**
 * Every list value gets its own flag: a list flag keeps eating words until
 * the next flag, so `--add-dir a b` would swallow whatever follows it.
 */
export const repeatFlag = (flag: string, values: ReadonlyArray<string>): string[] =>
  values.flatMap((value) => [flag, value])

export const launchArgs = (input: LaunchArgsInput): string[] => {
  const dirs = [input.workspace, ...(input.addDirs ?? []).filter((dir) => dir !== input.workspace)]
  return [
    ...PROTOCOL_ARGS,
    ...startArgs(input.start),
    // Subagents' text and thinking reach the stream only with this flag (2.1.211 and later).
    ...((input.cli ?? FULL_SUPPORT).has("forwardSubagentText") ? ["--forward-subagent-text"] : []),
    ...input.optionFlags,
    ...(input.knobFlags ?? []),
    ...repeatFlag("--add-dir", dirs),
    ...(input.extraArgs ?? []),
  ]
}

/** The `initialize` control request: each field only when it has content. */
export const initializeRequest = (params: {
  readonly hasTools: boolean
  readonly appendSystemPrompt: string | undefined
}): Record<string, unknown> => ({
  subtype: "initialize",
  ...(params.hasTools
    ? { sdkMcpServers: [MCP_SERVER_NAME], sdkMcpServerConfigs: { [MCP_SERVER_NAME]: { timeout: 3_600_000 } } }
    : {}),
  ...(params.appendSystemPrompt ? { appendSystemPrompt: params.appendSystemPrompt } : {}),
})

/** The in-process MCP server that carries the host's plugin tools. */
export const MCP_SERVER_NAME = "convergence"

/**
 * CLAUDE_APPEND_SYSTEM_PROMPT first, then the front end's text for this
 * session, then the host's instructions; undefined when all are empty. One
 * text: `initialize`'s `appendSystemPrompt` wins over the flag, so they join.
 */
export const appendSystemPrompt = (...parts: ReadonlyArray<string | undefined>): string | undefined => {
  const kept = parts.filter((part): part is string => !!part && part.trim() !== "")
  return kept.length > 0 ? kept.join("\n\n") : undefined
}

/**
 * A session's own launch settings as flags: `--system-prompt` replaces the
 * CLI's prompt, `--allowedTools` (one flag a rule: a list flag swallows
 * what follows), `--max-turns`. Its extra directories join the `--add-dir`s.
 */
export const sessionLaunchFlags = (launch: SessionLaunch | undefined): string[] => [
  ...(launch?.systemPrompt !== undefined ? ["--system-prompt", launch.systemPrompt] : []),
  ...repeatFlag("--allowedTools", launch?.allowedTools ?? []),
  ...(launch?.maxTurns !== undefined ? ["--max-turns", String(launch.maxTurns)] : []),
]

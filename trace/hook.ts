/**
 * Agent Trace from inside Claude Code: one call of the Claude Code plugin's
 * hooks (agent-trace-plugin/, each call its own `node` process through
 * host/trace/hook-main.ts), with the same rules as the provider's tracker and
 * the same code (commits.ts, notes.ts, push.ts).
 *
 * - `UserPromptSubmit`: HEAD of every repository the session edited is taken
 *   as the turn's start, so a commit the person made between turns is never
 *   the agent's.
 * - `PostToolUse` of Write, Edit, MultiEdit, NotebookEdit: the lines written
 *   are remembered per repository (the file's own, so a subagent's worktree
 *   is followed), file and agent (`main` or the payload's `agent_type`), with
 *   the agent's model from its transcript.
 * - `PostToolUse` of Bash, and `Stop`: a note for each new commit; after a
 *   Bash `git push`, the notes pushed when `CLAUDE_AGENT_TRACE_PUSH=1`.
 * - `SessionEnd`: the same, only when a turn was cut off before its `Stop`
 *   (after a `Stop`, a commit can only be the person's).
 *
 * State (fingerprints, agents, the HEADs last seen, the CLI's version)
 * lives in storage under `trace:<CLI session id>`, so every hook call and a
 * resumed session see it. Nothing is printed: a warning goes to the log,
 * which the Node side shows only when asked to.
 */
import { Effect } from "effect"
import { z } from "zod"
import { traceKnobs } from "../options.ts"
import { Env, Fs, Log, Storage } from "../sdk/plugin-api.ts"
import type { ToolCall } from "../sdk/protocol.ts"
import { type Heads, noteNewCommits, refreshHeads, rememberEdit } from "./commits.ts"
import { type Fingerprints, MAIN_AGENT, writtenBy } from "./fingerprints.ts"
import { brokerGit, headOf } from "./git.ts"
import { repositoryLookup } from "./heads.ts"
import { agentTranscript, transcriptFacts } from "./hook-transcript.ts"
import type { NoteContext } from "./notes.ts"
import { pushAfter } from "./push.ts"
import { type AgentInfo, CLI_SESSION_URL } from "./record.ts"
import { traceKey } from "./tracker.ts"

/** The fields of a hook's payload this reads (2.1.282 and 2.1.332 send them alike). */
export const HookInput = z.object({
  session_id: z.string().min(1),
  hook_event_name: z.string(),
  transcript_path: z.string().optional(),
  tool_name: z.string().optional(),
  tool_input: z.unknown().optional(),
  tool_response: z.unknown().optional(),
  tool_use_id: z.string().optional(),
  /** Only inside a subagent. */
  agent_id: z.string().optional(),
  agent_type: z.string().optional(),
})
export type HookInput = z.infer<typeof HookInput>

const HookState = z.object({
  prints: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.string()))).default({}),
  agents: z.record(z.string(), z.object({ model: z.string().optional() })).default({}),
  /** Repository root → HEAD last seen (null: no commit yet). */
  heads: z.record(z.string(), z.string().nullable()).default({}),
  toolVersion: z.string().optional(),
  /** A prompt started a turn whose `Stop` has not come. */
  turnOpen: z.boolean().default(false),
})
type HookState = z.infer<typeof HookState>

export const EDIT_MATCHER = "Write|Edit|MultiEdit|NotebookEdit"

/** The finished call a `PostToolUse` payload describes (the hook fires only for a call that succeeded). */
export const callOf = (input: HookInput): ToolCall => ({
  id: input.tool_use_id ?? "",
  name: input.tool_name ?? "",
  kind: "edit",
  title: input.tool_name ?? "",
  input: input.tool_input,
  output: input.tool_response,
  status: "Completed",
})

const headsOf = (state: HookState): Heads =>
  new Map(Object.entries(state.heads).map(([root, head]) => [root, head ?? undefined]))

/** Work one hook call through; never fails (a failure is a log line). */
export const runHook = (raw: unknown) =>
  Effect.gen(function* () {
    const log = yield* Log
    const parsed = HookInput.safeParse(raw)
    if (!parsed.success) return yield* log.warn("agent trace hook: not a hook payload", parsed.error.message)
    const input = parsed.data
    const env = yield* Env
    const knobs = traceKnobs(yield* env.all)
    if (!knobs.enabled) return
    const storage = yield* Storage
    const fs = yield* Fs
    const git = yield* brokerGit
    const key = traceKey(input.session_id)
    const stored = HookState.safeParse((yield* storage.get(key)) ?? {})
    const state: HookState = stored.success ? stored.data : HookState.parse({})
    const prints: Fingerprints = state.prints
    const agents: Record<string, AgentInfo> = state.agents
    const heads = headsOf(state)
    const { repositoryFor } = repositoryLookup(git)
    const headNow = (root: string) => headOf(git, root)
    const roots = () => Object.keys(prints)
    const save = Effect.suspend(() =>
      storage.set(key, {
        ...state,
        heads: Object.fromEntries([...heads].map(([root, head]) => [root, head ?? null])),
      }),
    )
    const noting: NoteContext = {
      git,
      log,
      sessionId: input.session_id,
      sessionUrl: CLI_SESSION_URL,
      prints,
      agents,
      model: () => agents[MAIN_AGENT]?.model,
      toolVersion: () => state.toolVersion,
      notice: (level, text) => log.warn(`${level}: ${text}`),
    }
    const noteCommits = Effect.suspend(() => noteNewCommits(noting, heads, roots(), headNow))

    /** The agent's model and the CLI's version, from the agent's transcript, until both are known. */
    const learnFacts = (agent: string) =>
      Effect.gen(function* () {
        if (input.transcript_path === undefined) return
        if (agents[agent]?.model !== undefined && state.toolVersion !== undefined) return
        const path = agentTranscript(input.transcript_path, input.session_id, input.agent_id)
        const facts = yield* transcriptFacts(fs, path)
        agents[agent] = facts.model === undefined ? (agents[agent] ?? {}) : { model: facts.model }
        state.toolVersion ??= facts.version
      })

    // Before the session's first edit there is nothing to look at, and no state to keep.
    if (roots().length === 0 && input.hook_event_name !== "PostToolUse") return
    switch (input.hook_event_name) {
      case "UserPromptSubmit":
        state.turnOpen = true
        yield* refreshHeads(heads, roots(), headNow)
        return yield* save
      case "PostToolUse": {
        const call = callOf(input)
        const wrote = writtenBy(call)
        if (wrote !== undefined) {
          const agent = input.agent_type ?? MAIN_AGENT
          const repo = yield* rememberEdit({ git, heads, prints, repositoryFor }, wrote, agent)
          if (repo === undefined) return
          yield* learnFacts(agent)
          return yield* save
        }
        if (input.tool_name !== "Bash" || roots().length === 0) return
        yield* noteCommits
        yield* save
        return yield* pushAfter(
          {
            git,
            roots: roots(),
            settings: Effect.succeed({ enabled: knobs.push, timeoutMs: knobs.pushTimeoutMs }),
            repositoryFor,
            notice: (level, text) => log.warn(`${level}: ${text}`),
          },
          call,
        )
      }
      case "Stop":
      case "SessionEnd": {
        const cutOff = state.turnOpen
        state.turnOpen = false
        if (input.hook_event_name === "Stop" || cutOff) yield* noteCommits
        return yield* save
      }
      default:
        return
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.flatMap(Log, (log) => log.error("agent trace hook failed", String(cause))),
    ),
  )

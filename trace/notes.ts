/**
 * One commit's note: its patch read, its added lines attributed from the
 * session's fingerprints, the record built and checked, and written with
 * `git notes … append -F -`.
 *
 * Rules: no record when no line is an agent's; a record that breaks the
 * schema, or a note git would not write, is one warning notice and no note.
 */
import { Effect } from "effect"
import type { LogShape } from "../sdk/plugin-api.ts"
import type { NoticeLevel } from "../sdk/protocol.ts"
import { additionsOf, attributeFile } from "./attribute.ts"
import { type Fingerprints, MAIN_AGENT } from "./fingerprints.ts"
import { appendNote, commitPatch, type Git } from "./git.ts"
import { type AgentInfo, buildRecord } from "./record.ts"
import { checkRecord } from "./schema.ts"

export interface NoteContext {
  readonly git: Git
  readonly log: LogShape
  readonly sessionId: string
  /** What the conversation urls start with (record.ts; default the host's). */
  readonly sessionUrl?: string
  /** The session's fingerprints and agents, as the tracker holds them now. */
  readonly prints: Fingerprints
  readonly agents: Readonly<Record<string, AgentInfo>>
  /** The main agent's model id. */
  readonly model: () => string | undefined
  readonly toolVersion: () => string | undefined
  readonly notice: (level: NoticeLevel, text: string) => Effect.Effect<void>
}

const short = (sha: string) => sha.slice(0, 7)

/** Write the note of commit `sha` in the repository at `root`, when the session wrote any of its lines. */
export const noteCommit = (ctx: NoteContext, root: string, sha: string) =>
  Effect.gen(function* () {
    const patch = yield* commitPatch(ctx.git, root, sha)
    if (patch === undefined) return
    const files = additionsOf(patch).map(({ path, added }) => ({
      path,
      ranges: attributeFile(added, ctx.prints[root]?.[path]),
    }))
    const model = ctx.model()
    const record = buildRecord({
      id: crypto.randomUUID(),
      timestamp: new Date().toISOString(),
      revision: sha,
      sessionId: ctx.sessionId,
      ...(ctx.sessionUrl === undefined ? {} : { sessionUrl: ctx.sessionUrl }),
      toolVersion: ctx.toolVersion() ?? "unknown",
      files,
      agents: { ...ctx.agents, ...(model === undefined ? {} : { [MAIN_AGENT]: { model } }) },
    })
    if (record === undefined) return
    const checked = checkRecord(record)
    if (!checked.ok)
      return yield* ctx.notice(
        "warning",
        `Agent Trace: no record for commit ${short(sha)}, it breaks the schema (${checked.problems.join("; ")})`,
      )
    const note = yield* appendNote(ctx.git, root, sha, JSON.stringify(checked.record))
    if (note.code !== 0)
      return yield* ctx.notice(
        "warning",
        `Agent Trace: could not write the note of commit ${short(sha)}: ${note.stderr.trim() || "git failed"}`,
      )
    yield* ctx.log.info(`agent trace: note on ${short(sha)}`, { root, files: checked.record.files.length })
  })

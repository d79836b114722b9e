/**
 * The provider methods that open, read and reshape conversations: create,
 * resume, fork, read, list, close, and rollback. A resumed, rewound or
 * forked conversation is always the CLI's own stored one (history.ts reads
 * it); the host's session id maps to the CLI's through session state
 * (state.ts: an alias after a rewind to nothing, the prompts sent).
 *
 * Recovery (`recoveryFor`, agent/restart.ts): a process that died after a
 * prompt was written, and a resumed chat, start again as the transcript
 * says (resume, new under the same id, a fresh id under an alias; where the
 * transcript is unreadable, resume and fall back). `storedPromptFor` tells
 * the session whether a prompt a dead process left unread is in the
 * transcript after all (then it is not written again; unreadable: it may be,
 * so it is not written again either).
 */
import { Effect } from "effect"
import { configDirFor } from "../config.ts"
import { RewindImpossible, type SessionError, SessionNotFound } from "../errors.ts"
import * as history from "../history.ts"
import { optionsRecord, parseOptions } from "../options.ts"
import { type Broker, Fs } from "../sdk/plugin-api.ts"
import type { AgentProvider, PluginTool } from "../sdk/protocol.ts"
import * as state from "../state.ts"
import type { Account } from "../instances.ts"
import { type Recovery, refusedConversation } from "../session.ts"
import type { StartMode } from "../types.ts"
import { type AgentContext, type OpenSession, opened } from "./context.ts"
import { forkOf, forkStart, unwrittenFork, withUnwrittenForks } from "./forks.ts"
import { readableDir } from "./grants.ts"
import { restartOf } from "./restart.ts"

/**
 * May the transcript hold the prompt sent with `uuid` (the CLI keeps our uuid
 * as its record's)? Where the plugin cannot read it, it may: never sent twice.
 */
export const storedPromptFor = (acct: Account, cwd: string) => (cliId: string, uuid: string) =>
  Effect.gen(function* () {
    const configDir = yield* configDirFor(acct)
    if (!readableDir(configDir, (yield* Fs).paths.home)) return true
    const stored = yield* history.readPrompts(configDir, cwd, cliId)
    return stored.prompts.some((record) => record.uuid === uuid)
  })

/** The start a relaunch that guessed `--resume` really gets: the transcript decides (agent/restart.ts). */
export const recoveryFor =
  (acct: Account, hostId: string, cwd: string) =>
  (guess: StartMode): Effect.Effect<Recovery, never, Broker> =>
    restartOf(acct, hostId, cwd, guess.cliId, true)

/**
 * The tools and instructions a resume gives an open session, when they differ
 * from what it runs with (a value the call leaves out is kept); undefined when
 * nothing changes.
 */
const reconfigured = (
  open: OpenSession,
  params: {
    readonly tools?: ReadonlyArray<PluginTool> | undefined
    readonly instructions?: string | undefined
  },
): { tools: ReadonlyArray<PluginTool>; instructions: string | undefined } | undefined => {
  const tools = params.tools ?? open.tools
  const instructions = params.instructions ?? open.instructions
  const same = JSON.stringify(tools) === JSON.stringify(open.tools) && instructions === open.instructions
  return same ? undefined : { tools, instructions }
}

type ConversationMethods = Pick<
  AgentProvider,
  | "createSession"
  | "resumeSession"
  | "forkSession"
  | "readSession"
  | "listSessions"
  | "closeSession"
  | "rollback"
>

/** Remember the options a session opened with, for a later fork (none chosen: nothing to keep). */
const keepOptions = (hostId: string, open: OpenSession) => {
  const record = optionsRecord(open.options)
  return Object.keys(record).length > 0 ? state.rememberOptions(hostId, record) : Effect.void
}

/**
 * The CLI resumes from the leaf its last `last-prompt` record names (or
 * below it), and a process writes that record only at its next prompt or
 * its exit: after a rewind, the pre-rewind process's exit named the
 * abandoned branch. A rewound, idle origin process is restarted on its
 * conversation first, which writes the current leaf.
 */
const settleLeaf = (acct: AgentContext["acct"], open: OpenSession, cliId: string, cwd: string) =>
  Effect.gen(function* () {
    if (!open.rewound || !open.live.isRunning() || open.live.runId() !== undefined) return
    const leaf = yield* history.readLeaf(yield* configDirFor(acct), cwd, cliId)
    if (leaf !== undefined) yield* open.live.restart({ kind: "resume", cliId })
    open.rewound = false
  })

export const conversationMethods = (ctx: AgentContext): ConversationMethods => {
  const { acct, call, closeOpen, lookup, openSession, sessions } = ctx

  /**
   * Rewind `open` to just before `itemId`. The item is a prompt this process
   * sent (its native UUID), one stored in the session state (its record
   * uuid, or the prompt index older versions kept), or a user item of
   * `readSession` (its id is the record's uuid). It must be a prompt of the
   * conversation as it stands; the kept prompts are those before it.
   */
  const rollback = Effect.fn("agent.rollback")(function* (sessionId: string, itemId: string) {
    const open = yield* lookup(sessionId)
    const configDir = yield* configDirFor(acct)
    if (!readableDir(configDir, (yield* Fs).paths.home))
      return yield* new RewindImpossible({
        reason: `this account's conversations (${configDir}) lie outside what the plugin may read, and a rewind reads them`,
      })
    const cliId = open.live.cliId()
    const own = yield* history.readPrompts(configDir, open.cwd, cliId)
    // A fork the CLI has not written yet: its prompts are its origin's (agent/forks.ts).
    const fork = own.found ? undefined : yield* unwrittenFork(acct, sessionId, open.cwd)
    const stored = fork ? yield* history.readPrompts(configDir, open.cwd, fork.origin, fork.at) : own
    const sent = yield* state.sentRecordOf(sessionId, itemId)
    const ref = typeof sent === "number" ? sent : (open.sentUuids.get(itemId) ?? sent ?? itemId)
    const point = history.rewindIn(stored, ref)
    if (point === undefined)
      return yield* Effect.fail(
        new RewindImpossible({ reason: `the message ${itemId} is not known to this chat` }),
      )
    if ("refused" in point) return yield* Effect.fail(new RewindImpossible({ reason: point.refused }))
    if (point.resumeAt !== undefined && fork) {
      // Copied again, cut before the prompt: the CLI still has nothing of the fork to resume.
      yield* open.live.restart(forkStart({ ...fork, at: point.resumeAt }, cliId))
      yield* state.moveFork(sessionId, point.resumeAt)
      yield* state.keepSent(sessionId, point.kept, point.kept.size)
    } else if (point.resumeAt !== undefined) {
      yield* open.live.restart({ kind: "resumeAt", cliId, at: point.resumeAt })
      open.rewound = true
      yield* state.keepSent(sessionId, point.kept, point.kept.size)
    } else {
      // Nothing left: a new conversation, under an alias (the CLI refuses an id it has a file for).
      const fresh = crypto.randomUUID()
      yield* open.live.restart({ kind: "new", cliId: fresh })
      yield* state.setCliAlias(sessionId, fresh)
      if (fork) yield* state.forgetForks([sessionId])
    }
    for (const [item, sentUuid] of [...open.sentUuids])
      if (!point.kept.has(sentUuid)) open.sentUuids.delete(item)
  })

  return {
    createSession: (params) => {
      const hostId = params.sessionId ?? crypto.randomUUID()
      return ctx.asOpening(
        hostId,
        call(
          Effect.fn("agent.createSession")(function* () {
            const stored = yield* state.loadSessionState(hostId)
            const cliId = stored.cli ?? hostId
            const open = yield* openSession({
              hostId,
              cwd: params.cwd,
              tools: params.tools,
              instructions: params.instructions,
              options: parseOptions(params.options),
              start: { kind: "new", cliId },
            })
            yield* keepOptions(hostId, open)
            return opened(hostId, open)
          })(),
        ),
      )
    },

    resumeSession: (params) =>
      ctx.asOpening(
        params.sessionId,
        call(
          Effect.fn("agent.resumeSession")(function* () {
            const hostId = params.sessionId
            // Already open and alive: keep its process (and any turn it is running)...
            const existing = sessions.get(hostId)
            if (existing?.live.isRunning()) {
              const changed = reconfigured(existing, params)
              if (changed === undefined) return opened(hostId, existing)
              // ...unless the host gives it other tools or instructions: they reach a launch.
              // A turn in flight keeps its process: they apply from its next start, and it says so.
              if (existing.live.runId() !== undefined) {
                existing.tools = changed.tools
                existing.instructions = changed.instructions
                existing.live.setTools(changed.tools)
                yield* existing.live.emitNotice(
                  "warning",
                  "A turn is running: the tools and instructions this resume gave apply from Claude Code's next start for this chat",
                )
                return opened(hostId, existing)
              }
            }
            const cliId = yield* state.cliIdFor(hostId)
            // What the host leaves out of the call, an open session keeps.
            const base = {
              hostId,
              cwd: params.cwd,
              tools: params.tools ?? existing?.tools,
              instructions: params.instructions ?? existing?.instructions,
              options: params.options ? parseOptions(params.options) : (existing?.options ?? {}),
            }
            // The transcript decides (agent/restart.ts); a start the CLI refuses moves to the next try.
            const openAs = (recovery: Recovery): Effect.Effect<OpenSession, SessionError, Broker> =>
              openSession({ ...base, start: recovery.start }).pipe(
                Effect.tap((open) =>
                  recovery.notice ? open.live.emitNotice("warning", recovery.notice) : Effect.void,
                ),
                Effect.catchTag("ProcessExited", (error) =>
                  recovery.orElse && refusedConversation(error.stderr)
                    ? Effect.flatMap(recovery.orElse, openAs)
                    : Effect.fail(error),
                ),
              )
            const open = yield* openAs(yield* restartOf(acct, hostId, params.cwd, cliId, false))
            yield* keepOptions(hostId, open)
            return opened(hostId, open)
          })(),
        ),
      ),

    forkSession: (params) => {
      const hostId = params.newSessionId ?? crypto.randomUUID()
      return ctx.asOpening(
        hostId,
        call(
          Effect.fn("agent.forkSession")(function* () {
            const originOpen = sessions.get(params.sessionId)
            if (originOpen) yield* settleLeaf(acct, originOpen, originOpen.live.cliId(), params.cwd)
            // What it copies (an unwritten fork's own origin), and what the list shows until the CLI writes it.
            const fork = yield* forkOf(acct, params.sessionId, params.cwd)
            // A fork is the same conversation taken elsewhere: it keeps the origin's options,
            // from its open session or, for a stored chat, from its session state.
            const originOptions =
              originOpen?.options ?? parseOptions((yield* state.loadSessionState(params.sessionId)).options)
            const options = { ...originOptions, ...parseOptions(params.options) }
            const open = yield* openSession({
              hostId,
              cwd: params.cwd,
              tools: params.tools,
              instructions: params.instructions,
              options,
              start: forkStart(fork, hostId),
            })
            yield* keepOptions(hostId, open)
            // The origin's prompts are the fork's too (the CLI copies them with their uuids): each can be rewound to.
            const originSent = (yield* state.loadSessionState(params.sessionId)).sent
            yield* state.rememberFork(hostId, fork, {
              ...originSent,
              ...Object.fromEntries(originOpen?.sentUuids ?? []),
            })
            return opened(hostId, open)
          })(),
        ),
      )
    },

    readSession: (params) =>
      call(
        Effect.fn("agent.readSession")(function* () {
          const configDir = yield* configDirFor(acct)
          const cliId = yield* state.cliIdFor(params.sessionId)
          const own = yield* history.readSession(configDir, params.cwd, cliId)
          // A fork the CLI has not written yet reads back as what it copies.
          const fork = own ? undefined : yield* unwrittenFork(acct, params.sessionId, params.cwd)
          const transcript = fork
            ? yield* history.readSession(configDir, params.cwd, fork.origin, fork.at)
            : own
          if (!transcript) return yield* Effect.fail(new SessionNotFound({ sessionId: params.sessionId }))
          return { ...transcript, session_id: params.sessionId }
        })(),
      ),

    listSessions: (params) =>
      call(
        Effect.fn("agent.listSessions")(function* () {
          const configDir = yield* configDirFor(acct)
          const aliases = yield* state.listAliases()
          const page = yield* history.listSessions(configDir, { ...params, aliases })
          return yield* withUnwrittenForks(acct, page, params)
        })(),
      ),

    closeSession: ({ sessionId }) =>
      call(
        Effect.gen(function* () {
          // Close wins over an open in flight (create, resume, fork): it fails and starts nothing.
          ctx.closeOpening(sessionId)
          const open = sessions.get(sessionId)
          if (open) yield* closeOpen(sessionId, open)
        }),
      ),

    rollback: ({ sessionId, itemId }) => call(rollback(sessionId, itemId)),
  }
}

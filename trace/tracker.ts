/**
 * The Agent Trace tracker of one session: fed every agent event the session
 * emits, it keeps the fingerprints of what the editing tools wrote, notices
 * when a command moved HEAD in a repository the session edited, writes each
 * new commit's record as a note, and pushes the notes after a `git push`
 * when asked to.
 *
 * Rules:
 * - feeding never blocks or fails the session: events go into a queue that one
 *   fiber in the session's scope works through, in order;
 * - HEAD is read again at every run's start (in the session's own repository
 *   too, before any edit there) and after every tool call that could commit,
 *   so a commit the person made between turns is not taken for the agent's,
 *   while a commit made by any tool (Bash, an MCP tool) is;
 * - fingerprints and agents live in plugin storage under `trace:<host session id>`,
 *   so a restarted or resumed session still knows them;
 * - a record that fails the schema, or a git call that fails, is one warning
 *   notice; the session goes on.
 */
import { Deferred, Effect, Fiber, Queue, Scope } from "effect"
import { z } from "zod"
import { Log, Storage } from "../sdk/plugin-api.ts"
import type { AgentEvent, NoticeLevel, ToolCall } from "../sdk/protocol.ts"
import { asRecord, asString } from "../values.ts"
import { type Fingerprints, MAIN_AGENT, writtenBy } from "./fingerprints.ts"
import { type Heads, noteNewCommits, refreshHeads, rememberEdit } from "./commits.ts"
import { brokerGit, type Git, headOf } from "./git.ts"
import { type HeadsAt, headsNow, QUIET_KINDS, readsHead, repositoryLookup, watchedRoots } from "./heads.ts"
import type { NoteContext } from "./notes.ts"
import { type PushSettings, pushAfter } from "./push.ts"
import type { AgentInfo } from "./record.ts"

export const traceKey = (sessionId: string): string => `trace:${sessionId}`

const Stored = z.object({
  prints: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.string()))).default({}),
  agents: z.record(z.string(), z.object({ model: z.string().optional() })).default({}),
})

export interface TrackerSetup {
  readonly sessionId: string
  /**
   * The session's folder. Its repository's HEAD is read at every run's start,
   * before any edit there is seen: the tracker works behind the session, so
   * HEAD first read at the agent's first edit may already hold the agent's
   * next commit (a fast model, a Write then a commit), which would then go
   * unnoted. Other repositories are watched from their first edit on.
   */
  readonly cwd?: string
  /** The composer option and the launch knob, read at each event. */
  readonly enabled: () => boolean
  /** The main agent's model id (`claude-opus-5-5`). */
  readonly model: () => string | undefined
  /** The CLI's version, for the record's `tool`. */
  readonly toolVersion: () => string | undefined
  /** Read at each push: whether to push the notes, and the deadline of all its git calls. */
  readonly push: Effect.Effect<PushSettings>
  readonly notice: (level: NoticeLevel, text: string) => Effect.Effect<void>
  /** Test seam: a git runner other than the broker's. */
  readonly git?: Git
}

export interface Tracker {
  /** Queue an event; returns at once. */
  readonly feed: (event: AgentEvent) => Effect.Effect<void>
  /** Completes once every event fed so far has been worked through. */
  readonly settled: Effect.Effect<void>
}

type Item =
  | { readonly event: AgentEvent; readonly heads?: Fiber.Fiber<HeadsAt> }
  | { readonly settled: Deferred.Deferred<void> }

const ranGit = (event: AgentEvent): boolean =>
  event.type === "ToolCallFinished" && /\bgit\b/.test(asString(asRecord(event.call.input).command) ?? "")

export const makeTracker = (setup: TrackerSetup) =>
  Effect.gen(function* () {
    const git = setup.git ?? (yield* brokerGit)
    const storage = yield* Storage
    const log = yield* Log
    const parsed = Stored.safeParse((yield* storage.get(traceKey(setup.sessionId))) ?? {})
    const prints: Fingerprints = parsed.success ? parsed.data.prints : {}
    const agents: Record<string, AgentInfo> = parsed.success ? parsed.data.agents : {}
    /** Host task id → the subagent's type and model. */
    const tasks = new Map<string, { name: string; model?: string }>()
    /** Repository root → the HEAD last seen there. */
    const heads: Heads = new Map()
    const queue = yield* Queue.unbounded<Item>()
    const scope = yield* Scope.Scope
    const lookup = repositoryLookup(git)
    const { repositoryFor } = lookup
    const watched = (lookForOwn: boolean) => watchedRoots(lookup, Object.keys(prints), setup.cwd, lookForOwn)
    /** HEAD in `root` as the event found it (read now when the reading taken at feed has no such root). */
    const headAt = (at: HeadsAt | undefined, root: string) =>
      at?.has(root) ? Effect.succeed(at.get(root)) : headOf(git, root)

    const save = storage.set(traceKey(setup.sessionId), { prints, agents })

    const agentOf = (event: AgentEvent, call: ToolCall): string => {
      const taskId = call.task_id ?? event.task_id
      return taskId === undefined ? MAIN_AGENT : (tasks.get(taskId)?.name ?? "subagent")
    }

    const refreshAt = (at: HeadsAt | undefined) =>
      Effect.flatMap(watched(at === undefined), (roots) =>
        refreshHeads(heads, roots, (root) => headAt(at, root)),
      )

    const onEdit = (event: AgentEvent, call: ToolCall) =>
      Effect.gen(function* () {
        const wrote = writtenBy(call)
        if (wrote === undefined) return
        const agent = agentOf(event, call)
        const repo = yield* rememberEdit({ git, heads, prints, repositoryFor }, wrote, agent)
        if (repo === undefined) return
        const model =
          agent === MAIN_AGENT ? setup.model() : tasks.get(call.task_id ?? event.task_id ?? "")?.model
        agents[agent] = model === undefined ? (agents[agent] ?? {}) : { model }
        yield* save
      })

    const noting: NoteContext = {
      git,
      log,
      sessionId: setup.sessionId,
      prints,
      agents,
      model: setup.model,
      toolVersion: setup.toolVersion,
      notice: setup.notice,
    }

    /** Record every commit HEAD gained in each edited repository since it was last seen. */
    const checkCommits = (at: HeadsAt | undefined) =>
      noteNewCommits(noting, heads, Object.keys(prints), (root) => headAt(at, root))

    const handle = (event: AgentEvent, at: HeadsAt | undefined) =>
      Effect.gen(function* () {
        if (!setup.enabled()) return
        switch (event.type) {
          case "Task":
            if (event.task.name !== undefined)
              tasks.set(event.task.id, {
                name: event.task.name,
                ...(event.task.model === undefined ? {} : { model: event.task.model }),
              })
            return
          case "RunStarted":
            return yield* refreshAt(at)
          case "RunEnded":
            return yield* checkCommits(at)
          case "ToolCallFinished": {
            const call = event.call
            if (writtenBy(call) !== undefined) return yield* onEdit(event, call)
            if (QUIET_KINDS.has(call.kind) || call.kind === "edit") return
            yield* checkCommits(at)
            return yield* pushAfter(
              { git, roots: Object.keys(prints), settings: setup.push, repositoryFor, notice: setup.notice },
              call,
            )
          }
          default:
            return
        }
      })

    yield* Effect.gen(function* () {
      while (true) {
        const item = yield* Queue.take(queue)
        if ("settled" in item) yield* Deferred.succeed(item.settled, undefined)
        else
          yield* Effect.flatMap(item.heads ? Fiber.join(item.heads) : Effect.undefined, (at) =>
            handle(item.event, at),
          ).pipe(
            Effect.catchCause((cause) =>
              log.warn("agent trace: an event could not be handled", String(cause)),
            ),
          )
      }
    }).pipe(Effect.forkScoped)

    return {
      feed: (event) =>
        Effect.gen(function* () {
          // A command that ran git may have made the session's folder a repository: asked again from now.
          if (setup.cwd !== undefined && ranGit(event)) lookup.mayHaveBecomeOne(setup.cwd)
          // HEAD as it stands now, not when the tracker gets to the event.
          const heads =
            setup.enabled() && readsHead(event)
              ? yield* Effect.forkIn(
                  Effect.flatMap(watched(event.type === "RunStarted"), (roots) => headsNow(git, roots)),
                  scope,
                )
              : undefined
          yield* Queue.offer(queue, heads ? { event, heads } : { event })
        }),
      settled: Effect.gen(function* () {
        const done = yield* Deferred.make<void>()
        yield* Queue.offer(queue, { settled: done })
        yield* Deferred.await(done)
      }),
    } satisfies Tracker
  })

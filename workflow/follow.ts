/**
 * Following a dynamic workflow live: the session hands every `workflow`
 * signal of its mapper here, and this file reads the run's files through the
 * broker while it lasts.
 *
 * - Each agent's transcript (`<transcriptDir>/agent-<id>.jsonl`) is read
 *   incrementally (workflow/tail.ts `WorkflowTail`) after every `system` and
 *   `user` frame, and once more when the run ends.
 * - An agent's file can appear before the snapshot that names it: its
 *   records are held until the mapper knows the agent's task.
 * - At the end, the run's record is read (`output_file`, else the copy
 *   beside the session, with retries: the CLI writes it late) off the reader
 *   fiber, then handed to the mapper; then the workflow is let go (its tail,
 *   its held records), and a late signal for it is ignored (the newest
 *   `MAX_DONE` finished ids are remembered), so a session that runs
 *   workflow after workflow keeps none of them and stops polling.
 */
import { Effect, type Fiber } from "effect"
import type { Mapper, Signal } from "../map.ts"
import type { Fs } from "../sdk/plugin-api.ts"
import type { AgentEvent } from "../sdk/protocol.ts"
import { readWorkflowRecord } from "../workflow.ts"
import { WorkflowTail } from "./tail.ts"

export interface WorkflowFollowerOptions {
  /** The conversation's mapper now (a restart may replace it). */
  readonly mapper: () => Mapper
  /** The run in flight, if any (its events carry it). */
  readonly runId: () => string | undefined
  readonly emitAll: (events: ReadonlyArray<AgentEvent>) => Effect.Effect<void>
  /** Run on a fiber the session owns. */
  readonly fork: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<Fiber.Fiber<unknown>, never, R>
  /** How often and how far apart the record is looked for. */
  readonly record?: { readonly attempts?: number; readonly delayMs?: number }
}

export interface WorkflowFollower {
  readonly onSignal: (signal: Extract<Signal, { type: "workflow" }>) => Effect.Effect<void, never, Fs>
  /** Map what every running workflow's agent files gained since the last look. */
  readonly poll: Effect.Effect<void, never, Fs>
  /** true while a workflow is followed (polling costs a listing per frame). */
  readonly active: () => boolean
}

interface FollowedWorkflow {
  readonly taskId: string
  runId?: string
  outputFile?: string
  transcriptDir?: string
  tail: WorkflowTail | undefined
  /** Records of agents no snapshot has named yet. */
  readonly unrouted: Map<string, unknown[]>
  finished: boolean
}

/** Finished workflows' ids remembered against late signals; past it the oldest half goes. */
export const MAX_DONE = 256

export const makeWorkflowFollower = (options: WorkflowFollowerOptions): WorkflowFollower => {
  const workflows = new Map<string, FollowedWorkflow>()
  const done = new Set<string>()
  const letGo = (taskId: string): void => {
    workflows.delete(taskId)
    done.add(taskId)
    if (done.size <= MAX_DONE) return
    let drop = MAX_DONE / 2
    for (const id of done) {
      if (drop-- <= 0) break
      done.delete(id)
    }
  }

  const pollOne = (followed: FollowedWorkflow) =>
    Effect.gen(function* () {
      if (!followed.tail) return
      for (const { agentId, records } of yield* followed.tail.poll) {
        const held = followed.unrouted.get(agentId)
        if (held) held.push(...records)
        else followed.unrouted.set(agentId, [...records])
      }
      const mapper = options.mapper()
      for (const [agentId, records] of followed.unrouted) {
        const taskId = mapper.taskForAgent(agentId)
        if (!taskId) continue
        followed.unrouted.delete(agentId)
        yield* options.emitAll(mapper.mapAgentRecords(taskId, records, options.runId()))
      }
    })

  const poll = Effect.gen(function* () {
    for (const followed of workflows.values()) if (!followed.finished) yield* pollOne(followed)
  })

  const finish = (followed: FollowedWorkflow) =>
    Effect.gen(function* () {
      const record = yield* readWorkflowRecord(
        {
          ...(followed.outputFile ? { outputFile: followed.outputFile } : {}),
          ...(followed.transcriptDir ? { transcriptDir: followed.transcriptDir } : {}),
          ...(followed.runId ? { runId: followed.runId } : {}),
        },
        options.record ?? {},
      )
      yield* options.emitAll(options.mapper().finishWorkflow(followed.taskId, record, options.runId()))
      yield* pollOne(followed)
      letGo(followed.taskId)
    })

  const onSignal = (signal: Extract<Signal, { type: "workflow" }>) =>
    Effect.gen(function* () {
      if (done.has(signal.taskId)) return
      const followed: FollowedWorkflow = workflows.get(signal.taskId) ?? {
        taskId: signal.taskId,
        finished: false,
        tail: undefined,
        unrouted: new Map(),
      }
      workflows.set(signal.taskId, followed)
      if (signal.runId) followed.runId = signal.runId
      if (signal.outputFile) followed.outputFile = signal.outputFile
      if (signal.transcriptDir && !followed.tail) {
        followed.transcriptDir = signal.transcriptDir
        followed.tail = new WorkflowTail(signal.transcriptDir)
      }
      if (!signal.finished || followed.finished) return
      followed.finished = true
      yield* options.fork(finish(followed))
    })

  return { onSignal, poll, active: () => workflows.size > 0 }
}

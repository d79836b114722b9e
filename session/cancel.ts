/**
 * Cancel and a task's cancel. Cancel interrupts, denies every open approval
 * and question, and arms the watchdog (the run ends Cancelled at its result
 * or when it fires); an `interrupt` left unanswered past `interruptMs`
 * (2.1.332 answers at once, so the process is frozen or wedged) aborts the
 * process: the run ends Cancelled at once, a new process is started. A
 * task's cancel sends `stop_task` with the CLI's agent id; a workflow's own
 * agents cannot be stopped one by one.
 */
import { Effect } from "effect"
import { TaskNotFound, TaskNotStoppable } from "../errors.ts"
import type { Approvals } from "./approvals.ts"
import type { SessionContext } from "./context.ts"
import type { ProcessKeeper } from "./process.ts"
import type { RunLedger } from "./runs.ts"

export interface CancelParts {
  readonly ctx: SessionContext
  readonly runs: RunLedger
  readonly approvals: Approvals
  readonly processes: ProcessKeeper
  /** session.ts SessionTimeouts: the interrupt's answer, the watchdog. */
  readonly timeouts: { readonly interruptMs: number; readonly cancelMs: number }
}

export const makeCancels = ({ ctx, runs, approvals, processes, timeouts }: CancelParts) => {
  const cancel = Effect.fn("claude.session.cancel")(function* () {
    const current = runs.current()
    if (!current || current.cancelling) return
    current.cancelling = true
    const proc = processes.current()
    yield* approvals.settleAll("cancelled", proc?.channel)
    if (!proc) return yield* runs.end(current, "Cancelled")
    const unanswered = `Claude Code did not answer the interrupt within ${timeouts.interruptMs / 1000} s`
    yield* ctx.fork(
      proc.channel
        .request("interrupt", {}, timeouts.interruptMs)
        .pipe(Effect.catchTag("ControlTimeout", () => processes.abort(proc, unanswered))),
    )
    yield* runs.armWatchdog(current, timeouts.cancelMs)
  })

  const cancelTask = Effect.fn("claude.session.cancelTask")(function* (taskId: string) {
    const task = ctx.mapper.agentForTask(taskId)
    const proc = processes.current()
    if (!task || !proc) return yield* Effect.fail(new TaskNotFound({ taskId }))
    if (task.kind === "workflow_agent")
      return yield* Effect.fail(
        new TaskNotStoppable({
          taskId,
          reason: "A workflow agent cannot be stopped on its own: stop the whole workflow instead",
        }),
      )
    yield* proc.channel.request("stop_task", { task_id: task.agentId })
  })

  return { cancel, cancelTask }
}

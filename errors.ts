/**
 * Tagged provider errors. Each carries what a person needs in one line
 * (`message`), so the host can show it as is; `_tag` + `message` is exactly
 * the protocol's AgentFailure.
 */
import { Data } from "effect"

/** A control request got no answer in time. */
export class ControlTimeout extends Data.TaggedError("ControlTimeout")<{
  readonly subtype: string
  readonly requestId: string
  readonly timeoutMs: number
}> {
  override get message() {
    return `Claude Code did not answer ${this.subtype} within ${Math.round(this.timeoutMs / 1000)} s`
  }
}

/** The CLI answered a control request with an error. */
export class ControlRefused extends Data.TaggedError("ControlRefused")<{
  readonly subtype: string
  readonly requestId: string
  readonly error: string
}> {
  override get message() {
    return `Claude Code refused ${this.subtype}: ${this.error}`
  }
}

/** The CLI answered a control request with a body its schema (wire.ts `ControlAnswers`) rejects. */
export class ControlAnswerInvalid extends Data.TaggedError("ControlAnswerInvalid")<{
  readonly subtype: string
  readonly requestId: string
  readonly issues: string
}> {
  override get message() {
    return `Claude Code answered ${this.subtype} with an unexpected shape: ${this.issues}`
  }
}

/** The CLI process ended (or could not be written to) while something waited on it. */
export class ProcessExited extends Data.TaggedError("ProcessExited")<{
  readonly code: number | null
  readonly signal: string | null
  readonly stderr: string
}> {
  override get message() {
    const how = this.signal ? `was stopped by ${this.signal}` : `exited with code ${this.code ?? "?"}`
    return this.stderr ? `Claude Code ${how}: ${this.stderr}` : `Claude Code ${how}`
  }
}

/** The CLI could not be started at all. */
export class LaunchFailed extends Data.TaggedError("LaunchFailed")<{ readonly detail: string }> {
  override get message() {
    return `Could not start Claude Code: ${this.detail}`
  }
}

export class SessionNotFound extends Data.TaggedError("SessionNotFound")<{ readonly sessionId: string }> {
  override get message() {
    return `No open Claude session ${this.sessionId}: resume it first`
  }
}

export class RewindImpossible extends Data.TaggedError("RewindImpossible")<{ readonly reason: string }> {
  override get message() {
    return `Cannot rewind: ${this.reason}`
  }
}

export class ApprovalNotFound extends Data.TaggedError("ApprovalNotFound")<{ readonly approvalId: string }> {
  override get message() {
    return `The request ${this.approvalId} is no longer waiting for an answer`
  }
}

export class TaskNotFound extends Data.TaggedError("TaskNotFound")<{ readonly taskId: string }> {
  override get message() {
    return `No running task ${this.taskId} in this session`
  }
}

/** A workflow agent cannot be stopped on its own: only its whole workflow can. */
export class TaskNotStoppable extends Data.TaggedError("TaskNotStoppable")<{
  readonly taskId: string
  readonly reason: string
}> {
  override get message() {
    return this.reason
  }
}

export class InvalidOption extends Data.TaggedError("InvalidOption")<{ readonly detail: string }> {
  override get message() {
    return `Invalid option: ${this.detail}`
  }
}

/** An operation the CLI or this plugin does not offer. */
export class Unsupported extends Data.TaggedError("Unsupported")<{ readonly detail: string }> {
  override get message() {
    return this.detail
  }
}

export type SessionError =
  | ControlTimeout
  | ControlRefused
  | ControlAnswerInvalid
  | ProcessExited
  | LaunchFailed
  | SessionNotFound
  | RewindImpossible
  | ApprovalNotFound
  | TaskNotFound
  | TaskNotStoppable
  | InvalidOption
  | Unsupported

/** Any failure as the protocol's one-line AgentFailure. */
export const toFailure = (error: unknown): { readonly _tag: string; readonly message: string } => {
  if (error && typeof error === "object" && "_tag" in error && "message" in error)
    return { _tag: String(error._tag), message: String(error.message) }
  if (error instanceof Error) return { _tag: "Error", message: error.message }
  return { _tag: "Error", message: String(error) }
}

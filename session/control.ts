/**
 * The control channel of one `claude` process: requests we send, correlated
 * by request_id, and the answers we give to the CLI's own requests.
 *
 * - One pending map. A request's subtype picks its answer schema from
 *   wire.ts `ControlAnswers`, so `request("get_usage")` succeeds with a
 *   decoded `GetUsageResponse`; an answer the schema rejects fails with
 *   `ControlAnswerInvalid`, an error answer with `ControlRefused`, silence
 *   with `ControlTimeout`.
 * - `failAll` is the one place waiters learn that the process is gone: it
 *   fails every pending request, and every later one at once, with the
 *   process's exit.
 * - The transport knows no request ids; this file knows no process.
 */
import { Deferred, Effect } from "effect"
import type { z } from "zod"
import { ControlAnswerInvalid, ControlRefused, ControlTimeout, type ProcessExited } from "../errors.ts"
import {
  type ControlAnswer,
  ControlAnswers,
  type ControlResponseFrame,
  type ControlSubtype,
} from "../wire.ts"

export type ControlError = ControlTimeout | ControlRefused | ControlAnswerInvalid | ProcessExited

export interface ControlChannel {
  /** Send a control request and wait for its decoded answer. */
  readonly request: <S extends ControlSubtype>(
    subtype: S,
    fields?: Readonly<Record<string, unknown>>,
    timeoutMs?: number,
  ) => Effect.Effect<ControlAnswer<S>, ControlError>
  /** Answer one of the CLI's requests with success (a lost write is not the caller's failure). */
  readonly respond: (requestId: string, response: unknown) => Effect.Effect<void>
  /** Answer one of the CLI's requests with an error. */
  readonly refuse: (requestId: string, error: string) => Effect.Effect<void>
  /** Route a `control_response` frame to the request waiting for it. */
  readonly onResponse: (frame: ControlResponseFrame) => Effect.Effect<void>
  /** The process is gone: fail every waiter, now and later, with its exit. */
  readonly failAll: (error: ProcessExited) => Effect.Effect<void>
}

interface Waiter {
  readonly subtype: ControlSubtype
  readonly answer: Deferred.Deferred<unknown, ControlRefused | ProcessExited>
}

const MAX_ISSUES = 3

/** The table seen per key, so indexing it by a generic subtype keeps the answer's type. */
const answerSchemas: { readonly [S in ControlSubtype]: z.ZodType<ControlAnswer<S>> } = ControlAnswers

export const makeControlChannel = (options: {
  /** Write one frame to the process. */
  readonly send: (frame: unknown) => Effect.Effect<void, ProcessExited>
  readonly timeoutMs: number
}): ControlChannel => {
  const pending = new Map<string, Waiter>()
  // Ids stay apart across processes: an old process's late answer matches nothing.
  const tag = crypto.randomUUID().slice(0, 8)
  let counter = 0
  let gone: ProcessExited | undefined

  const decode = <S extends ControlSubtype>(
    subtype: S,
    requestId: string,
    raw: unknown,
  ): Effect.Effect<ControlAnswer<S>, ControlAnswerInvalid> => {
    const schema = answerSchemas[subtype]
    const parsed = schema.safeParse(raw ?? {})
    if (parsed.success) return Effect.succeed(parsed.data)
    const issues = parsed.error.issues
      .slice(0, MAX_ISSUES)
      .map((issue) => `${issue.path.join(".") || "(answer)"}: ${issue.message}`)
      .join("; ")
    return Effect.fail(new ControlAnswerInvalid({ subtype, requestId, issues }))
  }

  const request = <S extends ControlSubtype>(
    subtype: S,
    fields: Readonly<Record<string, unknown>> = {},
    timeoutMs: number = options.timeoutMs,
  ): Effect.Effect<ControlAnswer<S>, ControlError> =>
    Effect.suspend(() => {
      if (gone) return Effect.fail(gone)
      const requestId = `req_${++counter}_${tag}`
      const answer = Deferred.makeUnsafe<unknown, ControlRefused | ProcessExited>()
      pending.set(requestId, { subtype, answer })
      return options
        .send({ type: "control_request", request_id: requestId, request: { ...fields, subtype } })
        .pipe(
          Effect.andThen(Deferred.await(answer)),
          Effect.timeoutOrElse({
            duration: timeoutMs,
            orElse: () => Effect.fail(new ControlTimeout({ subtype, requestId, timeoutMs })),
          }),
          Effect.flatMap((raw) => decode(subtype, requestId, raw)),
          Effect.ensuring(Effect.sync(() => pending.delete(requestId))),
        )
    })

  const respond = (requestId: string, response: unknown) =>
    options
      .send({ type: "control_response", response: { subtype: "success", request_id: requestId, response } })
      .pipe(Effect.ignore)

  const refuse = (requestId: string, error: string) =>
    options
      .send({ type: "control_response", response: { subtype: "error", request_id: requestId, error } })
      .pipe(Effect.ignore)

  const onResponse = (frame: ControlResponseFrame) =>
    Effect.suspend(() => {
      const response = frame.response
      const waiter = pending.get(response.request_id)
      if (!waiter) return Effect.void
      return response.subtype === "error"
        ? Deferred.fail(
            waiter.answer,
            new ControlRefused({
              subtype: waiter.subtype,
              requestId: response.request_id,
              error: response.error,
            }),
          )
        : Deferred.succeed(waiter.answer, response.response)
    }).pipe(Effect.asVoid)

  const failAll = (error: ProcessExited) =>
    Effect.suspend(() => {
      gone ??= error
      const waiting = [...pending.values()]
      pending.clear()
      return Effect.forEach(waiting, (waiter) => Deferred.fail(waiter.answer, error), { discard: true })
    })

  return { request, respond, refuse, onResponse, failAll }
}

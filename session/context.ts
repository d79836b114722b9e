/**
 * What every part of one session shares: the host's id for it, the way out
 * for events, the session's own fibers, and the conversation's mapper (the
 * one mutable slot: a restart onto another conversation replaces it).
 */
import { Effect, type Fiber, type Scope } from "effect"
import type { Mapper } from "../map.ts"
import type { LogShape } from "../sdk/plugin-api.ts"
import type { AgentEvent } from "../sdk/protocol.ts"

export interface SessionContext {
  /** The host's id for the chat (every event carries it). */
  readonly sid: string
  readonly log: LogShape
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  readonly emitAll: (events: ReadonlyArray<AgentEvent>) => Effect.Effect<void>
  /** Run `effect` on a fiber the session owns; a failure is logged, never lost. */
  readonly fork: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<Fiber.Fiber<unknown>, never, R>
  /** The mapper of the conversation the process is on. */
  mapper: Mapper
}

export const makeSessionContext = (options: {
  readonly sid: string
  readonly log: LogShape
  readonly emit: (event: AgentEvent) => Effect.Effect<void>
  readonly scope: Scope.Scope
  readonly mapper: Mapper
}): SessionContext => ({
  sid: options.sid,
  log: options.log,
  emit: options.emit,
  emitAll: (events) => Effect.forEach(events, options.emit, { discard: true }),
  fork: (effect) =>
    effect.pipe(
      Effect.catchCause((cause) =>
        options.log.warn(`claude session ${options.sid}: background work failed`, String(cause)),
      ),
      Effect.forkIn(options.scope),
    ),
  mapper: options.mapper,
})

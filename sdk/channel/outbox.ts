/**
 * Messages queued and posted in one batch soon after (`Port.later`): items of
 * one stream queued back to back join one message, their byte items one array.
 */
import { coalesce } from "./serving.ts"
import type { Message, Port } from "./types.ts"

export interface Outbox {
  readonly send: (message: Message) => void
  /** Post what is queued now. */
  readonly flush: () => void
  /** Forget what is queued (the channel closed). */
  readonly drop: () => void
}

export const makeOutbox = (port: Port, closed: () => boolean): Outbox => {
  let outbox: Message[] = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    const batch = outbox
    outbox = []
    for (const m of batch) if (m.t === "items") m.items = coalesce(m.items)
    if (batch.length > 0 && !closed()) port.post(batch)
  }
  const send = (message: Message) => {
    const last = outbox[outbox.length - 1]
    if (message.t === "items" && last?.t === "items" && last.sid === message.sid) {
      last.items.push(...message.items)
      last.weight += message.weight
    } else outbox.push(message)
    if (!scheduled) {
      scheduled = true
      port.later(flush)
    }
  }
  return {
    send,
    flush,
    drop: () => {
      outbox = []
    },
  }
}

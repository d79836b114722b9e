/**
 * The host's watchdog over one plugin process (parent.ts): a child whose
 * event loop is stuck answers nothing, so every call to it and every turn it
 * runs would wait forever. The host pings it; one ping left unanswered for
 * `unresponsiveMs` reports it (parent.ts then kills it, and the exit path
 * ends its processes and runs).
 */
import type { Peer } from "../../sdk/channel.ts"

/**
 * Ping the child every quarter of `unresponsiveMs` (at most every 5 s), one
 * ping out at a time, and call `unresponsive` once (then stop) when one has
 * gone unanswered that long. The wait counts only while the host's own timers run on time:
 * after a stall of the host's loop the answer may be waiting unread in its
 * own socket, so the wait starts again.
 */
export const watchChild = (
  peer: Pick<Peer, "request">,
  unresponsiveMs: number,
  unresponsive: (silentMs: number) => void,
) => {
  const every = Math.min(5_000, Math.max(10, Math.floor(unresponsiveMs / 4)))
  let sentAt: number | null = null
  let lastTick = Date.now()
  const tick = () => {
    const now = Date.now()
    const hostStalled = now - lastTick > 2 * every
    lastTick = now
    if (sentAt === null) {
      sentAt = now
      // Any answer, an error too (a child still starting knows no ping yet), shows its loop runs.
      const answered = () => {
        if (sentAt === now) sentAt = null
      }
      peer.request("ping", undefined).then(answered, answered)
      return
    }
    if (hostStalled) sentAt = now
    else if (now - sentAt >= unresponsiveMs) {
      clearInterval(timer)
      unresponsive(now - sentAt)
    }
  }
  const timer = setInterval(tick, every)
  // A host with nothing else to do may exit: the watchdog keeps nothing alive.
  timer.unref()
  return { stop: () => clearInterval(timer) }
}

/** AcpSession: which run end answers which prompt (steering, cancel, close), and updates in order. */
import { describe, expect, it, vi } from "vitest"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { AcpSession } from "./session.ts"

type RunEnded = Extract<AgentEvent, { type: "RunEnded" }>
const ended = (run_id: string, outcome: RunEnded["outcome"], delivery_ids?: string[]): RunEnded => ({
  type: "RunEnded",
  session_id: "s",
  run_id,
  outcome,
  ...(delivery_ids && { delivery_ids }),
})
const session = () =>
  new AcpSession(
    "s",
    "/w",
    {},
    async () => {},
    () => {},
  )

describe("AcpSession", () => {
  it("a prompt ends with the run that consumed its delivery", async () => {
    const s = session()
    const wait = s.waitRun("r1", "d1")
    s.runEnded(ended("r1", "Completed", ["d1"]))
    expect(await wait).toMatchObject({ kind: "ended", outcome: "Completed", cancelled: false })
  })

  it("a steer the run did not take waits for the turn that answers it", async () => {
    vi.useFakeTimers()
    try {
      const s = session()
      const first = s.waitRun("r1", "d1")
      const steer = s.waitRun("r1", "d2")
      let steered = false
      void steer.then(() => (steered = true))
      s.runEnded(ended("r1", "Completed", ["d1"]))
      expect(await first).toMatchObject({ kind: "ended" })
      await vi.advanceTimersByTimeAsync(1_000)
      expect(steered).toBe(false)
      s.runStarted("r2")
      await vi.advanceTimersByTimeAsync(10_000)
      expect(steered).toBe(false)
      s.runEnded(ended("r2", "Completed", ["d2"]))
      expect(await steer).toMatchObject({ kind: "ended", event: { run_id: "r2" } })
    } finally {
      vi.useRealTimers()
    }
  })

  it("a failed or cancelled run ends every prompt in it", async () => {
    const s = session()
    const a = s.waitRun("r1", "d1")
    const b = s.waitRun("r1", "d2")
    s.runEnded(ended("r1", "Failed", []))
    expect(await a).toMatchObject({ outcome: "Failed" })
    expect(await b).toMatchObject({ outcome: "Failed" })
  })

  it("a run end that came first is kept for the prompt that waits next", async () => {
    const s = session()
    s.runEnded(ended("r1", "Completed", ["d1"]))
    expect(await s.waitRun("r1", "d1")).toMatchObject({ kind: "ended" })
  })

  it("cancel marks the prompt cancelled; a silent run still answers after the grace", async () => {
    vi.useFakeTimers()
    try {
      const s = session()
      const wait = s.waitRun("r1", "d1")
      const ask = new AbortController()
      s.asks.set("a1", ask)
      s.cancel(500)
      expect(ask.signal.aborted).toBe(true)
      await vi.advanceTimersByTimeAsync(600)
      expect(await wait).toEqual({ kind: "cancelled" })
      // A later end changes nothing: the prompt already has its one answer.
      s.runEnded(ended("r1", "Completed", ["d1"]))
    } finally {
      vi.useRealTimers()
    }
  })

  it("a cancelled prompt whose run then completes still answers cancelled", async () => {
    const s = session()
    const wait = s.waitRun("r1", "d1")
    s.cancel(10_000)
    s.runEnded(ended("r1", "Completed", ["d1"]))
    expect(await wait).toMatchObject({ kind: "ended", cancelled: true })
  })

  it("close ends every waiting prompt", async () => {
    const s = session()
    const wait = s.waitRun("r1", "d1")
    s.close()
    expect(await wait).toEqual({ kind: "closed" })
  })

  it("sends updates in order even when one send fails", async () => {
    const sent: string[] = []
    const s = new AcpSession(
      "s",
      "/w",
      {},
      async (u) => {
        if (u.sessionUpdate === "plan") throw new Error("boom")
        sent.push(u.sessionUpdate)
      },
      () => {},
    )
    void s.notify({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "a" } })
    void s.notify({ sessionUpdate: "plan", entries: [] })
    void s.notify({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "b" } })
    await s.flushed()
    expect(sent).toEqual(["agent_message_chunk", "agent_thought_chunk"])
  })
})

/** /plan [on|off] (plan.ts): the plugin's plan_mode set live, kept for the next session, shown when bare. */
import { describe, expect, it } from "vitest"
import type { ChatContext } from "../context.ts"
import { findCommand } from "./index.ts"

/** The part of a chat /plan touches: its state, its calls to the agent and the lines it says. */
const chat = (sessionId: string | undefined, refuse = false) => {
  const calls: Array<{ method: string; params: unknown }> = []
  const lines: string[] = []
  const ctx = {
    state: { sessionId, sessionInfo: undefined, sessionOptions: {} },
    paint: (_format: string, text: string) => text,
    say: (...said: string[]) => lines.push(...said),
    call: async (method: string, params: unknown) => {
      calls.push({ method, params })
      if (refuse) throw new Error("no such option")
    },
    attempt: async <A>(_label: string | undefined, hint: string, run: () => Promise<A>) =>
      run().catch((error: unknown) => {
        lines.push(`${String(error)}: ${hint}`)
        return undefined
      }),
    updateStatus: () => {},
  }
  return { ctx: ctx as unknown as ChatContext, calls, lines, state: ctx.state }
}

const plan = findCommand("plan")!

describe("/plan", () => {
  it("turns plan mode on and off on the live session, and says so", async () => {
    const c = chat("s1")
    await plan.run(c.ctx, "on", ["on"])
    expect(c.calls).toEqual([
      { method: "setOption", params: { sessionId: "s1", optionId: "plan_mode", value: true } },
    ])
    expect(c.lines.at(-1)).toBe("Plan mode: on")
    await plan.run(c.ctx, undefined, [])
    expect(c.lines.at(-1)).toContain("plan mode is on")
    await plan.run(c.ctx, "off", ["off"])
    expect(c.calls.at(-1)?.params).toMatchObject({ value: false })
    expect(c.state.sessionOptions).toEqual({ plan_mode: false })
  })

  it("without a session, applies from the next one; a word it does not know is refused", async () => {
    const c = chat(undefined)
    await plan.run(c.ctx, "on", ["on"])
    expect(c.calls).toEqual([])
    expect(c.state.sessionOptions).toEqual({ plan_mode: true })
    expect(c.lines.at(-1)).toBe("Plan mode: on (from the next session)")
    await plan.run(c.ctx, "maybe", ["maybe"])
    expect(c.lines.at(-1)).toBe("/plan takes on or off, not maybe")
  })

  it("an agent that refuses keeps the mode it had", async () => {
    const c = chat("s1", true)
    await plan.run(c.ctx, "on", ["on"])
    expect(c.state.sessionOptions).toEqual({})
    expect(c.lines.at(-1)).toContain("plan mode is unchanged")
  })

  it("is offered by Tab and listed by /help", () => {
    expect(plan.complete?.(chat(undefined).ctx)).toEqual(["on", "off"])
    expect(plan.usage[0]?.[0]).toBe("/plan [on|off]")
  })
})

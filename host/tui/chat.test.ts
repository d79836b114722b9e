/**
 * The chat's second pass against the scripted fake agent: lines typed before
 * the host is up run once it is; a steer is said as what the delivery facts
 * show; full access refused in the agent's words; Tab completion before any
 * /model; a mistyped command caught; /model and /effort remembered and
 * offered again; no agent, a clear refusal; /trace and /usage in the chat's
 * own words.
 */
import { afterEach, describe, expect, it } from "vitest"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { completeLine } from "./commands/index.ts"
import { AGENT, ev, fakeHost, SESSION, until, world } from "./testing.ts"

let open: Array<{ input: NodeJS.WritableStream }> = []
afterEach(() => {
  for (const w of open) w.input.end()
  open = []
})

/** Runs that start and end at once, numbered. */
const quickRuns = () => {
  let n = 0
  return (_p: never, emit: (e: AgentEvent) => void) => {
    const run_id = `r${++n}`
    emit(ev({ type: "RunStarted", run_id }))
    emit(ev({ type: "RunEnded", run_id, outcome: "Completed" }))
    return { run_id, steered: false }
  }
}

describe("start-up", () => {
  it("shows the input line at once and runs a prompt typed before the host is up when it is", async () => {
    const { host, calls } = fakeHost({ prompt: quickRuns() })
    const w = world(host, { host: undefined })
    open.push(w)
    let up!: (ok: boolean) => void
    const ready = new Promise<boolean>((resolve) => (up = resolve))
    const done = w.chat.interactive(ready)
    w.input.write("typed early\n")
    await new Promise((r) => setTimeout(r, 50))
    // Nothing is sent while the host starts; the line waits.
    expect(calls.some((c) => c.method === "prompt")).toBe(false)
    w.chat.connect(host, AGENT, "/ws")
    up(await w.chat.start())
    await until(() => w.screen().includes("── Completed"), "the early prompt's run")
    expect(calls.find((c) => c.method === "prompt")?.params).toMatchObject({ text: "typed early" })
    w.input.end()
    expect(await done).toBe(0)
  })

  it("ends with 1 when the start fails, and refuses clearly while no plugin provides an agent", async () => {
    const failed = world(fakeHost({}).host, { host: undefined })
    open.push(failed)
    expect(await failed.chat.interactive(Promise.resolve(false))).toBe(1)

    const { host } = fakeHost({})
    const w = world(host, { host: undefined })
    open.push(w)
    const done = w.chat.interactive(Promise.resolve(true))
    w.input.write("hello\n/model\n/help\n")
    await until(() => w.screen().includes("Tab completes"), "/help")
    const refusals = w.screen().split("no enabled plugin provides an agent").length - 1
    expect(refusals).toBe(2)
    w.input.end()
    await done
    const once = world(fakeHost({}).host, { host: undefined })
    expect(await once.chat.once("hi", Promise.resolve(true))).toBe(1)
    expect(once.screen()).toContain("no enabled plugin provides an agent")
  })
})

describe("steering", () => {
  const steeredHost = (picked: "running" | "next") => {
    let n = 0
    return fakeHost({
      prompt: (p: { deliveryId: string }, emit) => {
        n++
        if (n === 1) {
          emit(ev({ type: "RunStarted", run_id: "r1" }))
          return { run_id: "r1", steered: false }
        }
        // The steer: the running turn takes it up, or ends first and the agent answers it in a turn of its own.
        if (picked === "running") {
          emit(
            ev({
              type: "input_delivery",
              run_id: "r1",
              input_uuid: "u2",
              delivery_id: p.deliveryId,
              state: "picked_up",
            }),
          )
          emit(ev({ type: "RunEnded", run_id: "r1", outcome: "Completed", delivery_ids: [p.deliveryId] }))
        } else {
          emit(ev({ type: "RunEnded", run_id: "r1", outcome: "Completed" }))
          emit(ev({ type: "RunStarted", run_id: "r2" }))
          emit(
            ev({
              type: "input_delivery",
              run_id: "r2",
              input_uuid: "u2",
              delivery_id: p.deliveryId,
              state: "picked_up",
            }),
          )
          emit(ev({ type: "RunEnded", run_id: "r2", outcome: "Completed", delivery_ids: [p.deliveryId] }))
        }
        return { run_id: "r1", steered: true, input_uuid: "u2" }
      },
    })
  }

  it("says the running turn took the steer up when the delivery facts say so", async () => {
    const { host } = steeredHost("running")
    const w = world(host, {}, true)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("start\n")
    await until(() => w.screen().includes("› start"), "the run")
    await new Promise((r) => setTimeout(r, 20))
    w.input.write("and one more thing\n")
    await until(() => w.screen().includes("── Completed"), "the end")
    expect(w.screen()).toContain("↳ the running turn took up “and one more thing”")
    expect(w.screen()).not.toContain("the agent started a turn by itself")
    w.input.end()
    await done
  })

  it("says a steer the turn never read waits for the next turn, and names that turn", async () => {
    const { host } = steeredHost("next")
    const w = world(host, {}, true)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("start\n")
    await until(() => w.screen().includes("› start"), "the run")
    await new Promise((r) => setTimeout(r, 20))
    w.input.write("and one more thing\n")
    await until(() => w.screen().split("── Completed").length === 3, "both ends")
    const screen = w.screen()
    expect(screen).toContain(
      "↳ the turn ended before the model read “and one more thing”; it waits for the next turn",
    )
    expect(screen).toContain("↻ a new turn for “and one more thing” (Ctrl-C cancels it)")
    expect(screen).toContain("↳ “and one more thing” is answered in this turn")
    expect(screen).not.toContain("the agent started a turn by itself")
    expect(screen).not.toContain("(steering)")
    w.input.end()
    await done
  })
})

describe("commands", () => {
  it("refuses /approval full in the agent's own words once it said full access cannot run here", async () => {
    const { host, calls, emit } = fakeHost({})
    const w = world(host, { env: { IS_SANDBOX: "1" } })
    open.push(w)
    await w.chat.start()
    const notice =
      "Full access is unavailable here: Claude Code refuses it as root unless IS_SANDBOX=1 is set; sessions start without it"
    emit(ev({ type: "Notice", level: "info", text: notice }))
    const done = w.chat.interactive()
    await until(() => w.screen().includes("i Full access is unavailable"), "the notice")
    w.input.write("/approval full\n")
    await until(() => w.screen().includes("approvals full is not available"), "the refusal")
    expect(w.screen()).toContain(`approvals full is not available: ${notice}`)
    expect(calls.filter((c) => ["setOption", "resumeSession", "closeSession"].includes(c.method))).toEqual([])
    // Not offered by Tab either.
    expect(completeLine(w.chat, "/approval f")[0]).toEqual([])
    w.input.end()
    await done
  })

  it("completes option values before any /model (after the agent's info changed), and a common start", async () => {
    const { host, events } = fakeHost({})
    const w = world(host)
    open.push(w)
    await w.chat.start()
    // The plugin says its info changed (a catalog probe): the chat asks again only when it needs to.
    events.publish({ kind: "info_changed", agentId: AGENT })
    expect(completeLine(w.chat, "/effort h")).toEqual([["high"], "h"])
    expect(completeLine(w.chat, "/approval ")[0]).toEqual([])
    expect(w.screen()).toContain("supervised  auto  full")
    expect(completeLine(w.chat, "/mo")).toEqual([["/model"], "/mo"])
    expect(completeLine(w.chat, "/re")).toEqual([[], "/re"])
    expect(w.screen()).toContain("/resume  /rewind")
  })

  it("offers the command a mistyped /word nearly names, and sends a skill or an unknown word to the agent", async () => {
    const { host, calls } = fakeHost({ prompt: quickRuns() })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/modle\n/skils\n/frobnicate\n")
    await until(() => w.screen().includes("/frobnicate is not a front-end command"), "the last line")
    expect(w.screen()).toContain("/modle is not a command: did you mean /model?")
    expect(w.screen()).toContain("/skils is not a command: did you mean /skills?")
    expect(
      calls.filter((c) => c.method === "prompt").map((c) => (c.params as { text: string }).text),
    ).toEqual(["/frobnicate"])
    w.input.end()
    await done
  })

  it("remembers /model and /effort for the next start, and drops a remembered value no longer offered", async () => {
    const kept: Array<[string, string]> = []
    const first = world(fakeHost({}).host, { remember: (id, value) => kept.push([id, value]) })
    open.push(first)
    await first.chat.start()
    const done = first.chat.interactive()
    first.input.write("/model opus\n/effort high\n")
    await until(() => first.screen().includes("Effort: high"), "both choices")
    expect(kept).toEqual([
      ["model", "claude-opus-5-5"],
      ["effort", "high"],
    ])
    first.input.end()
    await done

    const { host, calls } = fakeHost({})
    const next = world(host, { remembered: { model: "claude-opus-5-5", effort: "turbo" } })
    open.push(next)
    expect(await next.chat.start()).toBe(true)
    expect(calls.find((c) => c.method === "createSession")?.params).toMatchObject({
      options: { model: "claude-opus-5-5" },
    })
    expect(next.screen()).toContain("your last effort turbo is not offered now; the default runs")
  })

  it("/trace alone shows its in-chat form; /usage shows the session's cost so far", async () => {
    const { host, emit } = fakeHost({ getUsage: () => ({ windows: [], reset_credits: [], updated_at: "" }) })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    emit({ ...ev({ type: "RunStarted" }) })
    emit(
      ev({
        type: "RunEnded",
        outcome: "Completed",
        usage: { input_tokens: 1, output_tokens: 1, cost_usd: 0.25 },
      }),
    )
    const done = w.chat.interactive()
    await until(() => w.screen().includes("$0.2500"), "the run's end")
    w.input.write("/trace\n/usage\n")
    await until(() => w.screen().includes("so far"), "/usage")
    expect(w.screen()).toContain("usage: /trace report --base <rev>")
    expect(w.screen()).not.toContain("npm run trace")
    expect(w.screen()).toContain("this session: $0.2500 so far")
    expect(SESSION).toBe("s1")
    w.input.end()
    await done
  })
})

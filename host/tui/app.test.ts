/**
 * The chat loop against a hand-written fake agent (no CLI): typed lines become
 * prompts, approval and question answers and commands; one-shot runs exit with
 * the code of their outcome; Ctrl-C cancels.
 */
import { PassThrough, Writable } from "node:stream"
import { afterEach, describe, expect, it } from "vitest"
import type { AgentEvent, AgentInfo } from "../../sdk/protocol.ts"
import { makeEventHub } from "../events.ts"
import type { Host } from "../host.ts"
import { Chat, exitCodeFor } from "./app.ts"

const AGENT = "claude"
const SESSION = "s1"
const RUN = "r1"

const INFO: AgentInfo = {
  id: AGENT,
  name: "Claude Code",
  status: "Ready",
  models: [{ value: "claude-opus-5-5", label: "Opus 5.5", aliases: ["opus"] }],
  options: [
    {
      id: "effort",
      label: "Effort",
      kind: "select",
      choices: [
        { value: "low", label: "Low" },
        { value: "high", label: "High" },
      ],
    },
  ],
  capabilities: { rollback: true, fork: true, cancelTask: true, steering: true, images: true },
}

type Calls = Array<{ method: string; params: unknown }>

/** A host whose one agent answers from `script`; every call is recorded. */
const fakeHost = (
  script: Partial<Record<string, (params: never, emit: (e: AgentEvent) => void) => unknown>>,
) => {
  const events = makeEventHub()
  const calls: Calls = []
  const emit = (event: AgentEvent) =>
    setImmediate(() => events.publish({ kind: "agent_event", agentId: AGENT, event }))
  const defaults: Record<string, (params: never, emit: (e: AgentEvent) => void) => unknown> = {
    initialize: () => INFO,
    createSession: () => ({ session_id: SESSION, info: { options: { effort: "low" } } }),
    prompt: () => ({ run_id: RUN, steered: false }),
  }
  const host = {
    events,
    agents: new Map([[AGENT, {}]]),
    call: async (_agent: string, method: string, params?: unknown) => {
      calls.push({ method, params })
      const answer = script[method] ?? defaults[method]
      return answer ? answer(params as never, emit) : undefined
    },
  } as unknown as Host
  return { host, calls, emit }
}

const world = (host: Host, options: Partial<ConstructorParameters<typeof Chat>[0]> = {}) => {
  const input = new PassThrough()
  let out = ""
  const output = new Writable({
    write(chunk, _enc, done) {
      out += String(chunk)
      done()
    },
  })
  const chat = new Chat({ host, agentId: AGENT, cwd: "/ws", input, output, color: false, ...options })
  return { chat, input, screen: () => out }
}

const until = async (check: () => boolean, what: string) => {
  const end = Date.now() + 3000
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 5))
  }
}

const ev = (e: Record<string, unknown>) => ({ session_id: SESSION, run_id: RUN, ...e }) as AgentEvent

let open: Array<{ input: PassThrough }> = []
afterEach(() => {
  for (const w of open) w.input.end()
  open = []
})

describe("the interactive chat", () => {
  it("continues a blocked run once at its reset when opted in, showing the time left", async () => {
    let prompts = 0
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        prompts++
        const run = `r${prompts}`
        emit({ session_id: SESSION, run_id: run, type: "RunStarted" } as AgentEvent)
        if (prompts === 1) {
          emit({
            session_id: SESSION,
            run_id: run,
            type: "usage_blocked",
            window: "five_hour",
            reason: "window",
            resets_at: new Date(Date.now() + 300).toISOString(),
            message: "5-hour limit reached",
          } as AgentEvent)
          emit({ session_id: SESSION, run_id: run, type: "RunEnded", outcome: "Failed" } as AgentEvent)
          emit({
            session_id: SESSION,
            run_id: run,
            type: "recovery_identity",
            identity: { identified: true, key: "k", email: "e", organization_id: "o", config_dir: "/c" },
          } as AgentEvent)
        } else
          emit({ session_id: SESSION, run_id: run, type: "RunEnded", outcome: "Completed" } as AgentEvent)
        return { run_id: run, steered: false }
      },
    })
    const w = world(host, { autoContinue: "identified" })
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("hello\n")
    await until(() => w.screen().includes("Continuing automatically at"), "the time left")
    await until(() => calls.filter((c) => c.method === "prompt").length === 2, "the continue")
    expect(
      calls.filter((c) => c.method === "prompt").map((c) => (c.params as { text: string }).text),
    ).toEqual(["hello", "continue"])
    await new Promise((r) => setTimeout(r, 1_500))
    expect(calls.filter((c) => c.method === "prompt")).toHaveLength(2)
    w.input.write("/quit\n")
    expect(await done).toBe(0)
  })

  it("sends a prompt, asks for approval at the prompt, re-asks on a bad answer, and quits on /quit", async () => {
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        emit(
          ev({
            type: "ApprovalRequested",
            approval_id: "ap1",
            tool_name: "Bash",
            title: "rm -rf build",
            input: { command: "rm -rf build" },
          }),
        )
        return { run_id: RUN, steered: false }
      },
      answerApproval: (_p, emit) => {
        emit(ev({ type: "RunEnded", outcome: "Completed" }))
      },
    })
    const w = world(host)
    open.push(w)
    expect(await w.chat.start()).toBe(true)
    const done = w.chat.interactive()
    w.input.write("remove the build folder\n")
    await until(() => w.screen().includes("? Allow Bash: rm -rf build"), "the approval")
    expect(calls.find((c) => c.method === "prompt")?.params).toMatchObject({
      sessionId: SESSION,
      text: "remove the build folder",
    })
    w.input.write("perhaps\n")
    await until(() => w.screen().includes("answer a (allow), d (deny) or A"), "the re-ask")
    w.input.write("A\n")
    await until(() => w.screen().includes("── Completed"), "the run's end")
    expect(calls.find((c) => c.method === "answerApproval")?.params).toEqual({
      sessionId: SESSION,
      approvalId: "ap1",
      decision: "allow_always",
    })
    w.input.write("/quit\n")
    expect(await done).toBe(0)
  })

  it("answers a question by option number", async () => {
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        emit(
          ev({
            type: "QuestionAsked",
            question_id: "q1",
            questions: [
              {
                question: "Which color?",
                multi_select: false,
                options: [{ label: "Blue" }, { label: "Red" }],
              },
            ],
          }),
        )
        return { run_id: RUN, steered: false }
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("make a widget\n")
    await until(() => w.screen().includes("2. Red"), "the question")
    w.input.write("2\n")
    await until(() => calls.some((c) => c.method === "answerQuestion"), "the answer")
    expect(calls.find((c) => c.method === "answerQuestion")?.params).toEqual({
      sessionId: SESSION,
      questionId: "q1",
      answers: { "Which color?": "Red" },
    })
    w.input.end()
    expect(await done).toBe(0)
  })

  it("rewinds to a prompt by its item id, sets options, and names an unknown command", async () => {
    let n = 0
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        const run_id = `r${++n}`
        emit(ev({ type: "RunStarted", run_id }))
        emit(ev({ type: "RunEnded", run_id, outcome: "Completed" }))
        return { run_id, steered: false }
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    const ends = () => w.screen().split("── Completed").length - 1
    w.input.write("first\n")
    await until(() => ends() === 1, "the first run's end")
    w.input.write("second\n")
    await until(() => ends() === 2, "the second run's end")
    w.input.write("/rewind 2\n/effort high\n/effort huge\n/frobnicate\n")
    await until(() => w.screen().includes("unknown command /frobnicate"), "the last command")
    const prompts = calls.filter((c) => c.method === "prompt").map((c) => c.params as { itemId: string })
    expect(calls.find((c) => c.method === "rollback")?.params).toEqual({
      sessionId: SESSION,
      itemId: prompts[1]?.itemId,
    })
    expect(w.screen()).toContain("⟲ Rewound to just before “second”")
    expect(calls.find((c) => c.method === "setOption")?.params).toEqual({
      sessionId: SESSION,
      optionId: "effort",
      value: "high",
    })
    expect(w.screen()).toContain("unknown value huge; one of: low, high")
    expect(w.screen()).toContain("✗ unknown command /frobnicate — /help lists them")
    w.input.end()
    await done
  })

  it("shows a failed call as one line with what to do", async () => {
    const { host } = fakeHost({
      createSession: () => {
        throw new Error("spawn claude ENOENT\n    at somewhere")
      },
    })
    const w = world(host)
    open.push(w)
    expect(await w.chat.start()).toBe(false)
    expect(w.screen()).toContain("✗ spawn claude ENOENT — check `claude --version`, or start with --demo\n")
    expect(w.screen()).not.toContain("at somewhere")
  })
})

describe("one-shot runs", () => {
  it("exit with the code of the run's outcome", async () => {
    expect([exitCodeFor("Completed"), exitCodeFor("Failed"), exitCodeFor("Cancelled")]).toEqual([0, 1, 130])
    const { host } = fakeHost({
      prompt: (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        emit(ev({ type: "RunEnded", outcome: "Failed", error: "The CLI exited" }))
        return { run_id: RUN, steered: false }
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    expect(await w.chat.once("go")).toBe(1)
    expect(w.screen()).toContain("── Failed\n   The CLI exited\n")
  })

  it("answer approvals and questions by policy", async () => {
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        emit(ev({ type: "ApprovalRequested", approval_id: "ap1", tool_name: "Bash", title: "ls", input: {} }))
        emit(
          ev({
            type: "QuestionAsked",
            question_id: "q1",
            questions: [
              { question: "Which?", multi_select: true, options: [{ label: "One" }, { label: "Two" }] },
            ],
          }),
        )
        emit(ev({ type: "RunEnded", outcome: "Completed" }))
        return { run_id: RUN, steered: false }
      },
    })
    const w = world(host, { approvals: "allow", questions: "first", policyReason: "--yes" })
    open.push(w)
    await w.chat.start()
    expect(await w.chat.once("go")).toBe(0)
    expect(calls.find((c) => c.method === "answerApproval")?.params).toMatchObject({ decision: "allow" })
    expect(calls.find((c) => c.method === "answerQuestion")?.params).toMatchObject({
      answers: { "Which?": ["One"] },
    })
    expect(w.screen()).toContain("→ allowed (--yes)")
  })

  it("Ctrl-C cancels the run, which then exits 130", async () => {
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        return { run_id: RUN, steered: false }
      },
      cancel: (_p, emit) => {
        emit(ev({ type: "RunEnded", outcome: "Cancelled" }))
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const code = w.chat.once("sleep forever")
    await until(() => w.screen().includes("› sleep forever"), "the prompt")
    await new Promise((r) => setTimeout(r, 20))
    w.chat.interrupt()
    expect(await code).toBe(130)
    expect(calls.some((c) => c.method === "cancel")).toBe(true)
    expect(w.screen()).toContain("⊘ Cancelling the run")
  })
})

/**
 * The chat loop against a hand-written fake agent (no CLI): typed lines become
 * prompts, approval and question answers and commands; one-shot runs exit with
 * the code of their outcome; Ctrl-C cancels.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { git, makeGitWorld } from "../testing/git-fixture.ts"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { PassThrough } from "node:stream"
import { afterEach, describe, expect, it } from "vitest"
import type { AgentEvent } from "../../sdk/protocol.ts"
import { exitCodeFor } from "./app.ts"
import { ev, fakeHost, INFO, RUN, SESSION, until, world } from "./testing.ts"

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
    await until(
      () => w.screen().includes("answer a (allow), d (deny; d <reason> tells the agent why) or A"),
      "the re-ask",
    )
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
      answerQuestion: (_p, emit) => {
        emit(ev({ type: "RunEnded", outcome: "Completed" }))
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

  it("rewinds to a prompt by its item id, sets options, and sends any other slash line to the agent", async () => {
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
    await until(() => w.screen().includes("/frobnicate is not a front-end command"), "the last command")
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
    expect(w.screen()).toContain("unknown effort huge; one of: low, high")
    // Defect 5: a slash line that is no front-end command is the agent's (skills, /compact).
    expect(calls.filter((c) => c.method === "prompt").at(-1)?.params).toMatchObject({ text: "/frobnicate" })
    w.input.end()
    await done
  })

  it("says where a slash line goes before the run's lines, even when the prompt's answer comes after them", async () => {
    const { host } = fakeHost({
      prompt: async (_p, emit) => {
        emit(ev({ type: "RunStarted" }))
        emit(ev({ type: "RunEnded", outcome: "Completed" }))
        // The run's events are heard before the call answers (a fast turn on a loaded machine).
        await new Promise((r) => setTimeout(r, 50))
        return { run_id: RUN, steered: false }
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/frobnicate\n")
    await until(() => w.screen().includes("── Completed"), "the run's end")
    await new Promise((r) => setTimeout(r, 80))
    const screen = w.screen()
    const note = screen.indexOf("↳ /frobnicate is not a front-end command")
    expect(note).toBeGreaterThanOrEqual(0)
    expect(note).toBeLessThan(screen.indexOf("── Completed"))
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

describe("runs the agent opens by itself", () => {
  it("shows the end of a run the CLI started after a cancel, and gives the prompt back", async () => {
    let n = 0
    const { host, emit } = fakeHost({
      prompt: (_p, emit) => {
        const run_id = n++ === 0 ? "r1" : "r3"
        emit(ev({ type: "RunStarted", run_id }))
        // The prompt after the self-started run ends; the script's end waits for it.
        if (run_id === "r3") emit(ev({ type: "RunEnded", run_id, outcome: "Completed" }))
        return { run_id, steered: false }
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("slow\n")
    await until(() => host.events !== undefined && w.screen().includes("› slow"), "the prompt")
    await new Promise((r) => setTimeout(r, 20))
    // Cancelled; then the CLI takes up the steer in a turn of its own.
    emit(ev({ type: "RunEnded", run_id: "r1", outcome: "Cancelled" }))
    emit(ev({ type: "RunStarted", run_id: "r2" }))
    emit(ev({ type: "TextDelta", run_id: "r2", item_id: "m:0", text: "About your steer." }))
    await until(() => w.screen().includes("the agent started a turn by itself"), "the self-started run")
    emit(ev({ type: "RunEnded", run_id: "r2", outcome: "Completed" }))
    await until(() => w.screen().includes("── Completed"), "its end")
    expect(w.screen()).toContain("About your steer.\n── Completed")
    // The prompt is back: a line typed now is a new prompt, not a steer of r2.
    w.input.write("next\n")
    await until(() => w.screen().includes("› next"), "the next prompt")
    expect(w.screen()).not.toContain("steering")
    w.input.end()
    await done
  })
})

describe("options and ids, checked before anything is sent", () => {
  it("refuses --effort turbo at the start as /effort turbo is refused", async () => {
    const { host, calls } = fakeHost({})
    const w = world(host, { sessionOptions: { effort: "turbo" } })
    open.push(w)
    expect(await w.chat.start()).toBe(false)
    expect(w.screen()).toContain("✗ unknown effort turbo; one of: low, high")
    expect(calls.some((c) => c.method === "createSession")).toBe(false)
  })

  it("does not offer full as root without IS_SANDBOX, and says why", async () => {
    const { host, calls } = fakeHost({})
    const w = world(host, { env: {} })
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/approval full\n")
    const root = typeof process.getuid === "function" && process.getuid() === 0
    if (root) {
      await until(() => w.screen().includes("approvals full is not available"), "the refusal")
      expect(w.screen()).toContain("IS_SANDBOX=1")
    } else await until(() => w.screen().includes("Approvals: full"), "the switch")
    expect(calls.some((c) => c.method === "setOption")).toBe(false)
    w.input.end()
    await done
  })

  it("restarts the session with the flags full needs, and resumes it when a mode fails live", async () => {
    let n = 0
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        const run_id = `r${++n}`
        emit(ev({ type: "RunStarted", run_id }))
        emit(ev({ type: "RunEnded", run_id, outcome: "Completed" }))
        return { run_id, steered: false }
      },
      setOption: () => {
        throw new Error("Cannot set permission mode: auto is not available for this model")
      },
      resumeSession: (p: { sessionId: string }) => ({ session_id: p.sessionId, info: {} }),
    })
    const w = world(host, { env: { IS_SANDBOX: "1" } })
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("hello\n/approval full\n/approval auto\n")
    await until(() => w.screen().includes("Approvals: auto"), "both switches")
    const resumes = calls.filter((c) => c.method === "resumeSession").map((c) => c.params)
    // full: never tried live (the CLI refuses it without the launch flag); auto: tried, refused, restarted.
    expect(calls.filter((c) => c.method === "setOption").map((c) => c.params)).toEqual([
      { sessionId: SESSION, optionId: "approval_mode", value: "auto" },
    ])
    expect(resumes).toMatchObject([
      { sessionId: SESSION, cwd: "/ws", options: { effort: "low", approval_mode: "full" } },
      { sessionId: SESSION, cwd: "/ws", options: { approval_mode: "auto" } },
    ])
    expect(w.screen()).not.toContain("the session may have ended")
    expect(w.screen()).toContain("the session restarted with the flags full needs")
    w.input.end()
    await done
  })

  it("names a session that does not exist plainly, by number or by id", async () => {
    const { host, calls } = fakeHost({
      listSessions: () => ({
        sessions: [{ session_id: "aaaa-1", title: "First", modified_at: 0, size_bytes: 10 }],
      }),
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/open zzz\n/open 99\n")
    await until(() => w.screen().includes("there is no session 99"), "both answers")
    expect(w.screen()).toContain("no stored session zzz in /ws: /sessions lists them")
    expect(w.screen()).toContain("there is no session 99: /sessions lists 1 (1 to 1)")
    expect(calls.some((c) => c.method === "readSession")).toBe(false)
    w.input.end()
    await done
  })

  it("titles an opened session as /sessions does when the transcript has no title of its own", async () => {
    const { host } = fakeHost({
      listSessions: () => ({
        sessions: [{ session_id: "aaaa-1", title: "Fix the login page", modified_at: 0, size_bytes: 10 }],
      }),
      readSession: () => ({ items: [{ type: "user", id: "u1", text: "Fix the login page" }] }),
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/sessions\n/open 1\n")
    await until(() => w.screen().includes("── end of session"), "the session")
    expect(w.screen()).toContain("── Fix the login page · aaaa-1")
    expect(w.screen()).not.toContain("Untitled")
    w.input.end()
    await done
  })

  it("says a model change once", async () => {
    const { host } = fakeHost({
      setOption: (_p, emit) => {
        emit(
          ev({
            type: "SessionInfo",
            info: { model: "claude-opus-5-5", options: { model: "claude-opus-5-5" } },
          }),
        )
      },
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/model opus\n")
    await until(() => w.screen().includes("model: claude-opus-5-5"), "the change")
    await new Promise((r) => setTimeout(r, 30))
    expect(
      w
        .screen()
        .split("\n")
        .filter((l) => l.includes("claude-opus-5-5")),
    ).toEqual(["model: claude-opus-5-5"])
    w.input.end()
    await done
  })
})

describe("daily commands over the agent's own methods", () => {
  it("points a signed-out account at /login, which exists", async () => {
    const { host } = fakeHost({ initialize: () => ({ ...INFO, status: "AuthRequired" }) })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    expect(w.screen()).toContain("/login signs this account in")
    expect(w.screen()).not.toContain("claude auth login")
  })

  it("/login prints the sign-in page, /logout signs out, /update says why it cannot", async () => {
    const { host, calls } = fakeHost({
      initialize: () => ({
        ...INFO,
        maintenance: { version: "2.1.332", path: "/opt/claude", can_update: false },
      }),
      signIn: () => ({ url: "https://claude.ai/oauth/x", message: "Open the page to sign in" }),
      signOut: () => undefined,
    })
    const w = world(host)
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/login\n/logout\n/update\n")
    await until(() => w.screen().includes("is not updated from here"), "the three answers")
    expect(w.screen()).toContain("Open the page to sign in\n  open https://claude.ai/oauth/x")
    expect(w.screen()).toContain("claude signed out; /login signs in again")
    expect(calls.map((c) => c.method)).toEqual(expect.arrayContaining(["signIn", "signOut"]))
    expect(calls.some((c) => c.method === "update")).toBe(false)
    w.input.end()
    await done
  })

  it("/image attaches a file to the next prompt; /cd starts a session in another folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cvg-image-"))
    writeFileSync(join(dir, "shot.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47]))
    mkdirSync(join(dir, "other"))
    let n = 0
    const { host, calls } = fakeHost({
      prompt: (_p, emit) => {
        const run_id = `r${++n}`
        emit(ev({ type: "RunStarted", run_id }))
        emit(ev({ type: "RunEnded", run_id, outcome: "Completed" }))
        return { run_id, steered: false }
      },
    })
    const w = world(host, { cwd: dir })
    open.push(w)
    await w.chat.start()
    const done = w.chat.interactive()
    w.input.write("/image shot.png\nwhat is this?\n/cd other\n")
    await until(() => w.screen().includes("the agent now works in"), "the folder change")
    expect(calls.find((c) => c.method === "prompt")?.params).toMatchObject({
      text: "what is this?",
      images: [{ media_type: "image/png", data: "iVBORw==" }],
    })
    expect(calls.filter((c) => c.method === "createSession").at(-1)?.params).toMatchObject({
      cwd: join(dir, "other"),
    })
    w.input.end()
    await done
  })
})

describe("/trace", () => {
  it("reports a range of the workspace's commits with the lines an agent's records claim; usage otherwise", async () => {
    const gitWorld = makeGitWorld()
    try {
      const repo = gitWorld.repo("repo")
      const base = git(repo, "rev-parse", "HEAD")
      gitWorld.write(repo, "a.ts", "1\n2\n3\n")
      git(repo, "add", "-A")
      git(repo, "commit", "-q", "-m", "agent work")
      const sha = git(repo, "rev-parse", "HEAD")
      const record = {
        version: "0.1",
        id: crypto.randomUUID(),
        timestamp: "2026-12-01T09:00:00Z",
        vcs: { type: "git", revision: sha },
        tool: { name: "claude-code", version: "2.1.332" },
        files: [
          {
            path: "a.ts",
            conversations: [
              {
                url: "cvg://session/s1",
                contributor: { type: "ai", model_id: "anthropic/claude-opus-5-5" },
                ranges: [{ start_line: 1, end_line: 2 }],
              },
            ],
          },
        ],
      }
      git(repo, "notes", "--ref=agent-trace", "add", "-m", JSON.stringify(record), sha)
      const { host } = fakeHost({})
      const w = world(host, { cwd: repo })
      open.push(w)
      expect(await w.chat.start()).toBe(true)
      const done = w.chat.interactive()
      w.input.write(`/trace report --base ${base}\n`)
      await until(() => w.screen().includes("2 of 3 added lines"), "the report")
      expect(w.screen()).toContain("agent work")
      w.input.write("/trace\n")
      await until(() => /usage/i.test(w.screen()), "the usage line")
      w.input.write("/quit\n")
      expect(await done).toBe(0)
    } finally {
      gitWorld.cleanup()
    }
  })
})

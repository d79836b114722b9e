import { beforeAll, describe, expect, it } from "vitest"
import type { AgentEvent, TaskInfo, ToolCall } from "../../sdk/protocol.ts"
import { loadMarkdown } from "./markdown.ts"
import { makeRenderer } from "./render.ts"
import { compactNumber, stripAnsi } from "./text.ts"

beforeAll(() => loadMarkdown())

const S = "s1"
const R = "run-1"
const plain = () => makeRenderer({ color: false, now: () => new Date("2026-01-01T12:00:00Z") })
const colored = () => makeRenderer({ color: true })
const play = (events: ReadonlyArray<AgentEvent>, renderer = plain()) => events.map(renderer.event).join("")

const bash = (over: Partial<ToolCall> = {}): ToolCall => ({
  id: "toolu_1",
  name: "Bash",
  kind: "execute",
  title: "touch a.txt && echo ok",
  input: { command: "touch a.txt && echo ok" },
  status: "Running",
  ...over,
})
const task = (over: Partial<TaskInfo> = {}): TaskInfo => ({
  id: "toolu_agent",
  title: "Count workspace files",
  name: "general-purpose",
  status: "Running",
  ...over,
})

describe("streamed text and reasoning", () => {
  it("joins deltas of one item and gives the screen only whole lines", () => {
    const r = plain()
    const out = play(
      [
        { type: "RunStarted", session_id: S, run_id: R },
        { type: "ReasoningDelta", session_id: S, run_id: R, item_id: "m:0", text: "I should " },
        { type: "ReasoningDelta", session_id: S, run_id: R, item_id: "m:0", text: "greet back." },
        { type: "TextDelta", session_id: S, run_id: R, item_id: "m:1", text: "Hello" },
        { type: "TextDelta", session_id: S, run_id: R, item_id: "m:1", text: " there!\n\nSecond line" },
      ],
      r,
    )
    // The first paragraph is whole at its blank line; the second waits for the stream's end.
    expect(out).toBe("✻ Thinking…\n  I should greet back.\nHello there!\n")
    expect(r.flush()).toBe("\nSecond line\n")
  })

  it("wraps long thinking under its indent", () => {
    const r = makeRenderer({ color: false, width: () => 24 })
    const out = r.event({
      type: "ReasoningDelta",
      session_id: S,
      item_id: "m:0",
      text: "the quick brown fox jumps over the lazy dog\n",
    })
    expect(out).toBe("✻ Thinking…\n  the quick brown fox\n  jumps over the lazy\n  dog\n")
  })

  it("folds thinking past its lines, and /expand has all of it", () => {
    const r = makeRenderer({ color: false, thinkingLines: 2 })
    const out = r.event({ type: "ReasoningDelta", session_id: S, item_id: "m:0", text: "a\nb\nc\nd\n" })
    expect(out + r.flush()).toBe("✻ Thinking…\n  a\n  b\n  … 2 more lines of thinking · /expand 1\n")
    expect(r.expand(1)).toBe("a\nb\nc\nd")
  })

  it("renders markdown with colour: emphasis, lists, code, tables", () => {
    const r = colored()
    const out = stripAnsi(
      r.event({
        type: "TextDelta",
        session_id: S,
        item_id: "m:1",
        text: "Some **bold** words.\n\n- one\n- two\n\n```js\nconst x = 1\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
      }) + r.flush(),
    )
    expect(out).toContain("Some bold words.")
    expect(out).not.toContain("**")
    expect(out).toMatch(/\* one\n\s*\* two/)
    expect(out).toContain("const x = 1")
    expect(out).not.toContain("```")
    expect(out).toMatch(/│ a +│ b +│/)
  })

  it("dims reasoning and leaves text unstyled", () => {
    const r = colored()
    const thought = r.event({ type: "ReasoningDelta", session_id: S, item_id: "m:0", text: "hmm\n" })
    r.event({ type: "TextDelta", session_id: S, item_id: "m:1", text: "Hi" })
    expect(thought).toContain("\u001b[2m")
    expect(stripAnsi(r.flush())).toBe("Hi\n")
  })

  it("puts a subagent's text behind its task's gutter", () => {
    const r = plain()
    const out = play(
      [
        { type: "Task", session_id: S, task: task() },
        { type: "TextDelta", session_id: S, task_id: "toolu_agent", item_id: "a:0", text: "one\ntwo" },
      ],
      r,
    )
    expect(out + r.flush()).toContain("│ one\n│ two\n")
  })
})

describe("tool calls", () => {
  it("shows a Bash call with its status, exit code and output", () => {
    const out = play([
      { type: "ToolCallStarted", session_id: S, call: bash() },
      {
        type: "ToolCallFinished",
        session_id: S,
        call: bash({ status: "Completed", exit_code: 0, output_text: "ok\n" }),
      },
      {
        type: "ToolCallFinished",
        session_id: S,
        call: bash({ id: "t2", status: "Failed", exit_code: 2, output_text: "boom" }),
      },
    ])
    expect(out).toContain("⏺ Bash $ touch a.txt && echo ok\n")
    expect(out).toContain("  ⎿ ✓ Completed · exit 0\n    ok\n")
    expect(out).toContain("  ⎿ ✗ Failed · exit 2\n    boom\n")
  })

  it("cuts long output to the configured number of lines", () => {
    const r = makeRenderer({ color: false, outputLines: 2 })
    const out = r.event({
      type: "ToolCallFinished",
      session_id: S,
      call: bash({ status: "Completed", exit_code: 0, output_text: "1\n2\n3\n4" }),
    })
    expect(out).toContain("    1\n    2\n    … 2 more lines · /expand 1\n")
    expect(r.expand(1)).toBe("1\n2\n3\n4")
  })

  it("colours a unified diff: + green, - red; the fragment's @@ numbers are left out", () => {
    const diff = "--- a/notes.md\n+++ b/notes.md\n@@ -1,2 +1,2 @@\n line one\n-line two\n+line 2 (edited)\n"
    const call: ToolCall = {
      id: "e1",
      name: "Edit",
      kind: "edit",
      title: "Edit /ws/notes.md",
      input: {},
      status: "Running",
      diff,
    }
    const out = colored().event({ type: "ToolCallStarted", session_id: S, call })
    expect(out).toContain("\u001b[32m+line 2 (edited)\u001b[39m")
    expect(out).toContain("\u001b[31m-line two\u001b[39m")
    expect(stripAnsi(out)).not.toContain("@@")
    expect(stripAnsi(out)).toContain("⏺ Edit /ws/notes.md\n")
  })

  it("shows an edit's result as the CLI's structuredPatch: true line numbers, context, indentation", () => {
    // What 2.1.332 puts in tool_use_result (testdata/write_edit): an edit on line 2 of an indented file.
    const call: ToolCall = {
      id: "e1",
      name: "Edit",
      kind: "edit",
      title: "Edit /ws/hello.py",
      input: {},
      status: "Completed",
      diff: '@@ -1,1 +1,1 @@\n-print("Hello")\n+print("Hello, world")\n',
      output: {
        filePath: "/ws/hello.py",
        structuredPatch: [
          {
            oldStart: 1,
            oldLines: 3,
            newStart: 1,
            newLines: 3,
            lines: [" def greet():", '-    print("Hello")', '+    print("Hello, world")', " "],
          },
        ],
      },
      output_text: "The file /ws/hello.py has been updated successfully.",
    }
    const out = play([{ type: "ToolCallFinished", session_id: S, call }])
    expect(out).toBe(
      [
        "  ⎿ ✓ Completed",
        "    1  def greet():",
        '    2 -    print("Hello")',
        '    2 +    print("Hello, world")',
        "    3",
        "",
      ].join("\n"),
    )
    // A stored call draws the true patch alone.
    expect(plain().transcript([{ type: "tool_call", id: "e1", call }])).not.toContain("@@ -1,1")
  })

  it("cuts a long diff the same way, with /expand for the rest", () => {
    const r = makeRenderer({ color: false, diffLines: 2 })
    const call: ToolCall = {
      id: "e2",
      name: "Edit",
      kind: "edit",
      title: "Edit /ws/a",
      input: {},
      status: "Running",
      diff: "-a\n+b\n-c\n+d\n",
    }
    expect(r.event({ type: "ToolCallStarted", session_id: S, call })).toBe(
      "⏺ Edit /ws/a\n  -a\n  +b\n  ⋮ 1 more removed line\n  ⋮ 1 more added line\n  … 2 more diff lines · /expand 1\n",
    )
  })

  it("shows both sides of a long edit fairly, with the file's line numbers, and /expand without end-of-file markers", () => {
    // 30 lines replaced by 30 in the middle of a file: the cut keeps removed and added lines alike.
    const old = Array.from({ length: 30 }, (_, i) => `-old ${i + 1}`)
    const added = Array.from({ length: 30 }, (_, i) => `+new ${i + 1}`)
    const call: ToolCall = {
      id: "e3",
      name: "Edit",
      kind: "edit",
      title: "Edit /ws/big.txt",
      input: {},
      status: "Completed",
      output: {
        structuredPatch: [
          {
            oldStart: 101,
            oldLines: 32,
            newStart: 101,
            newLines: 32,
            lines: [" before", ...old, ...added, " after", "\\ No newline at end of file"],
          },
        ],
      },
    }
    const r = makeRenderer({ color: false })
    const out = r.event({ type: "ToolCallFinished", session_id: S, call })
    const removed = out.split("\n").filter((l) => / -old /.test(l))
    const kept = out.split("\n").filter((l) => / \+new /.test(l))
    expect(removed.length).toBeGreaterThanOrEqual(15)
    expect(Math.abs(removed.length - kept.length)).toBeLessThanOrEqual(1)
    expect(out).toContain("    101  before\n    102 -old 1\n")
    expect(out).toContain("    102 +new 1\n")
    expect(out).toMatch(/⋮ 1\d more removed lines\n/)
    expect(out).not.toContain("No newline")
    const whole = r.expand(r.folds()) ?? ""
    expect(whole.split("\n")).toHaveLength(62)
    expect(whole).toContain("131 +new 30\n132  after")
    expect(whole).not.toContain("No newline")
  })

  it("shows a written file as added lines", () => {
    const call: ToolCall = {
      id: "w1",
      name: "Write",
      kind: "edit",
      title: "Write /ws/notes.md",
      input: {},
      status: "Running",
      new_text: "# Notes\nline\n",
    }
    expect(play([{ type: "ToolCallStarted", session_id: S, call }])).toBe(
      "⏺ Write /ws/notes.md\n  +# Notes\n  +line\n",
    )
  })

  it("prints progress output while a tool runs", () => {
    expect(play([{ type: "output_delta", session_id: S, tool_call_id: "toolu_1", text: "50%\n" }])).toBe(
      "    50%\n",
    )
  })
})

describe("plan, tasks, prompts", () => {
  it("draws the plan as a checklist", () => {
    const out = play([
      {
        type: "Plan",
        session_id: S,
        entries: [
          { content: "Read the code", status: "completed" },
          { content: "Write the fix", status: "in_progress", active_form: "Writing the fix" },
          { content: "Test it", status: "pending" },
        ],
      },
    ])
    expect(out).toBe("Plan\n  ☑ Read the code\n  ◐ Writing the fix\n  ☐ Test it\n")
  })

  it("announces tasks when their status changes and draws the tree at the run's end", () => {
    const r = plain()
    const out = play(
      [
        { type: "RunStarted", session_id: S, run_id: R },
        { type: "Task", session_id: S, task: task() },
        { type: "Task", session_id: S, task: task({ activity: "Bash" }) },
        {
          type: "Task",
          session_id: S,
          task: task({ id: "child", parent_task_id: "toolu_agent", title: "Nested" }),
        },
        {
          type: "ToolCallStarted",
          session_id: S,
          task_id: "child",
          call: bash({ id: "t9", title: "ls" }),
        },
        {
          type: "Task",
          session_id: S,
          task: task({
            status: "Completed",
            summary: "There are 3 files.",
            usage: { tool_uses: 1, used_tokens: 1200 },
          }),
        },
        { type: "RunEnded", session_id: S, run_id: R, outcome: "Completed" },
      ],
      r,
    )
    expect(out).toContain("◐ Agent: Count workspace files · general-purpose · Running\n")
    expect(out).not.toContain("· Bash\n")
    expect(out).toContain("│ ◐ Agent: Nested")
    expect(out).toContain("│ │ ⏺ Bash $ ls\n")
    expect(out).toContain(
      "☑ Agent: Count workspace files · general-purpose · Completed · 1 tool use · 1.2k tokens\n",
    )
    expect(out).toContain("  There are 3 files.\n")
    expect(out).toMatch(/Tasks\n {2}└─ ☑ Agent: Count workspace files[^\n]*\n {5}└─ ◐ Agent: Nested/)
    expect(r.tasks().map((t) => t.id)).toEqual(["toolu_agent", "child"])
  })

  it("nests workflow agents under their workflow, with phases", () => {
    const r = plain()
    const wf = task({
      id: "toolu_wf",
      title: "Review the repo",
      name: undefined,
      workflow: {
        phases: [
          { index: 0, title: "Scan" },
          { index: 1, title: "Report" },
        ],
      },
    })
    const out = play(
      [
        { type: "RunStarted", session_id: S, run_id: R },
        { type: "Task", session_id: S, task: wf },
        {
          type: "Task",
          session_id: S,
          task: task({
            id: "toolu_wf/0",
            parent_task_id: "toolu_wf",
            title: "scan src",
            name: undefined,
            phase: "Scan",
          }),
        },
        {
          type: "Task",
          session_id: S,
          task: task({
            id: "toolu_wf/1",
            parent_task_id: "toolu_wf",
            title: "write report",
            name: undefined,
            status: "Waiting",
            phase: "Report",
          }),
        },
        { type: "RunEnded", session_id: S, run_id: R, outcome: "Completed" },
      ],
      r,
    )
    expect(out).toContain("◐ Workflow: Review the repo · Running\n  phases: Scan → Report\n")
    expect(out).toMatch(
      /Tasks\n {2}└─ ◐ Workflow: Review the repo[^\n]*\n {5}├─ ◐ Agent: scan src · \[Scan\] · Running\n {5}└─ ⏸ Agent: write report · \[Report\] · Waiting\n/,
    )
  })

  it("asks for approval with the three answers", () => {
    const out = play([
      {
        type: "ApprovalRequested",
        session_id: S,
        approval_id: "ap1",
        tool_name: "Bash",
        title: "rm -rf build",
        input: { command: "rm -rf build" },
        description: "Remove the build folder",
      },
    ])
    expect(out).toBe(
      "? Allow Bash: rm -rf build\n  Remove the build folder\n  a allow · d [reason] deny · A always (until this session ends)\n",
    )
  })

  it("numbers a question's options", () => {
    const out = play([
      {
        type: "QuestionAsked",
        session_id: S,
        question_id: "q1",
        questions: [
          {
            question: "Which color?",
            header: "Color",
            multi_select: false,
            options: [{ label: "Blue", description: "calm" }, { label: "Red" }],
          },
        ],
      },
    ])
    expect(out).toBe(
      "? Color: Which color?\n  1. Blue — calm\n  2. Red\n  a number, or type your own answer\n",
    )
  })
})

describe("the end of a run", () => {
  it("reports outcome, tokens, context window and rate limits", () => {
    const out = play([
      {
        type: "UsageLimits",
        session_id: S,
        limits: {
          windows: [{ id: "five_hour", label: "5-hour", used: 0.42, resets_at: "2026-01-01T13:30:00Z" }],
          reset_credits: [],
          updated_at: "2026-01-01T12:00:00Z",
        },
      },
      {
        type: "RunEnded",
        session_id: S,
        run_id: R,
        outcome: "Completed",
        usage: {
          input_tokens: 1234,
          output_tokens: 56,
          thinking_tokens: 18,
          context_window: 1_000_000,
          context_used: 12_345,
          duration_ms: 3200,
          num_turns: 2,
          cost_usd: 0.0012,
        },
      },
    ])
    expect(out).toContain(
      "── Completed · 3.2s · 2 turns · 1.2k in / 56 out (18 thinking) · context 12k/1M (1%)\n",
    )
    expect(out).toMatch(/rate limits: 5-hour 42% \(resets \d\d:\d\d\)\n/)
  })

  it("shows each run's own cost, though the CLI reports the session's running total", () => {
    const r = makeRenderer({ color: false, costBefore: 0 })
    const end = (run_id: string, cost_usd: number) =>
      r.event({
        type: "RunEnded",
        session_id: S,
        run_id,
        outcome: "Completed",
        usage: { input_tokens: 10, output_tokens: 5, cost_usd },
      })
    expect(end("r1", 0.184)).toContain("· $0.1840\n")
    // The second run cost 0.02; the CLI says 0.204 (the session so far).
    expect(end("r2", 0.204)).toContain("· $0.0200\n")
    expect(r.sessionCost()).toBe(0.204)
    // A resumed session's first total includes runs this chat never saw: no cost rather than a wrong one.
    const resumed = makeRenderer({ color: false })
    expect(
      resumed.event({
        type: "RunEnded",
        session_id: S,
        run_id: "r",
        outcome: "Completed",
        usage: { input_tokens: 1, output_tokens: 1, cost_usd: 1.5 },
      }),
    ).not.toContain("$")
  })

  it("says an API error once, and what became of the prompt with the run's end", () => {
    // As 2.1.282 sends a rejected request (testdata/cli-2.1.282/rate_limit): the error as text, then as the result.
    const error = "API Error: Request rejected (429) · Number of request tokens has exceeded your rate limit."
    const out = play([
      { type: "RunStarted", session_id: S, run_id: R },
      { type: "TextDelta", session_id: S, run_id: R, item_id: "m:0", text: error },
      {
        type: "input_delivery",
        session_id: S,
        run_id: R,
        input_uuid: "u1",
        state: "not_picked_up",
        reason: "the turn ended before the model worked on it",
      },
      { type: "RunEnded", session_id: S, run_id: R, outcome: "Failed", error },
    ])
    expect(out.split(error)).toHaveLength(2)
    expect(out).not.toContain("input not picked up")
    expect(out).toBe(`${error}\n── Failed\n   the model never took up your prompt: nothing of it ran\n`)
  })

  it("in a one-shot run, offers no /expand (nothing can be typed after it) and no skills count", () => {
    const r = makeRenderer({ color: false, outputLines: 2, oneShot: true })
    const out = [
      r.event({ type: "Skills", session_id: S, skills: [{ name: "review", source: "user" }] }),
      r.event({
        type: "ToolCallFinished",
        session_id: S,
        call: bash({ status: "Completed", exit_code: 0, output_text: "1\n2\n3\n4" }),
      }),
    ].join("")
    expect(out).toBe("  ⎿ ✓ Completed · exit 0\n    1\n    2\n    … 2 more lines\n")
  })

  it("says nothing of limits when none were reported, and shows a failure's error", () => {
    const out = play([
      {
        type: "RunEnded",
        session_id: S,
        run_id: R,
        outcome: "Failed",
        error: "The CLI exited (code 1)\nmore",
      },
    ])
    expect(out).toBe("── Failed\n   The CLI exited (code 1)\n")
  })

  it("leaves out the context of a run that never reached the model", () => {
    const out = play([
      {
        type: "RunEnded",
        session_id: S,
        run_id: R,
        outcome: "Failed",
        usage: { input_tokens: 0, output_tokens: 0, context_used: 0, context_window: 1_000_000 },
      },
    ])
    expect(out).not.toContain("context")
  })

  it("closes an open text line before the summary", () => {
    const out = play([
      { type: "TextDelta", session_id: S, item_id: "m:0", text: "done" },
      { type: "RunEnded", session_id: S, run_id: R, outcome: "Cancelled" },
    ])
    expect(out.startsWith("done\n── Cancelled\n")).toBe(true)
  })
})

describe("notices and stored transcripts", () => {
  it("marks notices by level", () => {
    const out = play([
      { type: "Notice", session_id: S, level: "warning", text: "restarted" },
      { type: "Notice", session_id: S, level: "error", text: "broken" },
      { type: "Compacted", session_id: S, summary: "Short summary" },
      { type: "usage_blocked", session_id: S, run_id: R, message: "limit hit", window: "five_hour" },
    ])
    expect(out).toContain("! restarted\n")
    expect(out).toContain("✗ broken\n")
    expect(out).toContain("⟳ Context compacted\n  Short summary\n")
    expect(out).toContain("✗ Usage limit reached (five_hour): limit hit\n")
  })

  it("lays out read_session items like live events, tasks nested: the task opens, its work, its end", () => {
    const out = plain().transcript([
      { type: "user", id: "u1", text: "Count the files" },
      { type: "reasoning", id: "r1", text: "Delegate." },
      { type: "assistant", id: "a1", text: "I'll delegate." },
      {
        type: "tool_call",
        id: "t1",
        call: { ...bash({ status: "Completed", exit_code: 0, output_text: "ok" }) },
      },
      {
        type: "task",
        id: "k1",
        task: task({ status: "Completed", summary: "3 files" }),
        items: [{ type: "assistant", id: "a2", text: "There are 3 files." }],
      },
      {
        type: "tool_call",
        id: "q1",
        call: {
          id: "q1",
          name: "AskUserQuestion",
          kind: "other",
          title: "Which?",
          input: {},
          status: "Completed",
          output_text: 'User has answered your questions: "Which greeting?"="Bonjour". You can now continue.',
        },
      },
      { type: "plan", id: "p1", entries: [{ content: "Done", status: "completed" }] },
      { type: "notice", id: "n1", level: "info", text: "Stopped." },
    ])
    expect(out).toBe(
      [
        "› Count the files",
        "✻ Thinking…",
        "  Delegate.",
        "I'll delegate.",
        "⏺ Bash $ touch a.txt && echo ok",
        "  ⎿ ✓ Completed · exit 0",
        "    ok",
        "◐ Agent: Count workspace files · general-purpose · Running",
        "│ There are 3 files.",
        "☑ Agent: Count workspace files · general-purpose · Completed",
        "  3 files",
        "⏺ AskUserQuestion Which?",
        "  ⎿ answered: Bonjour",
        "Plan",
        "  ☑ Done",
        "i Stopped.",
        "",
      ].join("\n"),
    )
  })

  it("formats numbers compactly", () => {
    expect([
      compactNumber(999),
      compactNumber(1234),
      compactNumber(12_345),
      compactNumber(1_000_000),
    ]).toEqual(["999", "1.2k", "12k", "1M"])
  })
})

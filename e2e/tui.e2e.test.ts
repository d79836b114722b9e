/**
 * `npm start` end to end: the front end in a real pseudo-terminal (tmux)
 * driving the plugin in host/ and the real CLI against the demo's scripted
 * model, walked the way a person uses it for a day: a markdown answer
 * rendered, the status line at the bottom throughout, an approval (once, then
 * "always"), a question, the diff, the plan and the subagent's task; a long
 * output cut short and expanded; a user skill invoked by its slash command;
 * an account added and used; a steer typed during a run shown once, then
 * Ctrl-C cancels the run and the prompt comes back. Ctrl-C twice at an idle
 * prompt (at 40 columns, no stale spinner lines) quits. The one-shot form
 * exits 0; piped lines run to the end in order; a closed stdout and a Ctrl-C
 * during start-up leave no demo folder. `UPDATE_SCREEN=1` writes the captured
 * screen to docs/screen.txt and README's excerpt of it.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Effect } from "effect"
import stringWidth from "string-width"
import { storageFile } from "../host/broker/broker.ts"
import { openJsonStorage } from "../host/broker/storage.ts"
import { DEMO_SKILL, LONG_COMMAND, SLOW_COMMAND } from "../testkit/demo.ts"
import { startModelServer, text } from "../testkit/model-server.ts"

const repoRoot = join(import.meta.dirname, "..")
/**
 * What `npm start` runs, without npm in front: the launcher, which finds the
 * bundle (dist/tui/, built once in beforeAll) fresh and runs it in its own
 * process, as the front end of a checkout ("npm start --" in its hints).
 */
const launcher = ["scripts/build-tui.mjs", "--start"]
const cli = `${process.execPath} ${launcher.join(" ")}`
const socket = `cvg-tui-e2e-${process.pid}`
const SESSION = "demo"
/** A second front end, for Ctrl-C with no run open. */
const IDLE_SESSION = "idle"

const hasTmux = spawnSync("tmux", ["-V"]).status === 0
/** The walk's width; the idle session narrows to NARROW after its start. */
const WIDE = 120
const NARROW = 40
/** The front end's own data (prompt history) goes here, not into the real HOME. */
const xdg = mkdtempSync(join(tmpdir(), "cvg-tui-xdg-"))

const tmux = (...args: string[]): string =>
  execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/** `npm start --demo` in a detached tmux pane; the pane prints the exit code and lingers for reading. */
const startDemoPane = (session: string, width: number): void => {
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    String(width),
    "-y",
    "50",
    "-c",
    repoRoot,
    `TERM=xterm-256color XDG_DATA_HOME=${xdg} ${cli} --demo; echo "EXITED $?"; sleep 60`,
    // tmux copies a screen cleared from its top row into the scrollback (a terminal
    // does not): the input line redrawn there at start would be read as left behind.
    ";",
    "set-option",
    "-w",
    "-t",
    session,
    "scroll-on-clear",
    "off",
  )
}

/** The visible pane only: what the person sees now (the status and input lines at its bottom). */
const visible = (session = SESSION): string[] =>
  tmux("capture-pane", "-p", "-t", session)
    .split("\n")
    .filter((l) => l.trim() !== "")

/** The status line is the line above the input line, at the bottom of the pane. */
const expectStatusLine = (session = SESSION, account = "claude:demo") => {
  const rows = visible(session)
  expect(rows.at(-2), rows.join("\n")).toMatch(
    new RegExp(`supervised · ${account}.* · /tmp/cvg-demo-\\w+/workspace`),
  )
}

/** The folder the banner names (the demo's temporary root). */
const demoRootOf = (text: string): string | undefined =>
  /workspace (\/tmp\/cvg-demo-\w+)\/workspace/.exec(text)?.[1]

/** Run `npm start` with a shell line around it; resolves with its exit code and output. */
const runShell = (line: string, timeoutMs = 120_000) =>
  new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn("bash", ["-c", line], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, XDG_DATA_HOME: xdg, NO_COLOR: "1" },
    })
    let out = ""
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8")
    })
    child.stderr.on("data", (c: Buffer) => {
      out += c.toString("utf8")
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      resolve({ code, out })
    })
  })

/** The whole screen, scrollback included, wrapped lines joined. */
const screen = (session = SESSION): string => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session)

/**
 * No word broken across lines: the terminal wrapped nothing (every line of
 * the joined capture fits the width, but for one lone word wider than it),
 * and the demo's sentences have every word whole (the front end breaks only
 * between words).
 */
const expectWholeWords = (text: string, width: number, sentences: ReadonlyArray<string>) => {
  const lines = text.split("\n")
  const over = lines.filter((l) => stringWidth(l) > width && !/^\S+$/.test(l.trim()))
  expect(over, `lines wider than ${width} columns`).toEqual([])
  const tokens = new Set(lines.flatMap((l) => l.trim().split(/\s+/)))
  for (const sentence of sentences)
    expect(
      sentence.split(/\s+/).filter((w) => !tokens.has(w)),
      `words of "${sentence.slice(0, 30)}…" broken`,
    ).toEqual([])
}

/** Sentences of the demo's answers, as the model streams them. */
const DEMO_SENTENCES = [
  "Hello! I am the scripted demo model: every answer here comes from testkit/demo.ts, not from Claude. Let me show you what a session looks like. First, a plan.",
  "Now a shell command. It changes the workspace, so it asks for your approval.",
]

const waitForScreen = async (
  match: RegExp | string,
  timeoutMs = 60_000,
  session = SESSION,
): Promise<string> => {
  const until = Date.now() + timeoutMs
  for (;;) {
    const text = screen(session)
    if (typeof match === "string" ? text.includes(match) : match.test(text)) return text
    if (Date.now() > until)
      throw new Error(`the screen never showed ${String(match)} within ${timeoutMs} ms; it shows:\n${text}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

const type = (text: string) => {
  tmux("send-keys", "-t", SESSION, "-l", text)
  tmux("send-keys", "-t", SESSION, "Enter")
}

/** Any process whose command line names this demo workspace (the CLI gets it as --add-dir). */
const processesFor = (workspace: string): string[] =>
  spawnSync("pgrep", ["-f", workspace], { encoding: "utf8" })
    .stdout.split("\n")
    .filter((l) => l.trim() !== "")

/** The screen as docs/screen.txt shows it: temp paths and the port made stable. */
const forDocs = (text: string): string =>
  text
    .replace(/\/tmp\/cvg-demo-[A-Za-z0-9]+/g, "/tmp/cvg-demo-XXXXXX")
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT")
    .replace(/ · \d+(\.\d+)?(ms|s)\b/g, "")
    .replace(/\d{2}\/\d{2}\/\d{4}, \d{2}:\d{2}/g, "DD/MM/YYYY, HH:MM")
    .replace(/\s+$/, "\n")

/** Where an excerpt of `text` starts and ends (inclusive): the README shows these sections of the walk. */
const EXCERPT: ReadonlyArray<readonly [RegExp, RegExp]> = [
  [/^DEMO — /, /^DEMO — /],
  [/^› Show me around/, /^ {2}☐ Ask you a question/],
  [/^⏺ Bash \$ mkdir/, /^ {4}made by the demo/],
  [/^⏺ Edit /, /^ {4}5 {2}greet\(\)/],
  [/^◐ Agent: Check hello\.py/, /^◐ Agent: Check hello\.py/],
  [/^│ ⏺ Read /, /^│ ⏺ Read /],
  [/^☑ Agent: Check hello\.py/, /^☑ Agent: Check hello\.py/],
  [/^\? Greeting:/, /^ {2}⎿ answered:/],
  [/^── Completed · \d+ turns/, /^── Completed · \d+ turns/],
  [/^› something long/, /^ {4}1$/],
  [/more lines · \/expand/, /^› \/expand/],
  [/^› \/demo-summary/, /^The skill demo-summary ran/],
]

/** The README's excerpt of the captured walk, between its two markers. */
const readmeExcerpt = (text: string): string => {
  const lines = text.replace(/\n$/, "").split("\n")
  const out: string[] = []
  let from = 0
  for (const [start, end] of EXCERPT) {
    const a = lines.findIndex((l, i) => i >= from && start.test(l))
    if (a < 0) throw new Error(`the walk has no line matching ${start}`)
    const b = lines.findIndex((l, i) => i >= a && end.test(l))
    out.push(...lines.slice(a, b + 1))
    from = b + 1
  }
  out.push(...lines.slice(-2))
  return out.join("\n")
}

const updateReadme = (capture: string): void => {
  const file = join(repoRoot, "README.md")
  const readme = readFileSync(file, "utf8")
  const updated = readme.replace(
    /(<!-- screen excerpt: start -->\n```\n)[\s\S]*?(\n```\n<!-- screen excerpt: end -->)/,
    (_m, open: string, close: string) => `${open}${readmeExcerpt(capture)}${close}`,
  )
  if (updated === readme && !readme.includes("<!-- screen excerpt: start -->"))
    throw new Error("README.md has no screen excerpt markers")
  writeFileSync(file, updated)
}

describe("npm start in a terminal (demo)", () => {
  beforeAll(() => {
    if (!hasTmux) throw new Error("tmux is needed for this test: apt-get install -y tmux")
    // The bundle npm start runs, built once here (the runs below find it fresh).
    execFileSync(process.execPath, ["scripts/build-tui.mjs", "--if-stale"], {
      cwd: repoRoot,
      stdio: "ignore",
    })
    startDemoPane(SESSION, WIDE)
    tmux("set-option", "-t", SESSION, "history-limit", "5000")
  })
  afterAll(() => {
    if (hasTmux) spawnSync("tmux", ["-L", socket, "kill-server"])
    rmSync(xdg, { recursive: true, force: true })
  })

  it("walks a day: markdown, status line, approvals, diff, plan, subagent, question, /expand, a skill, an account, a steer, Ctrl-C; /quit exits 0", async () => {
    // The input line is up before the host behind it: a prompt typed now runs once the session is ready.
    const early = await waitForScreen(/^› $/m, 60_000)
    type("Show me around")
    expect(early).not.toContain("workspace /tmp")
    const start = await waitForScreen(/DEMO — the model is scripted[\s\S]*› Show me around/, 90_000)
    expect(start).toMatch(/the demo installed and enabled convergence\/claude \(this repository's plugin\)/)
    // Defect 13: the hint names a CLI that exists here (the pinned one, through npx).
    expect(start).toContain("Sign in with `npx claude auth login`")
    const workspace = /workspace (\/\S+)/.exec(start)?.[1]
    expect(workspace).toBeDefined()
    await waitForScreen("allow Bash? a/d")
    // While the run waits, the status line stays above the input line.
    expectStatusLine()
    type("a")
    await waitForScreen("allow Write? a/d/A")
    type("A")
    await waitForScreen(/Greeting number\/text › $/m)
    type("2")
    const done = await waitForScreen(/^Tasks\n.*Agent: Check hello\.py/m)

    // The approval answered once: the command ran and printed.
    expect(done).toMatch(/allow Bash\? a\/d › a\n {2}⎿ ✓ Completed · exit 0\n {4}made by the demo/)
    // "Always" for Write: the Edit that follows asks nothing.
    expect(done).not.toContain("allow Edit?")
    // The diff of the edit, and the written file as added lines.
    expect(done).toContain('  -print("Hello")\n  +print("Hello, world")')
    expect(done).toContain("  +def greet():")
    // The plan as a checklist, first and last state.
    expect(done).toMatch(/Plan\n {2}◐ Running a shell command\n {2}☐ Write and edit a file/)
    expect(done).toMatch(/Plan\n(\s+☑ .*\n){3}\s+☑ Ask you a question/)
    // The subagent: its task, its own tool call nested, its end, the tree at the run's end.
    expect(done).toMatch(/◐ Agent: Check hello\.py · general-purpose · Running/)
    expect(done).toMatch(/│ ⏺ Read \S+hello\.py/)
    expect(done).toMatch(/☑ Agent: Check hello\.py · general-purpose · claude-[\w-]+ · Completed/)
    expect(done).toMatch(/Tasks\n {2}└─ ☑ Agent: Check hello\.py/)
    // The question, answered by number.
    expect(done).toContain("  2. Bonjour — French")
    expect(done).toContain("You picked “Bonjour”")
    // Thinking, and the run's summary with the context window; no empty limits line (an API key has none).
    expect(done).toContain("✻ Thinking…")
    expect(done).toMatch(/── Completed · .* · context [\d.]+k\/1M \(\d+%\)/)
    expect(done).not.toContain("rate limits: none reported")
    // Markdown rendered: the model's **bold** and `code` arrive without their marks.
    expect(done).toContain(
      "Hello! I am the scripted demo model: every answer here comes from testkit/demo.ts,",
    )
    expect(done).not.toContain("**scripted demo model**")
    // Defect 15: one tool use is one, and a reopened question's answer is shown.
    expect(done).toMatch(/Completed · 1 tool use · /)
    expect(done).toContain("  ⎿ answered: Bonjour")
    // Word-wrapped at 120 columns: no word broken across lines.
    expectWholeWords(done, WIDE, DEMO_SENTENCES)
    // Nothing of the spinner or the status line is left in the scrollback.
    expect(done).not.toMatch(/Working…|Starting…/)
    const scrollback = done.replace(/\s+$/, "").split("\n").slice(0, -2)
    expect(scrollback.filter((l) => /supervised · claude:demo/.test(l))).toEqual([])

    await waitForScreen(/^› $/m)
    type("/sessions")
    await waitForScreen(/1\. Show me around \(this one\)/)
    type("/tasks")
    await waitForScreen(/› \/tasks\nTasks\n {2}└─ ☑ Agent: Check hello\.py/)

    // A long output is cut short with a way to open it; /expand shows every line.
    type("something long please")
    const long = await waitForScreen(/… 22 more lines · \/expand (\d+)/)
    expect(long).toContain(`⏺ Bash $ ${LONG_COMMAND}`)
    const fold = /… 22 more lines · \/expand (\d+)/.exec(long)?.[1]
    await waitForScreen(/── Completed[^\n]*\n(.*\n)*?› $/m)
    type(`/expand ${fold}`)
    const expanded = await waitForScreen(`── end of ${fold}`)
    expect(expanded.slice(expanded.lastIndexOf(`── /expand ${fold}`))).toMatch(
      /^── \/expand \d+\n1\n2\n(.*\n)*29\n30\n── end of/m,
    )

    // A skill of the user's runs by its slash command; its markdown table is laid out.
    type(`/${DEMO_SKILL}`)
    const skill = await waitForScreen("The skill demo-summary ran")
    expect(skill).toContain(`↳ /${DEMO_SKILL} goes to the agent (a user skill)`)
    expect(skill).toMatch(/│ File +│ What it is +│/)
    expect(skill).not.toContain("|---|")
    await waitForScreen(/── Completed[^\n]*\n(.*\n)*?› $/m)

    if (process.env.UPDATE_SCREEN) {
      const capture = forDocs(screen())
      writeFileSync(join(repoRoot, "docs", "screen.txt"), capture)
      updateReadme(capture)
    }

    // An account added from the chat (a proxy account: key and base URL) and used.
    const url = /on (http:\/\/127\.0\.0\.1:\d+)\)/.exec(start)?.[1]
    type(`/account add second --name Second --api-key sk-ant-second-demo --base-url ${url}`)
    await waitForScreen("added claude:second; /account second switches to it", 60_000)
    type("/account")
    await waitForScreen(/claude:second Second · Ready · .*key …demo · http:\/\/127/)
    type("/account second")
    await waitForScreen("switched to claude:second", 60_000)
    type("hello from the second account")
    await waitForScreen(/› hello from the second account\n(.*\n)*?── Completed/)
    expectStatusLine(SESSION, "claude:second")

    // Forked, rewound and resumed: the model is sent the branch the chat is on.
    const turn = async (text: string) => {
      const before = screen().split("── Completed").length
      type(text)
      const until = Date.now() + 60_000
      while (screen().split("── Completed").length === before) {
        if (Date.now() > until) throw new Error(`no end for "${text}":\n${screen()}`)
        await new Promise((r) => setTimeout(r, 200))
      }
    }
    const heard = () => [...screen().matchAll(/^You said: (.*)$/gm)].at(-1)?.[1]
    await turn("alpha")
    type("/fork")
    await waitForScreen(/⑂ Forked \S+ \(2 prompts\) into \S+; you are in the fork/, 60_000)
    await turn("what did I say")
    expect(heard()).toBe("hello from the second account · alpha")
    await turn("beta")
    type("/rewind 2")
    await waitForScreen("⟲ Rewound to just before “beta”", 60_000)
    await turn("gamma")
    await turn("what did I say")
    expect(heard()).toBe("hello from the second account · alpha · what did I say · gamma")
    // This list, not the one before: a match on the earlier list (before this `/sessions` is echoed)
    // would type `/resume` at once, and the two lines would reach the chat in one read, as a paste
    // (CI flake, 2026-12-02). So: a new `› /sessions` echo, then its list to its last line.
    const echoes = () => screen().split("› /sessions\n").length
    const listsBefore = echoes()
    type("/sessions")
    const until = Date.now() + 60_000
    let tail = ""
    for (;;) {
      const text = screen()
      tail = text.slice(text.lastIndexOf("› /sessions\n"))
      if (echoes() > listsBefore && tail.includes("/resume <n> continues it")) break
      if (Date.now() > until) throw new Error(`no new /sessions list:\n${text}`)
      await new Promise((r) => setTimeout(r, 200))
    }
    const mine = /^ {2}(\d+)\. .*\(this one\)/m.exec(tail)?.[1]
    expect(mine).toBeDefined()
    type(`/resume ${mine}`)
    await waitForScreen(/── resumed: type to continue\n(.*\n)*?› $/m, 60_000)
    await turn("what did I say")
    expect(heard()).toBe("hello from the second account · alpha · what did I say · gamma · what did I say")

    // Ctrl-C cancels a run mid-step: the demo answers "slow" with a 30 s Bash
    // call that runs without asking. A steer typed meanwhile is shown once.
    type("slow down please")
    await waitForScreen(`⏺ Bash $ ${SLOW_COMMAND}`)
    tmux("send-keys", "-t", SESSION, "-l", "and one more thing")
    await waitForScreen(/running · type to steer › and one more thing$/m)
    tmux("send-keys", "-t", SESSION, "Enter")
    // Item 3: said as it is (sent, waiting for the model), never "steering" and then a turn unexplained.
    await waitForScreen("↳ sent to the running turn; waiting for the model to take it up")
    const cancelAt = Date.now()
    tmux("send-keys", "-t", SESSION, "C-c")
    const cancelledScreen = await waitForScreen(/── Cancelled/, 12_000)
    const cancelled = cancelledScreen.slice(cancelledScreen.lastIndexOf("› slow down please"))
    expect(Date.now() - cancelAt).toBeLessThan(12_000)
    expect(
      cancelled.split("\n").filter((l) => l.startsWith("›") && l.includes("and one more thing")),
    ).toEqual(["› and one more thing"])
    expect(cancelled).not.toContain("allow Bash?")
    expect(cancelled).toContain("⊘ Cancelling the run… (Ctrl-C again to quit)")
    expect(cancelled).toMatch(/ {2}⎿ ⊘ Cancelled\n/)
    // The CLI may answer the steer in a turn of its own after the cancel: that
    // turn names the steer, ends like any other, and the prompt comes back
    // (it used to stay "Working…" for good).
    await new Promise((r) => setTimeout(r, 3_000))
    expect(screen()).not.toContain("↻ the agent started a turn by itself")
    if (screen().includes("↻ a new turn for “and one more thing”")) {
      const settled = await waitForScreen(
        /↻ a new turn for “and one more thing”[\s\S]*── (Completed|Failed|Cancelled)/,
        20_000,
      )
      expect(settled.slice(settled.lastIndexOf("↻ a new turn for"))).toMatch(
        /── (Completed|Failed|Cancelled)/,
      )
    }

    type("/quit")
    await waitForScreen("EXITED 0", 30_000)
    // No CLI of this demo outlives the front end.
    expect(processesFor(workspace!)).toEqual([])
  }, 240_000)

  it("narrowed to 40 columns wraps words and leaves no status or spinner lines behind; Ctrl-C twice with no run open quits with exit 0", async () => {
    startDemoPane(IDLE_SESSION, WIDE)
    const start = await waitForScreen(/skills: \d+[\s\S]*^› $/m, 90_000, IDLE_SESSION)
    const workspace = /workspace (\/\S+)/.exec(start)?.[1]
    // The status line drawn at 120 columns spans three rows at 40: none of it stays behind.
    tmux("resize-window", "-t", IDLE_SESSION, "-x", String(NARROW))
    tmux("send-keys", "-t", IDLE_SESSION, "-l", "Show me around")
    tmux("send-keys", "-t", IDLE_SESSION, "Enter")
    await waitForScreen("allow Bash? a/d", 60_000, IDLE_SESSION)
    // The spinner ran while the model answered; the scrollback has none of it.
    const narrow = screen(IDLE_SESSION)
    const scrollback = narrow.replace(/\s+$/, "").split("\n").slice(0, -2)
    expect(scrollback.join("\n")).not.toMatch(/Working…|Waiting for the model/)
    expect(scrollback.filter((l) => /supervised · claude:demo|default model ·/.test(l))).toEqual([])
    expectWholeWords(narrow.slice(narrow.indexOf("› Show me around")), NARROW, DEMO_SENTENCES)
    // The status line keeps the context and the workspace's name when it narrows.
    expect(visible(IDLE_SESSION).at(-2)).toMatch(/workspace$/)
    tmux("send-keys", "-t", IDLE_SESSION, "C-c")
    await waitForScreen(/── Cancelled[^\n]*\n(.*\n)*?› $/m, 20_000, IDLE_SESSION)
    // Past the window in which a second Ctrl-C quits.
    await new Promise((r) => setTimeout(r, 3500))
    tmux("send-keys", "-t", IDLE_SESSION, "C-c")
    await waitForScreen("(Ctrl-C again, or /quit, to leave)", 10_000, IDLE_SESSION)
    tmux("send-keys", "-t", IDLE_SESSION, "C-c")
    await waitForScreen("EXITED 0", 30_000, IDLE_SESSION)
    expect(processesFor(workspace!)).toEqual([])
  }, 120_000)

  it('`npm start -- "<prompt>"` in demo mode runs to the end and exits 0', async () => {
    const child = spawn(process.execPath, [...launcher, "--demo", "Show me around"], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, NO_COLOR: "1" },
    })
    let out = ""
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    child.stderr.on("data", (chunk: Buffer) => {
      out += chunk.toString("utf8")
    })
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    expect(code, out).toBe(0)
    expect(out).toContain("→ allowed (demo)")
    expect(out).toContain("→ answered: Hello, world (demo)")
    expect(out).toMatch(/── Completed/)
    // Nothing offered that a finished one-shot run cannot take: no skills count, no /expand.
    expect(out).not.toContain("skills:")
    expect(out).not.toContain("/expand")
  }, 180_000)

  it("piped lines run to the end, one after another, and the pipe's end waits for them", async () => {
    const { code, out } = await runShell(`printf 'hello\\n/model\\n/quit\\n' | ${cli} --demo`)
    expect(code, out).toBe(0)
    // The prompt ran to its end before /model was read, and /model before /quit.
    const ran = out.indexOf("── Completed")
    const listed = out.indexOf("› /model")
    expect(ran, out).toBeGreaterThan(0)
    expect(listed).toBeGreaterThan(ran)
    expect(out.indexOf("/model <value> chooses")).toBeGreaterThan(listed)
    expect(out.indexOf("› /quit")).toBeGreaterThan(listed)
  }, 180_000)

  it("a real account: npm start enables the repository's plugin, remembers /effort, and says how to resume the chat", async () => {
    // A stored account whose key and base URL point at a scripted model (as a proxy account's would).
    const model = await startModelServer({
      main: [],
      // The CLI puts its context reminders before the typed text: the answer echoes the last line.
      exhausted: (_conversation, req) => [text(`You said: ${req.lastUserText().trim().split("\n").at(-1)}`)],
    })
    const data = mkdtempSync(join(tmpdir(), "cvg-tui-real-"))
    const home = mkdtempSync(join(tmpdir(), "cvg-tui-home-"))
    try {
      const storage = await openJsonStorage(storageFile(data, "convergence/claude"))
      await Effect.runPromise(
        storage.set("instances", [
          {
            id: "proxy",
            name: "Proxy",
            env: { ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: "sk-ant-e2e" },
          },
        ]),
      )
      await storage.flush()
      const run = (input: string, extra = "") =>
        runShell(
          `printf '${input}' | HOME=${home} CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 ${cli} --account proxy --data ${data} ${extra}`,
        )
      const first = await run("hello\\n/effort high\\n")
      expect(first.code, first.out).toBe(0)
      expect(first.out).toContain("npm start installed and enabled convergence/claude from this repository")
      expect(first.out).toContain("You said: hello")
      expect(first.out).toContain("Effort: high")
      const id = /to continue this chat: npm start -- --resume (\S+)/.exec(first.out)?.[1]
      expect(id, first.out).toBeDefined()
      // The next start: the chat continues where it was, with the effort chosen last time.
      const next = await run("/effort\\n", `--resume ${id}`)
      expect(next.code, next.out).toBe(0)
      expect(next.out).not.toContain("installed and enabled")
      expect(next.out).toContain("› hello")
      expect(next.out).toContain("── resumed: type to continue")
      expect(next.out).toMatch(/● high/)
    } finally {
      await model.close()
      rmSync(data, { recursive: true, force: true })
      rmSync(home, { recursive: true, force: true })
    }
  }, 240_000)

  it("says why --data does not go with --demo, and refuses an --effort the agent has not", async () => {
    const data = await runShell(`${cli} --demo --data /tmp/nowhere`)
    expect(data.code).toBe(1)
    expect(data.out).toContain("--data is not used by the demo")
    const effort = await runShell(`${cli} --demo --effort turbo "hi"`)
    expect(effort.code, effort.out).toBe(1)
    expect(effort.out).toMatch(/✗ unknown effort turbo; one of: low, medium, high/)
    expect(effort.out).not.toContain("› hi")
  }, 120_000)

  it("a reader that stops early, and a Ctrl-C while Claude Code is checked, leave no demo folder", async () => {
    const head = await runShell(`${cli} --demo "hi" | head -3; exit \${PIPESTATUS[0]}`)
    const headRoot = demoRootOf(head.out)
    expect(headRoot, head.out).toBeDefined()
    expect(head.code).toBe(141)
    expect(existsSync(headRoot!)).toBe(false)

    const child = spawn(process.execPath, [...launcher, "--demo"], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, XDG_DATA_HOME: xdg, NO_COLOR: "1" },
    })
    let out = ""
    const banner = new Promise<void>((resolve) =>
      child.stdout.on("data", (c: Buffer) => {
        out += c.toString("utf8")
        if (out.includes("workspace ")) resolve()
      }),
    )
    await banner
    child.kill("SIGINT")
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve))
    expect(code, out).toBe(130)
    expect(existsSync(demoRootOf(out)!)).toBe(false)
  }, 180_000)
})

/**
 * `npm start` end to end: the front end in a real pseudo-terminal (tmux)
 * driving the plugin in host/ and the real CLI against the demo's scripted
 * model. Answers an approval (once, then "always"), a question, and checks the
 * screen for the diff, the plan and the subagent's task, then cancels a slow
 * Bash call with Ctrl-C and gets the prompt back. Ctrl-C twice at an idle
 * prompt quits. Then the one-shot
 * form exits 0. `UPDATE_SCREEN=1` writes the captured screen to
 * docs/screen.txt.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SLOW_COMMAND } from "../testkit/demo.ts"

const repoRoot = join(import.meta.dirname, "..")
const tsx = join(repoRoot, "node_modules", ".bin", "tsx")
const socket = `cvg-tui-e2e-${process.pid}`
const SESSION = "demo"
/** A second front end, for Ctrl-C with no run open. */
const IDLE_SESSION = "idle"

const hasTmux = spawnSync("tmux", ["-V"]).status === 0

const tmux = (...args: string[]): string =>
  execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] })

/** `npm start --demo` in a detached 160x50 tmux pane; the pane prints the exit code and lingers for reading. */
const startDemoPane = (session: string): void => {
  tmux(
    "new-session",
    "-d",
    "-s",
    session,
    "-x",
    "160",
    "-y",
    "50",
    "-c",
    repoRoot,
    `TERM=xterm-256color ${tsx} host/cli.ts --demo; echo "EXITED $?"; sleep 60`,
  )
}

/** The whole screen, scrollback included, wrapped lines joined. */
const screen = (session = SESSION): string => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", session)

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

describe("npm start in a terminal (demo)", () => {
  beforeAll(() => {
    if (!hasTmux) throw new Error("tmux is needed for this test: apt-get install -y tmux")
    startDemoPane(SESSION)
    tmux("set-option", "-t", SESSION, "history-limit", "5000")
  })
  afterAll(() => {
    if (hasTmux) spawnSync("tmux", ["-L", socket, "kill-server"])
  })

  it("runs the demo: approval, diff, plan, subagent task, question, usage; Ctrl-C cancels a run; /quit exits 0", async () => {
    const start = await waitForScreen(/^› $/m, 90_000)
    expect(start).toContain("DEMO — the model is scripted")
    const workspace = /workspace (\/\S+)/.exec(start)?.[1]
    expect(workspace).toBeDefined()

    type("Show me around")
    await waitForScreen("allow Bash? a/d")
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
    // Thinking, and the run's summary with the context window and the limits line.
    expect(done).toContain("✻ Thinking…")
    expect(done).toMatch(/── Completed · .* · context [\d.]+k\/1M \(\d+%\)/)
    expect(done).toContain("rate limits: none reported")

    await waitForScreen(/^› $/m)
    type("/sessions")
    await waitForScreen(/1\. Show me around \(this one\)/)
    type("/tasks")
    await waitForScreen(/› \/tasks\nTasks\n {2}└─ ☑ Agent: Check hello\.py/)

    if (process.env.UPDATE_SCREEN) writeFileSync(join(repoRoot, "docs", "screen.txt"), forDocs(screen()))

    // Ctrl-C cancels a run mid-step: after its script the demo answers "slow"
    // with a 30 s Bash call that runs without asking.
    type("slow down please")
    await waitForScreen(`⏺ Bash $ ${SLOW_COMMAND}`)
    const cancelAt = Date.now()
    tmux("send-keys", "-t", SESSION, "C-c")
    const cancelledScreen = await waitForScreen(/── Cancelled[^\n]*\n(.*\n)*?› $/m, 12_000)
    const cancelled = cancelledScreen.slice(cancelledScreen.lastIndexOf("› slow down please"))
    expect(Date.now() - cancelAt).toBeLessThan(12_000)
    expect(cancelled).not.toContain("allow Bash?")
    expect(cancelled).toContain("⊘ Cancelling the run… (Ctrl-C again to quit)")
    expect(cancelled).toMatch(/ {2}⎿ ⊘ Cancelled\n/)
    expect(cancelled).not.toContain("The slow command finished")

    type("/quit")
    await waitForScreen("EXITED 0", 30_000)
    // No CLI of this demo outlives the front end.
    expect(processesFor(workspace!)).toEqual([])
  }, 240_000)

  it("Ctrl-C twice with no run open quits with exit 0", async () => {
    startDemoPane(IDLE_SESSION)
    const start = await waitForScreen(/^› $/m, 90_000, IDLE_SESSION)
    const workspace = /workspace (\/\S+)/.exec(start)?.[1]
    tmux("send-keys", "-t", IDLE_SESSION, "C-c")
    await waitForScreen("(Ctrl-C again, or /quit, to leave)", 10_000, IDLE_SESSION)
    tmux("send-keys", "-t", IDLE_SESSION, "C-c")
    await waitForScreen("EXITED 0", 30_000, IDLE_SESSION)
    expect(processesFor(workspace!)).toEqual([])
  }, 120_000)

  it('`npm start -- "<prompt>"` in demo mode runs to the end and exits 0', async () => {
    const child = spawn(tsx, ["host/cli.ts", "--demo", "Show me around"], {
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
  }, 180_000)
})

/**
 * Agent Trace for a Claude Code user with no host: the real CLI (2.1.332, or
 * the one CVG_TEST_CLI names) validates the plugin and the marketplace,
 * adds this repository as a marketplace and installs the plugin into a
 * temporary HOME, then one headless session against the scripted model
 * writes and edits files, has a subagent write one, and commits twice in one
 * Bash call, while the person adds lines of their own. The notes read back:
 * each record valid, the lines attributed per agent with hashes of the
 * committed text, the person's lines left out, and the plugin's own script
 * reports the range.
 */
import { spawn } from "node:child_process"
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { git } from "../host/testing/git-fixture.ts"
import { cliEnv, makeSandbox, type Sandbox } from "../testkit/cli.ts"
import { gate, type ModelServer, startModelServer, text, toolUse } from "../testkit/model-server.ts"
import { contentHash } from "../trace/attribute.ts"
import { checkRecord, type TraceRecord } from "../trace/schema.ts"
import { cliUnderTest, repoRoot } from "./harness.ts"

let sandbox: Sandbox | undefined
let server: ModelServer | undefined
afterEach(async () => {
  await server?.close()
  sandbox?.cleanup()
  server = undefined
  sandbox = undefined
})

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Run the CLI to its end without blocking this process (the scripted model answers from it). */
const claude = (s: Sandbox, env: Record<string, string>, args: string[], cwd: string, timeoutMs = 120_000) =>
  new Promise<Ran>((resolve) => {
    const child = spawn(join(s.bin, "claude"), args, { env, cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => {
      stdout += chunk
    })
    child.stderr.on("data", (chunk) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const notesOn = (repo: string, rev: string): TraceRecord[] =>
  git(repo, "notes", "--ref=agent-trace", "show", rev)
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceRecord)

/** Ranges per file and conversation url: `{ path: { url: [[start, end], …] } }`. */
const rangesOf = (record: TraceRecord) =>
  Object.fromEntries(
    record.files.map((file) => [
      file.path,
      Object.fromEntries(
        file.conversations.map((c) => [c.url, c.ranges.map((r) => [r.start_line, r.end_line])]),
      ),
    ]),
  )

/** Every range's hash matches the text its commit holds at those lines. */
const expectHashesMatch = (repo: string, record: TraceRecord) => {
  for (const file of record.files) {
    const lines = git(repo, "show", `${record.vcs?.revision}:${file.path}`).split("\n")
    for (const range of file.conversations.flatMap((c) => c.ranges))
      expect(range.content_hash, `${file.path}:${range.start_line}`).toBe(
        contentHash(lines.slice(range.start_line - 1, range.end_line)),
      )
  }
}

describe("the agent-trace plugin in Claude Code", () => {
  it("validates, installs from this repository, and notes each commit of a session with its agents' lines", async () => {
    const s = makeSandbox("cvg-trace-plugin-")
    sandbox = s
    const ws = s.ws
    const at = (path: string) => join(ws, path)
    const helperWritten = gate()
    server = await startModelServer({
      main: [
        [text("Writing."), toolUse("Write", { file_path: at("src/alpha.ts"), content: ALPHA })],
        [toolUse("Edit", { file_path: at("notes.txt"), old_string: "second line", new_string: EDITED })],
        [
          toolUse("Agent", {
            description: "Write the helper",
            prompt: "SUB-PLUGIN: write src/helper.ts",
            subagent_type: "general-purpose",
          }),
        ],
        async () => {
          // The subagent has written (its hook has run); meanwhile the person has typed lines of their own.
          await helperWritten.wait
          appendFileSync(at("src/alpha.ts"), PERSON)
          writeFileSync(at("docs/person.md"), "written by the person\n")
          return [toolUse("Bash", { command: TWO_COMMITS, description: "Commit in two steps" })]
        },
        [text("Committed twice.")],
      ],
      subagents: [
        {
          match: "SUB-PLUGIN",
          turns: [
            [toolUse("Write", { file_path: at("src/helper.ts"), content: HELPER })],
            () => {
              helperWritten.open()
              return [text("The helper is written.")]
            },
          ],
        },
      ],
    })
    // The hooks' `node` is the one running this test (Node 20 or 24, as the pass chose).
    const env = { ...cliEnv(s, server), PATH: `${s.bin}:${dirname(process.execPath)}:/usr/bin:/bin` }

    // Claude Code's own checks of both manifests, beside adding the marketplace (one CLI start each).
    const targets = [join(repoRoot, "agent-trace-plugin"), repoRoot]
    const [added, ...validated] = await Promise.all([
      claude(s, env, ["plugin", "marketplace", "add", repoRoot], s.root),
      ...targets.map((target) => claude(s, env, ["plugin", "validate", "--strict", target], s.root)),
    ])
    for (const [i, v] of validated.entries()) expect(v.code, `${targets[i]}\n${v.stdout}${v.stderr}`).toBe(0)
    expect(added!.code, added!.stdout + added!.stderr).toBe(0)
    const installed = await claude(s, env, ["plugin", "install", "agent-trace@convergence-claude"], s.root)
    expect(installed.code, installed.stdout + installed.stderr).toBe(0)
    const installPath = (
      JSON.parse(readFileSync(join(s.home, ".claude/plugins/installed_plugins.json"), "utf8")) as {
        plugins: Record<string, Array<{ installPath: string }>>
      }
    ).plugins["agent-trace@convergence-claude"]?.[0]?.installPath
    expect(installPath).toBeDefined()

    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.name", "Test Person")
    git(ws, "config", "user.email", "person@example.invalid")
    mkdirSync(at("docs"))
    writeFileSync(at(".gitignore"), ".claude/\n")
    writeFileSync(at("notes.txt"), "first line\nsecond line\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")
    const base = git(ws, "rev-parse", "HEAD")

    const session = await claude(
      s,
      env,
      ["-p", "write the files and commit", "--dangerously-skip-permissions", "--output-format", "json"],
      ws,
    )
    expect(session.code, session.stdout + session.stderr).toBe(0)
    const sessionId = (JSON.parse(session.stdout) as { session_id: string }).session_id

    const [first, second] = git(ws, "rev-list", "--reverse", `${base}..HEAD`).split("\n")
    expect(git(ws, "log", "--format=%s", `${base}..HEAD`)).toBe(
      "helper and the person's file\nalpha and notes",
    )
    const main = `claude-code://session/${sessionId}`
    const sub = `${main}?agent=general-purpose`
    const [one] = notesOn(ws, first!)
    const [two] = notesOn(ws, second!)
    for (const record of [one, two]) {
      expect(checkRecord(record).ok).toBe(true)
      expectHashesMatch(ws, record!)
      expect(record).toMatchObject({
        version: "0.1",
        tool: { name: "claude-code", version: cliUnderTest.version.text },
        metadata: { "dev.convergence.claude": { method: "line-fingerprint", session: sessionId } },
      })
    }
    expect(one?.vcs?.revision).toBe(first)
    // Lines 1-3 of alpha.ts are the agent's ("}" follows line 2); 4-5 are the person's.
    expect(rangesOf(one!)).toEqual({
      "src/alpha.ts": { [main]: [[1, 3]] },
      "notes.txt": { [main]: [[2, 3]] },
    })
    expect(two?.vcs?.revision).toBe(second)
    // The person's own file is in the commit and in no record.
    expect(rangesOf(two!)).toEqual({ "src/helper.ts": { [sub]: [[1, 2]] } })
    const helper = two!.files[0]!.conversations[0]!
    expect(helper.related).toEqual([{ type: "parent", url: main }])
    expect(helper.contributor?.model_id).toMatch(/^anthropic\/claude-/)
    expect(one!.files[0]!.conversations[0]!.contributor?.model_id).toMatch(/^anthropic\/claude-/)
    // The fingerprints sit in the plugin's data folder, one file for the session.
    const state = join(
      s.home,
      ".claude/plugins/data/agent-trace-convergence-claude/trace",
      `${sessionId}.json`,
    )
    expect(Object.keys(JSON.parse(readFileSync(state, "utf8")).prints)).toEqual([ws])

    // The plugin's own script (what the skill runs) reports the range.
    const report = await new Promise<Ran>((resolve) => {
      const script = join(installPath!, "skills/agent-trace-report/scripts/agent-trace.mjs")
      const child = spawn(process.execPath, [script, "report", "--base", base], { cwd: ws, env })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (c) => {
        stdout += c
      })
      child.stderr.on("data", (c) => {
        stderr += c
      })
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
    expect(report.code, report.stderr).toBe(0)
    expect(report.stdout).toContain("2 commits, 2 with records; 7 of 10 added lines written by AI (70%).")
    expect(report.stdout).toContain("| src/alpha.ts | 3 / 5 |")
    expect(report.stdout).toContain("| src/helper.ts | 2 / 2 |")
    expect(report.stdout).toContain("| docs/person.md | 0 / 1 |")
    mkdirSync(join(repoRoot, ".tmp"), { recursive: true })
    writeFileSync(
      join(repoRoot, ".tmp/trace-plugin-e2e.md"),
      `${JSON.stringify(two, null, 2)}\n\n${report.stdout}`,
    )
  }, 300_000)
})

const ALPHA = "export function alpha() {\n  return 'alpha'\n}\n"
const PERSON = "// a note the person typed\nexport const person = true\n"
const EDITED = "second line, edited by the agent\nthird line, added by the agent"
const HELPER = "export const helper = () => 'help'\nexport const helped = true\n"
const TWO_COMMITS =
  "git add src/alpha.ts notes.txt && git commit -q -m 'alpha and notes' && git add -A && git commit -q -m \"helper and the person's file\""

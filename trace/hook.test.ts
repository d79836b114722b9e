/**
 * The Claude Code plugin's hook calls, one payload at a time as the CLI
 * sends them (shapes seen on 2.1.282 and 2.1.332), over real git
 * repositories and the Node side of the broker: what the session's agents
 * wrote is attributed per agent in a note on each commit a Bash call made,
 * the person's lines and commits are left out, and the hooks keep nothing
 * and write nothing when they have nothing to do.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { hookBroker } from "../host/trace/hook-broker.ts"
import { type GitWorld, git, makeGitWorld } from "../host/testing/git-fixture.ts"
import { contentHash } from "./attribute.ts"
import { runHook } from "./hook.ts"
import { checkRecord, type TraceRecord } from "./schema.ts"

let world: GitWorld | undefined
afterEach(() => {
  world?.cleanup()
  world = undefined
})

const SESSION = "5044875f-3b04-469a-a7f7-c5980adc9859"

interface Setup {
  readonly data: string
  readonly transcript: string
  readonly logged: string[]
  readonly hook: (payload: unknown) => Promise<void>
}

/** A session's world: its data folder, its transcripts (main and one subagent's), the knobs in `env`. */
const setup = (w: GitWorld, env: Record<string, string> = {}): Setup => {
  const data = join(w.root, "plugin-data")
  const transcript = join(w.root, "projects", `${SESSION}.jsonl`)
  const line = (model: string) =>
    `${JSON.stringify({ type: "assistant", message: { model }, version: "2.1.332" })}\n`
  mkdirSync(join(w.root, "projects", SESSION, "subagents"), { recursive: true })
  writeFileSync(transcript, `{"type":"user","version":"2.1.332"}\n${line("claude-opus-5-5")}`)
  writeFileSync(join(w.root, "projects", SESSION, "subagents", "agent-a1.jsonl"), line("claude-haiku-5-5"))
  const logged: string[] = []
  const context = hookBroker({
    env: { PATH: process.env.PATH ?? "", HOME: w.root, GIT_CONFIG_NOSYSTEM: "1", ...env },
    data,
    debug: true,
    write: (text) => logged.push(text),
  })
  const hook = (payload: unknown) => Effect.runPromise(runHook(payload).pipe(Effect.provideContext(context)))
  return { data, transcript, logged, hook }
}

const base = (s: Setup, event: string) => ({
  session_id: SESSION,
  transcript_path: s.transcript,
  cwd: "/",
  hook_event_name: event,
})

/** The agent writes a whole file: on disk, then its PostToolUse payload (`agent`: a subagent's id and type). */
const wrote = (
  s: Setup,
  repo: string,
  path: string,
  content: string,
  agent?: { id: string; type: string },
) => {
  const file = world!.write(repo, path, content)
  return {
    ...base(s, "PostToolUse"),
    ...(agent ? { agent_id: agent.id, agent_type: agent.type } : {}),
    tool_name: "Write",
    tool_input: { file_path: file, content },
    tool_response: { type: "create", filePath: file, content, structuredPatch: [], originalFile: null },
    tool_use_id: "toolu_1",
  }
}
const bash = (s: Setup, command: string) => ({
  ...base(s, "PostToolUse"),
  tool_name: "Bash",
  tool_input: { command, description: "run" },
  tool_response: { stdout: "", stderr: "", interrupted: false },
})
const prompt = (s: Setup) => ({ ...base(s, "UserPromptSubmit"), prompt: "go" })

const notesOf = (repo: string, rev = "HEAD"): TraceRecord[] =>
  git(repo, "notes", "--ref=agent-trace", "show", rev)
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceRecord)
const hasNote = (repo: string, rev = "HEAD") => {
  try {
    git(repo, "notes", "--ref=agent-trace", "show", rev)
    return true
  } catch {
    return false
  }
}
const commitAll = (repo: string, message: string) => {
  git(repo, "add", "-A")
  git(repo, "commit", "-q", "-m", message)
  return git(repo, "rev-parse", "HEAD")
}

describe("the plugin's hooks", () => {
  it("attributes a commit's lines per agent, leaves the person's out, and names the CLI session, models and version", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const s = setup(world)
    await s.hook(prompt(s))
    await s.hook(wrote(s, repo, "src/main.ts", "export function main() {\n  return 1\n}\n"))
    await s.hook(wrote(s, repo, "src/helper.ts", "export const helper = 2\n", { id: "a1", type: "Explore" }))
    world.write(repo, "src/main.ts", "export function main() {\n  return 1\n}\n// by the person\n")
    const sha = commitAll(repo, "agent work")
    await s.hook(bash(s, "git add -A && git commit -m 'agent work'"))
    const [record] = notesOf(repo)
    expect(checkRecord(record).ok).toBe(true)
    const url = `claude-code://session/${SESSION}`
    expect(record).toMatchObject({
      vcs: { type: "git", revision: sha },
      tool: { name: "claude-code", version: "2.1.332" },
      metadata: { "dev.convergence.claude": { method: "line-fingerprint", session: SESSION } },
    })
    const byPath = Object.fromEntries(record!.files.map((f) => [f.path, f.conversations]))
    expect(byPath["src/main.ts"]).toEqual([
      {
        url,
        contributor: { type: "ai", model_id: "anthropic/claude-opus-5-5" },
        ranges: [
          {
            start_line: 1,
            end_line: 3,
            content_hash: contentHash(["export function main() {", "  return 1", "}"]),
          },
        ],
      },
    ])
    expect(byPath["src/helper.ts"]).toEqual([
      {
        url: `${url}?agent=Explore`,
        contributor: { type: "ai", model_id: "anthropic/claude-haiku-5-5" },
        ranges: [{ start_line: 1, end_line: 1, content_hash: contentHash(["export const helper = 2"]) }],
        related: [{ type: "parent", url }],
      },
    ])
    expect(readdirSync(join(s.data, "trace"))).toEqual([`${SESSION}.json`])
  })

  it("notes each of several commits one command made, and none the person made between turns", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const s = setup(world)
    await s.hook(prompt(s))
    await s.hook(wrote(s, repo, "one.txt", "the first file of the agent\n"))
    await s.hook(wrote(s, repo, "two.txt", "the second file of the agent\n"))
    git(repo, "add", "one.txt")
    git(repo, "commit", "-q", "-m", "one")
    const first = git(repo, "rev-parse", "HEAD")
    const second = commitAll(repo, "two")
    await s.hook(bash(s, "git add one.txt && git commit -m one && git add -A && git commit -m two"))
    expect(notesOf(repo, first)[0]?.files.map((f) => f.path)).toEqual(["one.txt"])
    expect(notesOf(repo, second)[0]?.files.map((f) => f.path)).toEqual(["two.txt"])
    await s.hook(wrote(s, repo, "three.txt", "the third file, left uncommitted\n"))
    await s.hook(base(s, "Stop"))
    // Between turns the person commits it by hand.
    const byHand = commitAll(repo, "by hand")
    await s.hook(prompt(s))
    await s.hook(wrote(s, repo, "four.txt", "the fourth file of the agent\n"))
    const fourth = commitAll(repo, "four")
    await s.hook(bash(s, "git commit -am four"))
    expect(hasNote(repo, byHand)).toBe(false)
    expect(notesOf(repo, fourth)[0]?.files.map((f) => f.path)).toEqual(["four.txt"])
  })

  it("notes at Stop what a tool other than Bash committed; at SessionEnd only for a turn cut off before its Stop", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const s = setup(world)
    await s.hook(prompt(s))
    await s.hook(wrote(s, repo, "a.txt", "written by the agent\n"))
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "by an MCP tool")
    const byTool = git(repo, "rev-parse", "HEAD")
    await s.hook(wrote(s, repo, "b.txt", "written by the agent, left uncommitted\n"))
    await s.hook(base(s, "Stop"))
    expect(notesOf(repo, byTool)[0]?.files.map((f) => f.path)).toEqual(["a.txt"])
    // After the turn's Stop, a commit is the person's, also when the session then ends.
    const afterStop = commitAll(repo, "after the stop")
    await s.hook(base(s, "SessionEnd"))
    expect(hasNote(repo, afterStop)).toBe(false)
    // A turn cut off (no Stop): its commit is noted when the session ends.
    await s.hook(prompt(s))
    await s.hook(wrote(s, repo, "c.txt", "written in the cut-off turn\n"))
    const cutOff = commitAll(repo, "cut off")
    await s.hook(base(s, "SessionEnd"))
    expect(notesOf(repo, cutOff)[0]?.files.map((f) => f.path)).toEqual(["c.txt"])
  })

  it("follows a subagent into its own git worktree: the note lands on the worktree's commit", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tree = join(world.root, "subagent-tree")
    git(repo, "worktree", "add", "-q", "-b", "helper", tree)
    const s = setup(world)
    await s.hook(prompt(s))
    await s.hook(wrote(s, tree, "w.txt", "written in the worktree\n", { id: "a1", type: "Plan" }))
    commitAll(tree, "in the worktree")
    await s.hook(bash(s, "git commit -am 'in the worktree'"))
    expect(notesOf(tree)[0]?.files[0]).toMatchObject({
      path: "w.txt",
      conversations: [{ url: `claude-code://session/${SESSION}?agent=Plan` }],
    })
    expect(hasNote(repo)).toBe(false)
  })

  it("keeps nothing before the session's first edit, outside a repository, or when turned off", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const s = setup(world)
    await s.hook(prompt(s))
    await s.hook(bash(s, "git status"))
    await s.hook(base(s, "Stop"))
    const outside = join(world.root, "not-a-repo")
    mkdirSync(outside)
    await s.hook(wrote(s, outside, "x.txt", "no repository here\n"))
    expect(existsSync(s.data)).toBe(false)
    const off = setup(world, { CLAUDE_AGENT_TRACE: "0" })
    await off.hook(prompt(off))
    await off.hook(wrote(off, repo, "o.txt", "not traced\n"))
    commitAll(repo, "o")
    await off.hook(bash(off, "git commit -am o"))
    expect(hasNote(repo)).toBe(false)
    expect(existsSync(off.data)).toBe(false)
  })

  it("pushes the notes after the agent's git push only when asked to", async () => {
    world = makeGitWorld()
    const remote = world.bare("remote.git")
    const repo = world.repo("repo")
    git(repo, "remote", "add", "origin", remote)
    git(repo, "push", "-q", "-u", "origin", "main")
    const quiet = setup(world)
    await quiet.hook(prompt(quiet))
    await quiet.hook(wrote(quiet, repo, "q.txt", "traced, not pushed\n"))
    commitAll(repo, "q")
    git(repo, "push", "-q")
    await quiet.hook(bash(quiet, "git commit -am q && git push"))
    expect(notesOf(repo)).toHaveLength(1)
    expect(git(remote, "for-each-ref", "refs/notes/")).toBe("")
    const pusher = setup(world, { CLAUDE_AGENT_TRACE_PUSH: "1" })
    await pusher.hook(bash(pusher, "git push --dry-run"))
    expect(git(remote, "for-each-ref", "refs/notes/")).toBe("")
    await pusher.hook(bash(pusher, "git push origin main"))
    expect(git(remote, "rev-parse", "refs/notes/agent-trace")).toBe(
      git(repo, "rev-parse", "refs/notes/agent-trace"),
    )
  })

  it("takes a payload that is no hook's as a log line, never a failure", async () => {
    world = makeGitWorld()
    const s = setup(world)
    await s.hook({ hello: "world" })
    await s.hook({ ...prompt(s), session_id: 42 })
    expect(s.logged.join("")).toMatch(/not a hook payload/)
    expect(existsSync(dirname(s.data))).toBe(true)
    expect(existsSync(s.data)).toBe(false)
  })
})

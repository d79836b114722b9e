/**
 * The tracker fed agent events by hand, over real git repositories: what the
 * session's agents wrote is attributed in a note on each commit a tool made,
 * the person's lines and commits are left out, fingerprints survive a new
 * tracker (a resumed session), pushes carry the notes only when they should,
 * and a record that breaks the schema is a warning, not a note.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, afterEach, describe, expect, it, vi } from "vitest"
import { type GitWorld, git, grantedGit, makeGitWorld } from "../host/testing/git-fixture.ts"
import { brokerContext } from "../sdk/context.ts"
import type { AgentEvent, NoticeLevel, ToolCall } from "../sdk/protocol.ts"
import type { Git } from "./git.ts"
import { makeMemoryBroker } from "../sdk/testing/memory-broker.ts"
import { contentHash } from "./attribute.ts"
import { checkRecord, type TraceRecord } from "./schema.ts"
import { makeTracker, type Tracker, type TrackerSetup } from "./tracker.ts"

let world: GitWorld | undefined
const scopes: Scope.Closeable[] = []
afterEach(async () => {
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
  world?.cleanup()
  world = undefined
})

const broker = makeMemoryBroker()
// Every git call the tracker makes must fit the manifest's patterns (the host refuses any other).
const granted = grantedGit()
afterAll(() => expect(granted.refused).toEqual([]))
const notices: Array<{ level: NoticeLevel; text: string }> = []

const start = async (overrides: Partial<TrackerSetup> = {}): Promise<Tracker> => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  return Effect.runPromise(
    makeTracker({
      sessionId: "s1",
      enabled: () => true,
      model: () => "claude-opus-5-5",
      toolVersion: () => "2.1.332",
      push: Effect.succeed({ enabled: true, timeoutMs: 10_000 }),
      notice: (level, text) => Effect.sync(() => void notices.push({ level, text })),
      git: granted.git,
      ...overrides,
    }).pipe(Scope.provide(scope), Effect.provideContext(brokerContext(broker.api))),
  )
}

let callNo = 0
const finished = (name: string, input: unknown, output: unknown, taskId?: string): AgentEvent => {
  const call: ToolCall = {
    id: `call-${++callNo}`,
    name,
    kind: name === "Bash" ? "execute" : "edit",
    title: name,
    input,
    output,
    status: "Completed",
    ...(taskId ? { task_id: taskId } : {}),
  }
  return { type: "ToolCallFinished", session_id: "s1", ...(taskId ? { task_id: taskId } : {}), call }
}
const runStarted: AgentEvent = { type: "RunStarted", session_id: "s1", run_id: "r1" }

/** The agent writes a whole file: on disk, then the event. */
const agentWrites = (repo: string, path: string, content: string, taskId?: string) => {
  const file = world!.write(repo, path, content)
  return finished("Write", { file_path: file, content }, { type: "create", filePath: file, content }, taskId)
}

const feed = async (tracker: Tracker, ...events: AgentEvent[]) => {
  for (const event of events) await Effect.runPromise(tracker.feed(event))
  await Effect.runPromise(tracker.settled)
}

const noteOf = (repo: string, rev = "HEAD"): TraceRecord[] => {
  const text = git(repo, "notes", "--ref=agent-trace", "show", rev)
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

const linesOf = (repo: string, path: string) => git(repo, "show", `HEAD:${path}`).split("\n")

describe("the Agent Trace tracker", () => {
  /** The granted git, but the calls `fails` picks get no answer (as a timed-out broker call gives). */
  const failingGit =
    (fails: (args: ReadonlyArray<string>) => boolean): Git =>
    (repo, args, options) =>
      fails(args)
        ? Effect.succeed({ code: null, stdout: "", stderr: "timed out" })
        : granted.git(repo, args, options)

  it("a repository lookup that gets no answer is asked again, and the edit is kept", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    let unanswered = 2
    const tracker = await start({
      git: failingGit((args) => args.includes("--show-toplevel") && unanswered-- > 0),
    })
    await feed(tracker, runStarted, agentWrites(repo, "src/kept.ts", "export const kept = 1\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "kept")
    await feed(tracker, finished("Bash", { command: "git add -A && git commit -m kept" }, "ok"))
    expect(noteOf(repo)[0]?.files.map((f) => f.path)).toEqual(["src/kept.ts"])
  })

  it("a HEAD read that gets no answer keeps the HEAD seen last: an earlier commit is not noted twice", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    let failHead = false
    const tracker = await start({
      cwd: repo,
      git: failingGit((args) => failHead && args.includes("HEAD^{commit}")),
    })
    await feed(tracker, runStarted, agentWrites(repo, "one.ts", "export const one = 1\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    await feed(tracker, finished("Bash", { command: "git add -A && git commit -m one" }, "ok"))
    const first = git(repo, "rev-parse", "HEAD")
    expect(noteOf(repo, first)).toHaveLength(1)
    await feed(tracker, agentWrites(repo, "two.ts", "export const two = 2\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two")
    failHead = true
    await feed(tracker, finished("Bash", { command: "git add -A && git commit -m two" }, "ok"))
    failHead = false
    await feed(tracker, {
      type: "RunEnded",
      session_id: "s1",
      run_id: "r1",
      outcome: "Completed",
    } as AgentEvent)
    expect(noteOf(repo)[0]?.files.map((f) => f.path)).toEqual(["two.ts"])
    expect(noteOf(repo, first)).toHaveLength(1)
  })

  it("HEAD is read when an event happens, not when the tracker gets to it: the person's commit after a run is not the run's", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    let release: () => void = () => {}
    let gate: Promise<void> | undefined
    let headReads = 0
    const slowGit: Git = (dir, args, options) => {
      const call = granted.git(dir, args, options)
      // Only this repository's: the tracker also reads HEAD in the repositories the session's stored prints
      // name (the earlier tests' own, gone), and counting those let the wait below end before this one's
      // readings were in (the person's commit was then read as the run's).
      if (args.includes("HEAD^{commit}"))
        return dir === repo ? Effect.tap(call, () => Effect.sync(() => void headReads++)) : call
      // While the gate is shut the tracker is stuck behind a slow call, as on a loaded machine.
      return args[0] === "rev-list" && gate
        ? Effect.andThen(
            Effect.promise(() => gate!),
            call,
          )
        : call
    }
    const tracker = await start({ cwd: repo, git: slowGit })
    await feed(
      tracker,
      runStarted,
      agentWrites(repo, "a.ts", "export const a = 1\n"),
      agentWrites(repo, "b.ts", "export const b = 2\n"),
    )
    git(repo, "add", "a.ts")
    git(repo, "commit", "-q", "-m", "the agent's")
    const agents = git(repo, "rev-parse", "HEAD")
    gate = new Promise((resolve) => (release = resolve))
    const readsBefore = headReads
    await Effect.runPromise(tracker.feed(finished("Bash", { command: "git add a.ts && git commit" }, "ok")))
    await Effect.runPromise(
      tracker.feed({ type: "RunEnded", session_id: "s1", run_id: "r1", outcome: "Completed" } as AgentEvent),
    )
    // Both events' HEAD readings are in before the person moves on. A git start can take seconds on a
    // loaded machine (a short wait that gave up let the person's commit land first).
    await vi.waitFor(() => expect(headReads).toBeGreaterThanOrEqual(readsBefore + 2), { timeout: 30_000 })
    // Between the runs the person commits the agent's other file.
    git(repo, "add", "b.ts")
    git(repo, "commit", "-q", "-m", "the person's")
    await Effect.runPromise(tracker.feed(runStarted))
    release()
    await Effect.runPromise(tracker.settled)
    expect(noteOf(repo, agents)[0]?.files.map((f) => f.path)).toEqual(["a.ts"])
    expect(() => noteOf(repo)).toThrow(/no note found/)
  })

  it("a session folder that is no repository costs one git call, not one a prompt", async () => {
    world = makeGitWorld()
    const folder = join(world.repo("repo"), "..", "plain")
    mkdirSync(folder)
    let lookups = 0
    const counting: Git = (dir, args, options) => {
      if (args.includes("--show-toplevel")) lookups++
      return granted.git(dir, args, options)
    }
    const tracker = await start({ cwd: folder, git: counting })
    const ended = { type: "RunEnded", session_id: "s1", run_id: "r1", outcome: "Completed" } as AgentEvent
    for (let run = 0; run < 4; run++) {
      await feed(tracker, runStarted)
      await feed(tracker, ended)
    }
    expect(lookups).toBe(1)
    // A command that ran git may have made it one: asked again at the next run's start.
    await feed(tracker, runStarted)
    await feed(tracker, finished("Bash", { command: "git init -q" }, "ok"))
    await feed(tracker, ended)
    expect(lookups).toBe(1)
    await feed(tracker, runStarted)
    expect(lookups).toBe(2)
  })

  it("a session folder that becomes a repository during the session is still watched", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const folder = join(repo, "..", "later")
    mkdirSync(folder)
    const tracker = await start({ cwd: folder })
    await feed(tracker, runStarted)
    // The agent makes it a repository, then writes and commits in the same run.
    git(folder, "init", "-q", "-b", "main")
    git(folder, "config", "user.name", "Test Person")
    git(folder, "config", "user.email", "person@example.invalid")
    git(folder, "commit", "-q", "--allow-empty", "-m", "start")
    await feed(tracker, finished("Bash", { command: "git init" }, "ok"))
    await feed(tracker, agentWrites(folder, "made.ts", "export const made = 1\n"))
    git(folder, "add", "-A")
    git(folder, "commit", "-q", "-m", "made")
    await feed(tracker, finished("Bash", { command: "git add -A && git commit -m made" }, "ok"))
    expect(noteOf(folder)[0]?.files.map((f) => f.path)).toEqual(["made.ts"])
  })

  it("notes a commit made before the tracker caught up with the edit, in the session's own repository", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tracker = await start({ cwd: repo })
    await feed(tracker, runStarted)
    // The session has gone on while the tracker was behind: the agent wrote, then its command committed.
    const wrote = agentWrites(repo, "src/fast.ts", "export const fast = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fast")
    await feed(tracker, wrote, finished("Bash", { command: "git add -A && git commit -m fast" }, "ok"))
    const [record] = noteOf(repo)
    expect(record?.vcs?.revision).toBe(git(repo, "rev-parse", "HEAD"))
    expect(record?.files.map((f) => f.path)).toEqual(["src/fast.ts"])
  })

  it("attributes the agents' lines of a commit a command made, per agent, and leaves the person's out", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tracker = await start()
    await feed(
      tracker,
      runStarted,
      {
        type: "Task",
        session_id: "s1",
        task: { id: "task-1", title: "t", name: "Explore", status: "Running" },
      },
      agentWrites(repo, "src/main.ts", "export function main() {\n  return 1\n}\n"),
      agentWrites(repo, "src/helper.ts", "export const helper = 2\n", "task-1"),
    )
    // The person adds lines by hand to the agent's file, then the agent's command commits.
    world.write(repo, "src/main.ts", "export function main() {\n  return 1\n}\n// added by the person\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "agent work")
    await feed(tracker, finished("Bash", { command: "git add -A && git commit -m 'agent work'" }, "ok"))

    const [record] = noteOf(repo)
    expect(checkRecord(record).ok).toBe(true)
    expect(record?.vcs?.revision).toBe(git(repo, "rev-parse", "HEAD"))
    const byPath = Object.fromEntries(record!.files.map((f) => [f.path, f.conversations]))
    expect(Object.keys(byPath).sort()).toEqual(["src/helper.ts", "src/main.ts"])
    expect(byPath["src/main.ts"]).toHaveLength(1)
    expect(byPath["src/main.ts"]?.[0]).toMatchObject({
      url: "cvg://session/s1",
      contributor: { type: "ai", model_id: "anthropic/claude-opus-5-5" },
      ranges: [{ start_line: 1, end_line: 3 }],
    })
    expect(byPath["src/helper.ts"]?.[0]).toMatchObject({
      url: "cvg://session/s1?agent=Explore",
      ranges: [{ start_line: 1, end_line: 1 }],
    })
    // The hash is of the range's text as committed.
    const range = byPath["src/main.ts"]![0]!.ranges[0]!
    expect(range.content_hash).toBe(contentHash(linesOf(repo, "src/main.ts").slice(0, 3)))
  })

  it("follows a subagent into its own git worktree: the note lands on the worktree's commit", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tree = `${world.root}/subagent-tree`
    git(repo, "worktree", "add", "-q", "-b", "helper", tree)
    const tracker = await start({ sessionId: "worktree" })
    await feed(
      tracker,
      runStarted,
      { type: "Task", session_id: "s1", task: { id: "task-w", title: "t", name: "Plan", status: "Running" } },
      agentWrites(tree, "w.txt", "written in the worktree\n", "task-w"),
    )
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "in the worktree")
    await feed(tracker, finished("Bash", { command: "git commit -m 'in the worktree'" }, "ok", "task-w"))
    const [record] = noteOf(tree)
    expect(record?.vcs?.revision).toBe(git(tree, "rev-parse", "HEAD"))
    expect(record?.files[0]).toMatchObject({
      path: "w.txt",
      conversations: [{ url: "cvg://session/worktree?agent=Plan" }],
    })
    // The main checkout's HEAD did not move and has no note.
    expect(() => noteOf(repo)).toThrow()
  })

  it("notes the new commit of an amend the agent runs (the old commit keeps its own note)", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tracker = await start({ sessionId: "amend" })
    await feed(tracker, runStarted, agentWrites(repo, "m.txt", "first version of the line\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "first")
    const first = git(repo, "rev-parse", "HEAD")
    await feed(tracker, finished("Bash", { command: "git commit -am first" }, "ok"))
    await feed(tracker, agentWrites(repo, "m.txt", "first version of the line\nand one more\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--amend", "-m", "amended")
    await feed(tracker, finished("Bash", { command: "git commit -a --amend -m amended" }, "ok"))
    const amended = git(repo, "rev-parse", "HEAD")
    expect(amended).not.toBe(first)
    expect(noteOf(repo, first)[0]?.vcs?.revision).toBe(first)
    const [record] = noteOf(repo, amended)
    expect(record?.vcs?.revision).toBe(amended)
    expect(record?.files[0]?.conversations[0]?.ranges).toMatchObject([{ start_line: 1, end_line: 2 }])
  })

  it("leaves out a commit the person made between turns, and records one made by a later command", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const tracker = await start()
    await feed(tracker, runStarted, agentWrites(repo, "a.txt", "written by the agent\n"))
    await feed(tracker, { type: "RunEnded", session_id: "s1", run_id: "r1", outcome: "Completed" })
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "by hand")
    const byHand = git(repo, "rev-parse", "HEAD")
    await feed(
      tracker,
      { ...runStarted, run_id: "r2" },
      agentWrites(repo, "b.txt", "second file of the agent\n"),
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "by the agent")
    await feed(tracker, finished("Bash", { command: "git commit -am x" }, "ok"))
    expect(() => git(repo, "notes", "--ref=agent-trace", "show", byHand)).toThrow()
    expect(noteOf(repo)[0]?.files.map((f) => f.path)).toEqual(["b.txt"])
  })

  it("still knows the fingerprints in a new tracker for the same session (a resumed session)", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const first = await start({ sessionId: "resumed" })
    await feed(first, runStarted, agentWrites(repo, "kept.txt", "kept across a resume\n"))
    const second = await start({ sessionId: "resumed" })
    await feed(second, runStarted)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "earlier work")
    await feed(second, finished("Bash", { command: "git commit" }, "ok"))
    expect(noteOf(repo)[0]?.files[0]).toMatchObject({
      path: "kept.txt",
      conversations: [{ ranges: [{ start_line: 1 }] }],
    })
  })

  it("pushes the notes after a push, but not after a dry run, a tag-only push or a deletion", async () => {
    world = makeGitWorld()
    const remote = world.bare("remote.git")
    const repo = world.repo("repo")
    git(repo, "remote", "add", "origin", remote)
    git(repo, "push", "-q", "-u", "origin", "main")
    const tracker = await start({ sessionId: "pusher" })
    await feed(tracker, runStarted, agentWrites(repo, "p.txt", "pushed along\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "p")
    git(repo, "tag", "v1")
    await feed(tracker, finished("Bash", { command: "git commit -am p" }, "ok"))
    const remoteNotes = () => git(remote, "for-each-ref", "refs/notes/")
    for (const command of ["git push --dry-run", "git push origin --tags", "git push origin --delete old"]) {
      await feed(tracker, finished("Bash", { command }, "ok"))
      expect(remoteNotes(), command).toBe("")
    }
    git(repo, "push", "-q")
    await feed(tracker, finished("Bash", { command: "git push" }, "ok"))
    expect(remoteNotes()).toMatch(/refs\/notes\/agent-trace/)
  })

  it("pushes only the repositories that have the push's remote (no warning for the others)", async () => {
    world = makeGitWorld()
    const remote = world.bare("remote.git")
    const pushed = world.repo("pushed")
    const local = world.repo("local")
    git(pushed, "remote", "add", "origin", remote)
    git(pushed, "push", "-q", "-u", "origin", "main")
    notices.length = 0
    const tracker = await start({ sessionId: "two-repos" })
    await feed(tracker, runStarted, agentWrites(pushed, "a.txt", "in the pushed one\n"))
    await feed(tracker, agentWrites(local, "b.txt", "in the local one\n"))
    for (const repo of [pushed, local]) {
      git(repo, "add", "-A")
      git(repo, "commit", "-q", "-m", "both")
    }
    git(pushed, "push", "-q")
    await feed(tracker, finished("Bash", { command: "git commit -am both && git push origin main" }, "ok"))
    expect(noteOf(local)).toHaveLength(1)
    expect(git(remote, "for-each-ref", "refs/notes/")).toMatch(/agent-trace/)
    expect(notices).toEqual([])
  })

  it("does nothing when turned off, and pushes nothing unless asked", async () => {
    world = makeGitWorld()
    const remote = world.bare("remote.git")
    const repo = world.repo("repo")
    git(repo, "remote", "add", "origin", remote)
    const off = await start({ sessionId: "off", enabled: () => false })
    await feed(off, runStarted, agentWrites(repo, "o.txt", "not traced\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "o")
    await feed(off, finished("Bash", { command: "git commit" }, "ok"))
    expect(() => noteOf(repo)).toThrow()
    const quiet = await start({
      sessionId: "quiet",
      push: Effect.succeed({ enabled: false, timeoutMs: 1_000 }),
    })
    await feed(quiet, runStarted, agentWrites(repo, "q.txt", "traced, not pushed\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "q")
    git(repo, "push", "-q", "origin", "main")
    await feed(quiet, finished("Bash", { command: "git commit -am q && git push origin main" }, "ok"))
    expect(noteOf(repo)).toHaveLength(1)
    expect(git(remote, "for-each-ref", "refs/notes/")).toBe("")
  })

  it("writes no note for a record that breaks the schema, and says so in a warning", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    notices.length = 0
    const tracker = await start({ sessionId: "bad", model: () => "m".repeat(300) })
    await feed(tracker, runStarted, agentWrites(repo, "x.txt", "a line of the agent\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "x")
    await feed(tracker, finished("Bash", { command: "git commit" }, "ok"))
    expect(() => noteOf(repo)).toThrow()
    expect(notices).toEqual([
      { level: "warning", text: expect.stringMatching(/^Agent Trace: no record for commit \w{7}.*model_id/) },
    ])
  })
})

/**
 * Agent Trace end to end: the plugin inside host/ (git granted and enforced
 * by the manifest), the real CLI (2.1.332, or the one under test) against
 * the scripted model, in a temporary git repository. The agent writes one
 * file, edits another, a subagent writes a third, the person adds lines by hand, and the agent
 * commits through an approved Bash call: the note on the new commit must
 * validate, hold exactly the agents' lines (per agent, hashes of the
 * committed text) and none of the person's. A second commit in the same
 * session and a resumed session committing earlier work get notes too. With
 * the push knob on, the agent's dry-run and tag-only pushes carry no notes
 * and its push merges a remote whose notes moved.
 */
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it, onTestFailed } from "vitest"
import { git } from "../host/testing/git-fixture.ts"
import { traceCommand } from "../host/trace/trace-report.ts"
import { text, toolUse } from "../testkit/model-server.ts"
import { contentHash } from "../trace/attribute.ts"
import { NOTES_REF } from "../trace/git.ts"
import { checkRecord, type TraceRecord } from "../trace/schema.ts"
import {
  cliUnderTest,
  closeWorldsAfterEach,
  createSession,
  ofType,
  type World,
  startWorld,
} from "./harness.ts"

let world: World | undefined
closeWorldsAfterEach()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The notes ref's commit in a repository (`git dir`: `.git` or a bare
 * repository itself), read from its file: polling it costs no process, and
 * git is asked only when it moved. "" before the first note (or when packed).
 */
const notesRefIn = (gitDir: string): string => {
  try {
    return readFileSync(join(gitDir, NOTES_REF), "utf8").trim()
  } catch {
    return ""
  }
}

/** Wait until `read` (run when the notes ref moved, and every few seconds in case it is packed) gives a value. */
const whenNotesMove = async <T>(
  gitDir: string,
  read: () => T | undefined,
  timeoutMs: number,
): Promise<T | undefined> => {
  const until = Date.now() + timeoutMs
  let seen: string | undefined
  let askedAt = 0
  for (;;) {
    const ref = notesRefIn(gitDir)
    if (ref !== seen || Date.now() - askedAt > 3_000) {
      seen = ref
      askedAt = Date.now()
      const found = read()
      if (found !== undefined) return found
    }
    if (Date.now() > until) return undefined
    await sleep(50)
  }
}

const noteText = (repo: string, rev: string): string | undefined => {
  try {
    return git(repo, "notes", "--ref=agent-trace", "show", rev)
  } catch {
    return undefined
  }
}

/** The records of a commit's note, once the tracker has written it. */
const noteOn = async (repo: string, rev: string, timeoutMs = 45_000): Promise<TraceRecord[]> => {
  const text = await whenNotesMove(join(repo, ".git"), () => noteText(repo, rev), timeoutMs)
  if (text === undefined) throw new Error(`no note on ${rev} within ${timeoutMs} ms`)
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as TraceRecord)
}

/** Ranges per file and agent url: `{ path: { url: [[start, end], …] } }`. */
const rangesOf = (record: TraceRecord) =>
  Object.fromEntries(
    record.files.map((file) => [
      file.path,
      Object.fromEntries(
        file.conversations.map((c) => [c.url, c.ranges.map((r) => [r.start_line, r.end_line])]),
      ),
    ]),
  )

/** Every range's hash matches the text the commit holds at those lines. */
const expectHashesMatch = (repo: string, record: TraceRecord) => {
  for (const file of record.files) {
    const lines = git(repo, "show", `${record.vcs?.revision}:${file.path}`).split("\n")
    for (const range of file.conversations.flatMap((c) => c.ranges))
      expect(range.content_hash, `${file.path}:${range.start_line}`).toBe(
        contentHash(lines.slice(range.start_line - 1, range.end_line)),
      )
  }
}

const commitCall = (message: string) =>
  toolUse("Bash", { command: `git add -A && git commit -q -m '${message}'`, description: "Commit" })

/** On a failure, what the tracker did: its git calls, its log lines and the session's notices. */
const explainOnFailure = (w: World, sessionId: () => string) =>
  onTestFailed(() => {
    const lines = w.host.logger.entries
      .filter((e) => /trace|git/.test(`${e.message} ${JSON.stringify(e.data ?? "")}`))
      .map(
        (e) =>
          `${new Date(e.at).toISOString()} ${e.level} ${e.source} ${e.message} ${JSON.stringify(e.data ?? "")}`,
      )
    const notices = ofType(w.events(sessionId()), "Notice").map((n) => `${n.level}: ${n.text}`)
    console.error(["the tracker's log:", ...lines, "notices:", ...notices].join("\n"))
  })

/** Prompt, allow every Bash approval of the run, and wait for its end. */
const promptAllowing = async (w: World, sessionId: string, prompt: string) => {
  const accepted = await w.host.call(w.agentId, "prompt", { sessionId, text: prompt })
  const approval = await w.waitFor(
    sessionId,
    "ApprovalRequested",
    (e) => e.run_id === accepted.run_id,
    60_000,
  )
  expect(approval.tool_name).toBe("Bash")
  await w.host.call(w.agentId, "answerApproval", {
    sessionId,
    approvalId: approval.approval_id,
    decision: "allow",
  })
  const ended = await w.waitFor(sessionId, "RunEnded", (e) => e.run_id === accepted.run_id, 60_000)
  expect(ended.outcome).toBe("Completed")
}

describe("Agent Trace against the real CLI", () => {
  it("notes each commit the agent makes with exactly its agents' lines, also after a resume", async () => {
    const ws = { dir: "" }
    const at = (path: string) => join(ws.dir, path)
    world = await startWorld({
      main: [
        // Run 1: write, read and edit, delegate a file to a subagent.
        () => [text("Writing."), toolUse("Write", { file_path: at("src/alpha.ts"), content: ALPHA })],
        () => [toolUse("Read", { file_path: at("notes.txt") })],
        () => [
          toolUse("Edit", { file_path: at("notes.txt"), old_string: "second line", new_string: EDITED }),
        ],
        [
          toolUse("Agent", {
            description: "Write the helper",
            prompt: "SUB-TRACE: write src/helper.ts",
            subagent_type: "general-purpose",
          }),
        ],
        [text("All three files are written.")],
        // Run 2: commit (the person has added lines in between).
        [commitCall("agent work")],
        [text("Committed.")],
        // Run 3: a second commit in the same session.
        () => [toolUse("Write", { file_path: at("src/second.ts"), content: SECOND })],
        [commitCall("second commit")],
        [text("Committed again.")],
        // Run 4: work left uncommitted before the session closes.
        () => [toolUse("Write", { file_path: at("src/later.ts"), content: LATER })],
        [text("Written, not committed.")],
        // Run 5, after the resume: commit the earlier work.
        [commitCall("earlier work")],
        [text("Committed the earlier work.")],
      ],
      subagents: [
        {
          match: "SUB-TRACE",
          turns: [
            () => [toolUse("Write", { file_path: at("src/helper.ts"), content: HELPER })],
            [text("The helper is written.")],
          ],
        },
      ],
    })
    const w = world
    ws.dir = w.sandbox.ws
    const repo = w.sandbox.ws
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test Person")
    git(repo, "config", "user.email", "person@example.invalid")
    writeFileSync(join(repo, ".gitignore"), ".claude/\n")
    writeFileSync(join(repo, "notes.txt"), "first line\nsecond line\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    const base = git(repo, "rev-parse", "HEAD")

    const options = { approval_mode: "accept_edits" }
    const { session_id } = await createSession(w, { options })
    explainOnFailure(w, () => session_id)
    const first = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "write the files" })
    const ended = await w.waitFor(session_id, "RunEnded", (e) => e.run_id === first.run_id, 90_000)
    expect(ended.outcome).toBe("Completed")

    // The person adds lines by hand to the agent's file and a file of their own.
    appendFileSync(join(repo, "src/alpha.ts"), PERSON)
    mkdirSync(join(repo, "docs"), { recursive: true })
    writeFileSync(join(repo, "docs/person.md"), "written by the person\n")

    await promptAllowing(w, session_id, "commit it")
    const firstCommit = git(repo, "rev-parse", "HEAD")
    expect(git(repo, "log", "-1", "--format=%s")).toBe("agent work")
    const [record] = await noteOn(repo, firstCommit)
    expect(checkRecord(record).ok).toBe(true)
    const main = `cvg://session/${session_id}`
    const sub = `${main}?agent=general-purpose`
    expect(rangesOf(record!)).toEqual({
      // Lines 1-3 are the agent's ("}" follows line 2); 4-5 are the person's.
      "src/alpha.ts": { [main]: [[1, 3]] },
      "notes.txt": { [main]: [[2, 3]] },
      "src/helper.ts": { [sub]: [[1, 2]] },
    })
    expectHashesMatch(repo, record!)
    expect(record).toMatchObject({
      version: "0.1",
      vcs: { type: "git", revision: firstCommit },
      // The version the CLI reports (2.1.282 names none in its initialize answer: the plugin's --version does).
      tool: { name: "claude-code", version: cliUnderTest.version.text },
      metadata: { "dev.convergence.claude": { method: "line-fingerprint", session: session_id } },
    })
    const helper = record!.files.find((f) => f.path === "src/helper.ts")!.conversations[0]!
    expect(helper.related).toEqual([{ type: "parent", url: main }])
    expect(helper.contributor?.type).toBe("ai")

    // A second commit in the same session.
    await promptAllowing(w, session_id, "write and commit another")
    const secondCommit = git(repo, "rev-parse", "HEAD")
    expect(secondCommit).not.toBe(firstCommit)
    const [second] = await noteOn(repo, secondCommit)
    expect(rangesOf(second!)).toEqual({ "src/second.ts": { [main]: [[1, 1]] } })

    // Work written, the session closed, resumed, and the earlier work committed.
    const fourth = await w.host.call(w.agentId, "prompt", { sessionId: session_id, text: "write one more" })
    await w.waitFor(session_id, "RunEnded", (e) => e.run_id === fourth.run_id, 60_000)
    await w.host.call(w.agentId, "closeSession", { sessionId: session_id })
    await w.host.call(w.agentId, "resumeSession", { sessionId: session_id, cwd: repo, options })
    await promptAllowing(w, session_id, "commit the earlier work")
    const thirdCommit = git(repo, "rev-parse", "HEAD")
    expect(git(repo, "log", "-1", "--format=%s")).toBe("earlier work")
    const [resumed] = await noteOn(repo, thirdCommit)
    expect(checkRecord(resumed).ok).toBe(true)
    expect(rangesOf(resumed!)).toEqual({ "src/later.ts": { [main]: [[1, 2]] } })
    expectHashesMatch(repo, resumed!)

    // The report over the session's commits counts what the notes say.
    const report = await traceCommand(["report", "--base", base, "--repo", repo])
    expect(report.code).toBe(0)
    expect(report.stdout).toContain("| src/alpha.ts | 3 / 5 |")
    expect(report.stdout).toContain("| docs/person.md | 0 / 1 |")
    expect(report.stdout).toContain("3 commits, 3 with records")
    // Kept for the merge note: one real record and the report's output for it.
    mkdirSync(join(import.meta.dirname, "../.tmp"), { recursive: true })
    writeFileSync(
      join(import.meta.dirname, "../.tmp/trace-e2e.md"),
      `${JSON.stringify(record, null, 2)}\n\n${report.stdout}`,
    )
  }, 300_000)
})

describe("Agent Trace notes pushed with the agent's push", () => {
  it("pushes the notes after the agent's git push, merging the remote's diverged notes (both sides kept)", async () => {
    const ws = { dir: "" }
    world = await startWorld(
      {
        main: [
          () => [toolUse("Write", { file_path: join(ws.dir, "pushed.ts"), content: SECOND })],
          [
            toolUse("Bash", {
              command:
                "git add -A && git commit -q -m pushed && git tag v1 && git push -q --dry-run origin main && git push -q origin --tags",
              description: "Commit, try the push, push the tag",
            }),
          ],
          [text("Tried.")],
          [toolUse("Bash", { command: "git push -q origin main", description: "Push" })],
          [text("Pushed.")],
        ],
      },
      { env: { CLAUDE_AGENT_TRACE_PUSH: "1" } },
    )
    const w = world
    ws.dir = w.sandbox.ws
    const repo = w.sandbox.ws
    const remote = join(w.sandbox.root, "remote.git")
    const other = join(w.sandbox.root, "other")
    mkdirSync(remote)
    git(remote, "init", "-q", "--bare", "-b", "main")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.name", "Test Person")
    git(repo, "config", "user.email", "person@example.invalid")
    writeFileSync(join(repo, ".gitignore"), ".claude/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    git(repo, "remote", "add", "origin", remote)
    git(repo, "push", "-q", "-u", "origin", "main")
    const base = git(repo, "rev-parse", "HEAD")
    // Another clone has pushed a note of its own: the remote's notes moved.
    git(w.sandbox.root, "clone", "-q", remote, "other")
    git(other, "notes", "--ref=agent-trace", "add", "-m", '{"from":"another clone"}', base)
    git(other, "push", "-q", "origin", "refs/notes/agent-trace")

    const { session_id } = await createSession(w, { options: { approval_mode: "accept_edits" } })
    explainOnFailure(w, () => session_id)
    const theirs = git(remote, "rev-parse", "refs/notes/agent-trace")
    await promptAllowing(w, session_id, "commit, dry-run the push, push the tag")
    const pushed = git(repo, "rev-parse", "HEAD")
    await noteOn(repo, pushed)
    // The tracker pushes after it writes the note: give a wrong push the time to land.
    await sleep(1_000)
    // A dry run and a tag-only push carry no notes: the remote's are still the other clone's.
    expect(git(remote, "rev-parse", "refs/notes/agent-trace")).toBe(theirs)
    expect(git(remote, "tag")).toBe("v1")
    await promptAllowing(w, session_id, "push")
    const remoteNote = (await whenNotesMove(remote, () => noteText(remote, pushed), 45_000)) ?? ""
    const [record] = remoteNote
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as TraceRecord)
    expect(checkRecord(record).ok).toBe(true)
    expect(record?.vcs?.revision).toBe(pushed)
    // The other clone's note survived the merge, and the local and remote notes agree.
    expect(git(remote, "notes", "--ref=agent-trace", "show", base)).toBe('{"from":"another clone"}')
    expect(git(repo, "rev-parse", "refs/notes/agent-trace")).toBe(
      git(remote, "rev-parse", "refs/notes/agent-trace"),
    )
    expect(git(repo, "for-each-ref", "refs/notes/")).not.toMatch(/incoming/)
  }, 120_000)
})

const ALPHA = "export function alpha() {\n  return 'alpha'\n}\n"
const PERSON = "// a note the person typed\nexport const person = true\n"
const EDITED = "second line, edited by the agent\nthird line, added by the agent"
const HELPER = "export const helper = () => 'help'\nexport const helped = true\n"
const SECOND = "export const second = 2\n"
const LATER = "export const later = 'written before the resume'\nexport const committed = 'after it'\n"

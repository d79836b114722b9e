/**
 * The report command over a real repository whose notes hold records from two
 * tools (and one that breaks the schema): the counts per commit and file, the
 * tools, models and links, exit codes, and that it writes nothing.
 */
import { afterEach, describe, expect, it } from "vitest"
import { type GitWorld, git, makeGitWorld } from "../testing/git-fixture.ts"
import { traceCommand } from "./trace-report.ts"

let world: GitWorld | undefined
afterEach(() => {
  world?.cleanup()
  world = undefined
})

const record = (
  sha: string,
  tool: { name: string; version: string },
  path: string,
  model: string,
  url: string,
  ranges: Array<[number, number]>,
) =>
  JSON.stringify({
    version: "0.1",
    id: crypto.randomUUID(),
    timestamp: "2026-12-01T09:00:00Z",
    vcs: { type: "git", revision: sha },
    tool,
    files: [
      {
        path,
        conversations: [
          {
            url,
            contributor: { type: "ai", model_id: model },
            ranges: ranges.map(([start_line, end_line]) => ({ start_line, end_line })),
          },
        ],
      },
    ],
  })

const note = (repo: string, sha: string, line: string) =>
  git(repo, "notes", "--ref=agent-trace", "append", "-m", line, sha)

describe("npm run trace -- report", () => {
  it("counts the AI lines of records from two tools against the added lines, per commit and file", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const base = git(repo, "rev-parse", "HEAD")
    world.write(repo, "a.ts", "1\n2\n3\n4\n5\n6\n")
    world.write(repo, "b.ts", "x\ny\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "two tools")
    const first = git(repo, "rev-parse", "HEAD")
    note(
      repo,
      first,
      record(
        first,
        { name: "claude-code", version: "2.1.332" },
        "a.ts",
        "anthropic/claude-opus-5-5",
        "cvg://session/s1",
        [[1, 3]],
      ),
    )
    // Another tool's record, overlapping by one line (counted once), then a line that is not a record.
    note(
      repo,
      first,
      record(
        first,
        { name: "cursor", version: "2.4.0" },
        "a.ts",
        "openai/gpt-4o",
        "https://example.invalid/c/9",
        [[3, 4]],
      ),
    )
    note(repo, first, "not json")
    world.write(repo, "c.ts", "only the person\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "by hand")
    const refs = git(repo, "for-each-ref")

    const outcome = await traceCommand(["report", "--base", base, "--repo", repo])
    expect(outcome.code).toBe(0)
    const out = outcome.stdout
    expect(out).toContain(`# Agent Trace: ${base}..HEAD`)
    expect(out).toContain("2 commits, 1 with records; 4 of 9 added lines written by AI (44%).")
    expect(out).toContain("1 record(s) refused by the schema check.")
    expect(out).toContain(
      "| a.ts | 4 / 6 | claude-code 2.1.332, cursor 2.4.0 | anthropic/claude-opus-5-5, openai/gpt-4o | cvg://session/s1 https://example.invalid/c/9 |",
    )
    expect(out).toContain("| b.ts | 0 / 2 | — | — | — |")
    expect(out).toMatch(/## \w{7} by hand\n\nNo Agent Trace record\./)
    // It reads only.
    expect(git(repo, "for-each-ref")).toBe(refs)
  })
  it("refuses a record of another commit, and one that breaks the schema", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const base = git(repo, "rev-parse", "HEAD")
    world.write(repo, "a.ts", "1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    const sha = git(repo, "rev-parse", "HEAD")
    note(
      repo,
      sha,
      record(base, { name: "claude-code", version: "2.1.332" }, "a.ts", "m", "cvg://session/s", [[1, 1]]),
    )
    note(repo, sha, JSON.stringify({ version: "0.1.0", files: [] }))
    const outcome = await traceCommand(["report", "--base", base, "--repo", repo])
    expect(outcome.stdout).toContain("No valid record (2 refused).")
  })
  it("exits 0 with a short notice when git cannot read the range, 2 on a usage error", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const unreadable = await traceCommand(["report", "--base", "no-such-rev", "--repo", repo])
    expect(unreadable).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^Agent Trace: no report, git cannot read no-such-rev\.\.HEAD/),
    })
    expect((await traceCommand(["report", "--base", "HEAD", "--repo", world.root])).code).toBe(0)
    for (const argv of [
      [],
      ["report"],
      ["report", "--base"],
      ["show", "--base", "HEAD"],
      ["report", "--base", "HEAD", "--bogus"],
    ])
      expect((await traceCommand(argv, repo)).code, argv.join(" ")).toBe(2)
  })
})

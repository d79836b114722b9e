/**
 * The plugin's script as the CLI runs it (the committed bundle, plain `node`,
 * the payload on stdin): a hook call exits 0 and prints nothing whatever it
 * is given, and says why on stderr only when CLAUDE_AGENT_TRACE_DEBUG=1; the
 * same script's `report`; and hook calls of one session that overlap (a
 * background subagent beside the main agent) both keep what they wrote.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type GitWorld, git, makeGitWorld } from "../testing/git-fixture.ts"
import { BUNDLE, root } from "../../scripts/build-trace-plugin.ts"
import { hookCall } from "./hook-call.ts"
import { storageFile } from "./hook-broker.ts"

let world: GitWorld | undefined
afterEach(() => {
  world?.cleanup()
  world = undefined
})

const runScript = (args: string[], stdin: string, env: Record<string, string>, cwd = root) =>
  spawnSync(process.execPath, [join(root, BUNDLE), ...args], {
    input: stdin,
    env: { PATH: process.env.PATH ?? "", HOME: world?.root ?? "/nonexistent", ...env },
    cwd,
    encoding: "utf8",
    timeout: 60_000,
  })

describe("the plugin's script, run as a hook", () => {
  it("exits 0 and prints nothing for bad input, a missing data folder or a failing git; debug says why", () => {
    world = makeGitWorld()
    const data = join(world.root, "data")
    const payload = JSON.stringify({
      session_id: "s1",
      hook_event_name: "PostToolUse",
      tool_name: "Write",
      tool_input: { file_path: join(world.root, "a.txt"), content: "x\n" },
      tool_response: { type: "create", filePath: join(world.root, "a.txt"), content: "x\n" },
    })
    const cases: Array<[string, string, Record<string, string>]> = [
      ["not json", "{", { CLAUDE_PLUGIN_DATA: data }],
      ["no data folder", payload, {}],
      ["no git on PATH", payload, { CLAUDE_PLUGIN_DATA: data, PATH: "/nonexistent" }],
      ["empty stdin", "", { CLAUDE_PLUGIN_DATA: data }],
    ]
    for (const [name, stdin, env] of cases) {
      const quiet = runScript(["hook"], stdin, env)
      expect([quiet.status, quiet.stdout, quiet.stderr], name).toEqual([0, "", ""])
      const told = runScript(["hook"], stdin, { ...env, CLAUDE_AGENT_TRACE_DEBUG: "1" })
      expect([told.status, told.stdout], name).toEqual([0, ""])
      expect(told.stderr, name).toMatch(/agent-trace/)
    }
  })

  it("reports a range with `report`, and answers a usage error with 2", () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const base = git(repo, "rev-parse", "HEAD")
    world.write(repo, "b.txt", "by hand\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "by hand")
    const report = runScript(["report", "--base", base, "--repo", repo], "", {})
    expect(report.status).toBe(0)
    expect(report.stdout).toContain("1 commits, 0 with records")
    expect(report.stdout).toContain("No Agent Trace record.")
    const wrong = runScript(["report"], "", {})
    expect(wrong.status).toBe(2)
    expect(wrong.stderr).toMatch(/^usage: node agent-trace\.mjs report --base/)
  })
})

describe("hook calls of one session that overlap", () => {
  it("both keep what they wrote (one holds the session's lock, the other waits)", async () => {
    world = makeGitWorld()
    const repo = world.repo("repo")
    const data = join(world.root, "data")
    const env = { PATH: process.env.PATH ?? "", HOME: world.root, CLAUDE_PLUGIN_DATA: data }
    const edit = (name: string, agent?: string) => {
      const file = world!.write(repo, name, `written to ${name}\n`)
      return JSON.stringify({
        session_id: "s1",
        hook_event_name: "PostToolUse",
        ...(agent ? { agent_id: "a1", agent_type: agent } : {}),
        tool_name: "Write",
        tool_input: { file_path: file, content: `written to ${name}\n` },
        tool_response: { type: "create", filePath: file, content: `written to ${name}\n` },
      })
    }
    await Promise.all([
      hookCall(edit("main.txt"), env),
      hookCall(edit("sub.txt", "Explore"), env),
      hookCall(edit("more.txt"), env),
    ])
    const state = JSON.parse(readFileSync(storageFile(data, "trace:s1"), "utf8"))
    expect(state.prints[repo]).toEqual({
      "main.txt": { "written to main.txt": "main" },
      "sub.txt": { "written to sub.txt": "Explore" },
      "more.txt": { "written to more.txt": "main" },
    })
  })
})

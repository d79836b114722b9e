/**
 * `npm run bench -- trace-hook [--node <path>]`: what the Claude Code plugin's
 * hooks cost a session, run as the CLI runs them (the committed script, plain
 * `node`, the payload on stdin, a data folder on disk), in wall time against
 * the floor of what each cannot skip. Interleaved rounds, medians.
 *
 * 1. An ordinary edit: PostToolUse of a Write of a 40-line file, early in a
 *    session (one file written before) and well under way (200 files, about
 *    7,000 lines known: the state every call reads and writes grows with
 *    them). Floor: starting `node` at all (`node -e 0`).
 * 2. A 20,000-line commit: PostToolUse of the Bash call after a commit of 20
 *    files × 1,000 lines the agent wrote (patch read, lines attributed, record
 *    built, checked, and written as a note). Floor: `node -e 0` plus
 *    `git show` of the same commit's patch.
 *
 * The early edit is also timed with Node's compile cache off, which the
 * script's entry turns on in the data folder (Node 22.1+; Node 20 has none,
 * so there the two are the same). `--node <path>` runs the hooks with
 * another Node (e.g. 24, from scripts/current-node.mjs); the default is the
 * one running this.
 */
import { spawnSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { git, makeGitWorld } from "../host/testing/git-fixture.ts"
import { storageFile } from "../host/trace/hook-broker.ts"
import { BUNDLE, BUNDLE_MAIN, root } from "../scripts/build-trace-plugin.ts"

const EDIT_ROUNDS = 11
const COMMIT_ROUNDS = 7
const FILES = 20
const LINES = 1_000
const SESSION = "bench-session"
/** Node 22.1+ turns the compile cache (host/trace/hook-entry.ts) off with this; Node 20 has none. */
const NO_CACHE = { NODE_DISABLE_COMPILE_CACHE: "1" }

const args = process.argv.slice(2)
const node = args.includes("--node") ? args[args.indexOf("--node") + 1]! : process.execPath
const script = join(root, BUNDLE)

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0
const wallMs = (run: () => void) => {
  const start = performance.now()
  run()
  return performance.now() - start
}

const world = makeGitWorld("cvg-trace-hook-bench-")
const repo = world.repo("repo")
const data = join(world.root, "data")
const env = { PATH: process.env.PATH ?? "", HOME: world.root, CLAUDE_PLUGIN_DATA: data }
const hook = (payload: object, extra: Record<string, string> = {}) => {
  const ran = spawnSync(node, [script, "hook"], {
    input: JSON.stringify(payload),
    env: { ...env, ...extra },
    encoding: "utf8",
  })
  if (ran.status !== 0 || ran.stdout !== "") throw new Error(`the hook failed: ${ran.status} ${ran.stdout}`)
}
const bareNode = () => spawnSync(node, ["-e", "0"], { env })
const base = { session_id: SESSION, hook_event_name: "PostToolUse", cwd: repo }
const write = (path: string, content: string) => {
  const file = world.write(repo, path, content)
  return {
    ...base,
    tool_name: "Write",
    tool_input: { file_path: file, content },
    tool_response: { type: "create", filePath: file, content, structuredPatch: [] },
  }
}
const lines = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) =>
    i % 10 === 9 ? "}" : `  const ${prefix}_${i} = compute(${i})`,
  ).join("\n")

try {
  // Two sessions in the same repository: one with one file written so far, one well under way
  // (200 files of 40 lines, their fingerprints in its state).
  hook({ ...base, session_id: "small", hook_event_name: "UserPromptSubmit", prompt: "go" })
  hook({ ...write("src/first.ts", lines("first", 40)), session_id: "small" })
  hook({ ...base, hook_event_name: "UserPromptSubmit", prompt: "go" })
  const state = storageFile(data, `trace:${SESSION}`)
  hook(write("src/seed.ts", lines("seed", 40)))
  const seeded = JSON.parse(readFileSync(state, "utf8"))
  for (let f = 0; f < 200; f++)
    seeded.prints[repo][`src/earlier${f}.ts`] = Object.fromEntries(
      lines(`earlier${f}`, 40)
        .split("\n")
        .map((l) => [l.trim(), "main"]),
    )
  writeFileSync(state, JSON.stringify(seeded))
  const known = Object.values(seeded.prints[repo] as Record<string, object>).reduce(
    (n: number, file) => n + Object.keys(file).length,
    0,
  )

  // 1. An ordinary edit, in each session.
  const small: number[] = []
  const uncached: number[] = []
  const large: number[] = []
  const starts: number[] = []
  for (let round = 0; round < EDIT_ROUNDS; round++) {
    small.push(
      wallMs(() => hook({ ...write(`src/s${round}.ts`, lines(`s${round}`, 40)), session_id: "small" })),
    )
    uncached.push(
      wallMs(() =>
        hook({ ...write(`src/u${round}.ts`, lines(`u${round}`, 40)), session_id: "small" }, NO_CACHE),
      ),
    )
    large.push(wallMs(() => hook(write(`src/edit${round}.ts`, lines(`edit${round}`, 40)))))
    starts.push(wallMs(bareNode))
  }

  // 2. A 20,000-line commit of the agent's files.
  for (let f = 0; f < FILES; f++) hook(write(`big/file${f}.ts`, lines(`big${f}`, LINES)))
  const parent = git(repo, "rev-parse", "HEAD")
  git(repo, "add", "-A")
  git(repo, "commit", "-q", "-m", "a large commit")
  const sha = git(repo, "rev-parse", "HEAD")
  const bash = {
    ...base,
    tool_name: "Bash",
    tool_input: { command: "git commit -am big" },
    tool_response: {},
  }
  const commits: number[] = []
  const floors: number[] = []
  for (let round = 0; round < COMMIT_ROUNDS; round++) {
    // Each round notes the same commit afresh: its note removed, HEAD last seen set back to its parent.
    spawnSync("git", ["-C", repo, "notes", "--ref=agent-trace", "remove", "--ignore-missing", sha])
    const before = JSON.parse(readFileSync(state, "utf8"))
    before.heads[repo] = parent
    writeFileSync(state, JSON.stringify(before))
    commits.push(wallMs(() => hook(bash)))
    floors.push(
      wallMs(() => {
        bareNode()
        spawnSync("git", ["-C", repo, "show", "--format=", "--unified=0", "--no-color", sha], {
          encoding: "utf8",
        })
      }),
    )
  }
  const record = JSON.parse(git(repo, "notes", "--ref=agent-trace", "show", sha))
  const ranges = record.files.reduce(
    (n: number, f: { conversations: Array<{ ranges: unknown[] }> }) => n + f.conversations[0]!.ranges.length,
    0,
  )

  const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim()
  const start = median(starts)
  const edit = median(small)
  const edited = median(large)
  const commit = median(commits)
  const floor = median(floors)
  const bytes = readFileSync(script).length + readFileSync(join(root, BUNDLE_MAIN)).length
  console.log(`node ${version}, the committed script (${bytes} bytes)`)
  console.log(`floor, node -e 0: ${start.toFixed(0)} ms wall (median of ${EDIT_ROUNDS})`)
  console.log(
    `ordinary edit (Write of 40 lines), early in a session: ${edit.toFixed(0)} ms wall, ${(edit / start).toFixed(2)}x node's start`,
  )
  console.log(`  rounds: ${small.map((m) => m.toFixed(0)).join(" ")}`)
  const bare = median(uncached)
  console.log(
    `the same, compile cache off: ${bare.toFixed(0)} ms wall, ${(bare / start).toFixed(2)}x node's start`,
  )
  console.log(`  rounds: ${uncached.map((m) => m.toFixed(0)).join(" ")}`)
  console.log(
    `the same, ${known} lines known (200 files): ${edited.toFixed(0)} ms wall, ${(edited / start).toFixed(2)}x node's start`,
  )
  console.log(`  rounds: ${large.map((m) => m.toFixed(0)).join(" ")}`)
  console.log(
    `${FILES * LINES}-line commit (${FILES} files, ${record.files.length} in the record, ${ranges} ranges): ${commit.toFixed(0)} ms wall (median of ${COMMIT_ROUNDS})`,
  )
  console.log(
    `  floor, node -e 0 + git show of the patch: ${floor.toFixed(0)} ms; ratio ${(commit / floor).toFixed(2)}x`,
  )
  console.log(`  rounds: ${commits.map((m) => m.toFixed(0)).join(" ")}`)
  console.log(
    `trace-hook: an edit's hook ${(edit / start).toFixed(2)}x node's start (${edit.toFixed(0)} vs ${start.toFixed(0)} ms; ${edited.toFixed(0)} ms with ${known} lines known); a ${FILES * LINES}-line commit's hook ${(commit / floor).toFixed(2)}x its floor (${commit.toFixed(0)} vs ${floor.toFixed(0)} ms), node ${version}`,
  )
} finally {
  world.cleanup()
}

/**
 * The git calls Agent Trace needs, over one runner: the broker's Process
 * service inside the plugin (`brokerGit`), `child_process` in the report
 * command (host/trace/trace-report.ts). The plugin writes no file itself: notes go
 * in through `git notes … -F -` with the record on stdin.
 *
 * Rules: every call names its repository with `-C` and starts in HOME (the
 * broker's default folder); each call's words are one of the manifest's
 * `process.args.git` patterns, so a change here needs its pattern there; no
 * variable is set (the broker refuses every `GIT_*`); a failed call is a
 * value (`code`, `stderr`), never a thrown error.
 */
import { Effect } from "effect"
import { Process } from "../sdk/plugin-api.ts"

export const NOTES_REF = "refs/notes/agent-trace"
/** The short name `git notes --ref` takes. */
export const NOTES_NAME = "agent-trace"

export interface GitResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export interface GitOptions {
  readonly stdin?: string
  readonly timeoutMs?: number
}

/** Run `git -C <repo> <args…>`; a failure to run at all is a result with code null. */
export type Git = (
  repo: string,
  args: ReadonlyArray<string>,
  options?: GitOptions,
) => Effect.Effect<GitResult>

const DEFAULT_TIMEOUT_MS = 15_000

/** git through the broker (needs `git` in the manifest's process grant). */
export const brokerGit: Effect.Effect<Git, never, Process> = Effect.gen(function* () {
  const process = yield* Process
  return (repo, args, options = {}) =>
    process
      .run("git", ["-C", repo, ...args], {
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
        ...(options.stdin === undefined ? {} : { stdin: options.stdin }),
      })
      .pipe(Effect.catch((error) => Effect.succeed({ code: null, stdout: "", stderr: error.message })))
})

const ok = (result: GitResult) => result.code === 0

/**
 * What a call that never answered tells: nothing (it timed out or could not
 * start, so the broker gave no exit code). Unlike git's own "no", it is not
 * to be remembered as an answer.
 */
export const UNKNOWN = "unknown" as const
export type Unknown = typeof UNKNOWN

/** The repository a folder is in: its root and the folder's path inside it (`""` or `dir/`). */
export const repositoryOf = (git: Git, dir: string) =>
  Effect.map(git(dir, ["rev-parse", "--show-toplevel", "--show-prefix"]), (result) => {
    if (result.code === null) return UNKNOWN
    if (!ok(result)) return undefined
    const [root, prefix = ""] = result.stdout.split("\n")
    return root ? { root, prefix } : undefined
  })

/** The commit HEAD names, or undefined (no repository, no commit yet). */
export const headOf = (git: Git, root: string) =>
  Effect.map(git(root, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]), (result) =>
    result.code === null ? UNKNOWN : ok(result) ? result.stdout.trim() || undefined : undefined,
  )

/** Commits reachable from `to` and not from `from`, oldest first (at most `limit`). */
export const commitsBetween = (git: Git, root: string, from: string | undefined, to: string, limit = 100) =>
  Effect.map(
    git(root, ["rev-list", "--reverse", `--max-count=${limit}`, from === undefined ? to : `${from}..${to}`]),
    (result) => (ok(result) ? result.stdout.split("\n").filter((line) => line !== "") : []),
  )

/** A commit's patch with no context lines; a merge against its first parent. */
export const commitPatch = (git: Git, root: string, sha: string) =>
  Effect.map(
    git(root, [
      "-c",
      "core.quotePath=false",
      "show",
      "--format=",
      "--unified=0",
      "--no-color",
      "--no-ext-diff",
      "--no-renames",
      "--diff-merges=first-parent",
      sha,
    ]),
    (result) => (ok(result) ? result.stdout : undefined),
  )

/** Add one record line to a commit's note (kept with any lines other tools wrote there). */
export const appendNote = (git: Git, root: string, sha: string, line: string) =>
  git(root, ["notes", `--ref=${NOTES_NAME}`, "append", "-F", "-", sha], { stdin: `${line}\n` })
